"""AUROC / bootstrap / hand-label agreement of the audit diagnostics."""

from __future__ import annotations

import pytest

from ledgermind.srfa.diagnostics import (
    HandLabel,
    auroc,
    bootstrap_auroc,
    correctness_table,
    hand_label_agreement,
)
from ledgermind.srfa.protocol import AtomicClaim, SrfaRecord


def test_auroc_known_values() -> None:
    assert auroc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert auroc([1, 0, 1, 0], [True, True, False, False]) == 0.5  # ties count one half
    assert auroc([0.1, 0.9], [True, False]) == 0.0
    assert auroc([1, 1], [True, True]) is None
    lo, hi = bootstrap_auroc([1, 1, 1, 0, 0, 1, 0, 0], [True, True, True, True, False, False, False, False])
    assert lo is not None and hi is not None and lo <= 0.75 <= hi


def _audit(item_id: str, score: float, grounded: list[bool]) -> SrfaRecord:
    claims = [AtomicClaim("SC", f"s{i}", g) for i, g in enumerate(grounded[:-1])]
    claims.append(AtomicClaim("DC", "Answer: A", grounded[-1], answer="A"))
    return SrfaRecord(item_id, "ledger", claims=claims, score=score)


def test_correctness_table_and_hand_label_agreement() -> None:
    audits = [
        _audit("a", 1.0, [True, True]),
        _audit("b", 0.0, [True, False]),
        _audit("c", 1.0, [False, False]),
    ]
    t = correctness_table(audits)
    assert (t["n_right"], t["n_wrong"], t["GDR_right"], t["GDR_wrong"]) == (2, 1, 0.5, 0.0)
    assert t["AUROC"] == 0.75
    labels = [
        HandLabel("s", "a", 1, "s0", "supported", "r"),
        HandLabel("s", "b", 2, "Answer: A", "supported", "r"),
        HandLabel("s", "c", 1, "other text", "supported", "r"),
    ]
    ag = hand_label_agreement({a.item_id: a for a in audits}, labels)
    assert ag["n"] == 2 and ag["agreement"] == 0.5 and ag["missing"] == 1


def test_hand_label_matches_a_packed_claim_up_to_whitespace() -> None:
    # labels were written when packed sentences were joined by a space; they now join by a line break
    audit = SrfaRecord(
        "a",
        "ledger",
        claims=[
            AtomicClaim("SC", "It is 3 m.\nSo B holds.", True),
            AtomicClaim("DC", "Answer: B", False, answer="B"),
        ],
        score=1.0,
    )
    labels = [
        HandLabel("s", "a", 1, "It is 3 m. So B holds.", "supported", "r"),
        HandLabel("s", "a", 1, "It is 3 m. So C holds.", "supported", "r"),
    ]
    ag = hand_label_agreement({"a": audit}, labels)
    assert ag["n"] == 1 and ag["agreement"] == 1.0 and ag["missing"] == 1


def test_hand_label_agreement_on_checkable_claims_leaves_the_not_checkable_out() -> None:
    audit = SrfaRecord(
        "a",
        "ledger",
        claims=[
            AtomicClaim("SC", "s0", True, text_label="supported_by_tool_text"),
            AtomicClaim("SC", "s1", False, text_label="not_checkable_from_text"),
            AtomicClaim("DC", "Answer: A", False, answer="A", text_label="unsupported_by_tool_text"),
        ],
        score=1.0,
    )
    labels = [
        HandLabel("s", "a", 1, "s0", "supported", "r"),
        HandLabel("s", "a", 2, "s1", "supported", "r"),
        HandLabel("s", "a", 3, "Answer: A", "not_supported", "r"),
    ]
    ag = hand_label_agreement({"a": audit}, labels)
    assert ag["n"] == 3 and ag["agreement"] == pytest.approx(2 / 3)  # s1 counted ungrounded: a disagreement
    assert ag["checkable"]["n"] == 2 and ag["checkable"]["agreement"] == 1.0


def test_checkable_decisions_keep_items_whose_decision_the_text_can_decide() -> None:
    from ledgermind.srfa.protocol import checkable_decisions

    yes = SrfaRecord(
        "a",
        "ledger",
        claims=[
            AtomicClaim("SC", "s", False, text_label="not_checkable_from_text"),
            AtomicClaim("DC", "d", True, text_label="supported_by_tool_text"),
        ],
        score=1.0,
    )
    no = SrfaRecord(
        "b", "ledger", claims=[AtomicClaim("DC", "d", False, text_label="not_checkable_from_text")], score=0.0
    )
    kept = checkable_decisions([yes, no])
    assert [a.item_id for a in kept] == ["a"] and [c.ctype for c in kept[0].claims] == ["DC"]
