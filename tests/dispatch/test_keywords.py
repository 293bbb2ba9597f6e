"""The paper's keyword lists are present verbatim (App. D.1, D.7)."""

from __future__ import annotations

from ledgermind.dispatch.keywords import DEFAULT_KEYWORDS, find_keywords, has_uncertainty_marker


def test_paper_lists_verbatim() -> None:
    kw = DEFAULT_KEYWORDS
    assert kw.precise_perception == (
        "how many",
        "count",
        "temperature",
        "thermometer",
        "reading",
        "measurement",
        "gauge",
        "scale",
        "meter",
        "locate",
        "identify the region",
    )
    assert kw.knowledge_fusion[-1] == "how many students" and len(kw.knowledge_fusion) == 13
    assert kw.knowledge_fusion_pinyin == (
        "na bu",
        "shenme pinpai",
        "shi shei",
        "shenme donghua",
        "shenme zhiwu",
    )
    assert kw.verification == (
        "verify",
        "identify the artifact",
        "historical event",
        "compare",
        "spot the difference",
    )
    assert kw.deep_knowledge == ("according to", "based on", "historically", "originally")
    assert set(kw.uncertainty_markers) == {
        "cannot determine",
        "cannot tell",
        "unable",
        "not sure",
        "unclear",
        "api_error",
        "unknown",
        "need_more",
    }


def test_uncertainty_markers() -> None:
    assert find_keywords("I cannot determine the value.", DEFAULT_KEYWORDS.uncertainty_markers) == (
        "cannot determine",
    )
    assert has_uncertainty_marker("answer: unknown")
    assert has_uncertainty_marker("NEED_MORE evidence")
    assert has_uncertainty_marker("api_error: timeout")
    assert not has_uncertainty_marker("The well-known answer is B.")  # "unknown" not inside another word
    assert not has_uncertainty_marker("The answer is 36.7 °C.")
    assert not has_uncertainty_marker("")
