"""Keyword lists of the Adaptive Dual-Path Dispatcher (App. D.1) and the uncertainty markers (App. D.7).

Every list the paper prints is copied verbatim and kept as the default of a frozen dataclass, so a
run's configuration can *extend* a list (``DispatchKeywords.extended``) without editing code and
without silently dropping a paper keyword. Lists the paper describes but does not print (the
question-type cues of Tables 4–6, the two term families of the Condition-3 pair rule) are our own
choices; they are marked as such below and are equally extendable.

Matching rules (see ``matcher.py``): case-insensitive; ASCII keywords match whole words only
(``scale`` does not fire on ``escalate``, ``count`` not on ``account``, ``meter`` not on
``parameter``), with an optional plural ``s``/``es`` on the last word (``gauges``, ``meters``);
keywords containing CJK characters match as substrings because Chinese has no word boundaries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ledgermind.errors import ConfigError

# --- App. D.1, Condition 1: precise perception (verbatim) ---------------------------------------
PRECISE_PERCEPTION = (
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

# --- App. D.1, Condition 2: visual + external knowledge fusion (verbatim) -------------------------
KNOWLEDGE_FUSION = (
    "this company",
    "this game",
    "this film",
    "this person",
    "this artist",
    "this album",
    "this university",
    "according to",
    "what year",
    "was the first",
    "which country",
    "founded",
    "how many students",
)
# The paper prints the Chinese markers in pinyin; real questions use characters, so both are kept.
KNOWLEDGE_FUSION_PINYIN = ("na bu", "shenme pinpai", "shi shei", "shenme donghua", "shenme zhiwu")
KNOWLEDGE_FUSION_HANZI = ("哪部", "什么品牌", "是谁", "什么动画", "什么植物")

# --- App. D.1, Condition 3: verification / multi-entity reasoning (verbatim) ----------------------
VERIFICATION = ("verify", "identify the artifact", "historical event", "compare", "spot the difference")
# Condition 3 also fires on "both a visual identification term and an external fact-check term";
# the paper names the rule but not the terms. Ours (conservative, to keep the simple path usable):
VISUAL_IDENTIFICATION = (
    "identify",
    "recognize",
    "recognise",
    "what is shown",
    "shown in the image",
    "depicted",
    "pictured",
    "in the picture",
    "in the photo",
    "in this image",
    "what is this",
    "who is this",
)
FACT_CHECK = (
    "is it true",
    "true or false",
    "fact",
    "historically",
    "when was",
    "who invented",
    "who built",
    "who designed",
    "who painted",
    "who wrote",
    "invented",
    "discovered",
    "built in",
)

# --- App. D.1, deep-knowledge sub-keywords (verbatim): trigger a second search round -------------
DEEP_KNOWLEDGE = ("according to", "based on", "historically", "originally")

# --- App. D.7, uncertainty markers U that trigger visual fallback (verbatim) -----------------------
UNCERTAINTY_ENGLISH = ("cannot determine", "cannot tell", "unable", "not sure", "unclear")
UNCERTAINTY_SYSTEM = ("api_error", "unknown", "need_more")

# --- Question-type cues (Tables 4–6 name the types, not their cues: our choices) -------------------
READ_CUES = (
    "temperature",
    "thermometer",
    "reading",
    "measurement",
    "gauge",
    "scale",
    "meter",
    "read",
    "what value",
    "what is the value",
    "dial",
    "needle",
    "pointer",
    "ruler",
)
LOCATION_CUES = (
    "locate",
    "identify the region",
    "where is",
    "where was",
    "where are",
    "which city",
    "what city",
    "which place",
    "what place",
    "which building",
    "what building",
    "landmark",
    "location",
    "哪里",
    "在哪",
)
DIFF_CUES = (
    "spot the difference",
    "find the difference",
    "differences between",
    "what is different",
    "what's different",
    "找不同",
    "不同之处",
)
CHAR_COUNT_CUES = (
    "how many characters",
    "how many letters",
    "how many words",
    "count the characters",
    "count the letters",
    "number of characters",
    "number of letters",
    "how many times does the letter",
    "几个字",
    "多少个字",
)
COUNT_CUES = ("how many", "count", "number of", "多少个", "几个")
COMPARE_CUES = (
    "compare",
    "comparison",
    "which is larger",
    "which is greater",
    "which is bigger",
    "which is smaller",
    "which is higher",
    "which is lower",
    "which one is larger",
    "which one is greater",
    "比较",
)


def _merge(base: tuple[str, ...], extra: Iterable[str]) -> tuple[str, ...]:
    """Append ``extra`` to ``base`` (order kept, duplicates removed) — extension never drops a default."""
    out = list(base)
    for kw in extra:
        if not isinstance(kw, str) or not kw.strip():
            raise ConfigError(f"dispatcher keyword must be a non-empty string, got {kw!r}")
        if kw not in out:
            out.append(kw)
    return tuple(out)


@dataclass(frozen=True)
class DispatchKeywords:
    """All keyword lists the dispatcher and the visual-fallback defense read (paper defaults)."""

    precise_perception: tuple[str, ...] = PRECISE_PERCEPTION
    knowledge_fusion: tuple[str, ...] = KNOWLEDGE_FUSION
    knowledge_fusion_pinyin: tuple[str, ...] = KNOWLEDGE_FUSION_PINYIN
    knowledge_fusion_hanzi: tuple[str, ...] = KNOWLEDGE_FUSION_HANZI
    verification: tuple[str, ...] = VERIFICATION
    visual_identification: tuple[str, ...] = VISUAL_IDENTIFICATION
    fact_check: tuple[str, ...] = FACT_CHECK
    deep_knowledge: tuple[str, ...] = DEEP_KNOWLEDGE
    uncertainty_english: tuple[str, ...] = UNCERTAINTY_ENGLISH
    uncertainty_system: tuple[str, ...] = UNCERTAINTY_SYSTEM
    read: tuple[str, ...] = READ_CUES
    location: tuple[str, ...] = LOCATION_CUES
    diff: tuple[str, ...] = DIFF_CUES
    char_count: tuple[str, ...] = CHAR_COUNT_CUES
    count: tuple[str, ...] = COUNT_CUES
    compare: tuple[str, ...] = COMPARE_CUES

    @property
    def knowledge_all(self) -> tuple[str, ...]:
        """Condition 2 in every script: English, pinyin and Chinese characters."""
        return self.knowledge_fusion + self.knowledge_fusion_pinyin + self.knowledge_fusion_hanzi

    @property
    def uncertainty_markers(self) -> tuple[str, ...]:
        """The set U of App. D.7."""
        return self.uncertainty_english + self.uncertainty_system

    def extended(self, extra: Mapping[str, Iterable[str]] | None) -> DispatchKeywords:
        """A copy with each named list extended by ``extra[name]`` (e.g. from a Hydra node)."""
        if not extra:
            return self
        known = {f.name for f in fields(self)}
        unknown = sorted(set(extra) - known)
        if unknown:
            raise ConfigError(f"unknown dispatcher keyword list(s) {unknown}; known: {sorted(known)}")
        changes: dict[str, Any] = {}
        for name, words in extra.items():
            if isinstance(words, str):
                raise ConfigError(f"dispatcher keyword list {name!r} must be a list of strings, got a string")
            changes[name] = _merge(getattr(self, name), words)
        return replace(self, **changes)


DEFAULT_KEYWORDS = DispatchKeywords()
