"""The text-only audit's three labels: what OCR and the question can decide, and axes computed
over the claims it can check, under names that are not the runtime's."""

from __future__ import annotations

import pytest

from ledgermind.srfa.protocol import AtomicClaim, SrfaRecord, Support, TextLabel, srfa_metrics, text_label

QUESTION = "Which bone does the arrow in <image 1> point to?"


def test_a_claim_only_the_image_can_decide_is_not_checkable() -> None:
    label = text_label(
        "The arrow points to the zygomatic bone.", Support.UNGROUNDED, ["A", "B", "Fig. 3"], QUESTION
    )
    assert label is TextLabel.NOT_CHECKABLE
    # the same claim where the figure's OCR names the bones: the text speaks to it and does not say it
    ocr = ["zygomatic arch", "maxilla"]
    assert text_label(
        "The arrow points to the sphenoid bone.", Support.UNGROUNDED, ["sphenoid wing"], QUESTION
    ) is (TextLabel.UNSUPPORTED)
    assert (
        text_label("The arrow points to the zygomatic bone.", Support.GROUNDED, ocr, QUESTION)
        is TextLabel.SUPPORTED
    )
    assert (
        text_label("It is 616.", Support.COMPUTED, ["308"], "What is twice the value?") is TextLabel.SUPPORTED
    )


def test_a_number_the_ocr_could_read_is_checkable_and_one_without_any_text_is_not() -> None:
    q = "What does the gauge read?"
    assert (
        text_label("The needle is at 45.", Support.UNGROUNDED, ["30", "40", "50"], q) is TextLabel.UNSUPPORTED
    )
    assert text_label("The needle is at 45.", Support.UNGROUNDED, [], q) is TextLabel.NOT_CHECKABLE
    assert (
        text_label("What does the gauge read?", Support.UNGROUNDED, [], q) is TextLabel.UNSUPPORTED
    )  # only the question


def _audit(i: int, labels: list[tuple[str, bool, str]], score: float) -> SrfaRecord:
    claims = [
        AtomicClaim(ctype, f"c{j}", grounded, text_label=t) for j, (ctype, grounded, t) in enumerate(labels)
    ]
    return SrfaRecord(f"q{i}", "ledger", claims=claims, score=score)


def test_axes_over_checkable_claims_with_coverage_and_the_all_claims_figure_apart() -> None:
    s, u, n = TextLabel.SUPPORTED.value, TextLabel.UNSUPPORTED.value, TextLabel.NOT_CHECKABLE.value
    audits = [
        _audit(
            1, [("SC", True, s), ("SC", False, n), ("DC", True, s)], 1.0
        ),  # checkable: 2 of 3, DC supported
        _audit(2, [("SC", False, u), ("DC", False, n)], 0.0),  # DC not checkable: leaves GDR/R4R/WDG
        _audit(3, [("SC", False, n), ("DC", False, u)], 0.0),  # DC checkable and unsupported
    ]
    m = srfa_metrics(audits, gamma=0.5)
    # UCR over checkable claims: q1 0/2, q2 1/1, q3 1/1 → 2/3. GDR over items with a checkable DC: q1 1, q3 0 → 1/2.
    assert m["srfa.UCR_reason"] == pytest.approx(2 / 3) and m["srfa.GDR"] == pytest.approx(0.5)
    assert m["srfa.R4R"] == 1.0 and m["srfa.WDG"] == 0.0  # q1 right with GDR 1 > γ; q3 wrong with GDR 0
    assert m["coverage"] == pytest.approx({"claims": 4 / 7, "SC": 2 / 4, "DC": 2 / 3})
    # all claims (not checkable counted as ungrounded): GDR = mean(1, 0, 0) = 1/3
    assert m["all_claims"]["srfa.GDR"] == pytest.approx(1 / 3)
    assert m["text_labels"]["DC"] == {s: 1, u: 1, n: 1} and m["text_labels"]["SC"] == {s: 1, u: 1, n: 2}
    assert "GDR" not in m and "checkable" in m["protocol"]  # never the runtime's bare name
