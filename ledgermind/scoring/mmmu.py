"""The official MMMU-Pro multiple-choice answer parser, reimplemented for parity.

Behaviour of ``parse_multi_choice_response`` in ``MMMU-Benchmark/MMMU`` ``mmmu-pro/evaluate.py``:

1. take the text after the *last* ``"Answer:"``; if exactly one option letter occurs in it
   (plain substring test, case-sensitive, as upstream), that letter is the prediction;
2. otherwise strip ``, . ! ? ; : '`` from both ends *one character class at a time, in that
   order* (upstream's loop of ``str.strip(char)``: ``"B,."`` loses the ``.`` but keeps the ``,``,
   since the ``,`` pass ran first), pad with spaces, and collect candidates by
   the MMMU heuristics in order, each tried only when the previous found nothing:
   ``(X)`` → ``"X "`` → ``"X."`` → (replies longer than 5 words) the option *text* appearing;
3. with several candidates the one occurring *last* wins (``rfind``); candidates at the same
   position (both absent from the probe, or one option text a prefix of another) → the earliest in
   option order (upstream's ``np.argmax`` takes the first maximum);
4. no candidate: upstream picks a random letter. Here the reply is **unparsed** (scored wrong
   and counted separately), unless ``random_fallback`` is given — a seeded ``random.Random`` —
   for protocol parity with published numbers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_STRIP = ",.!?;:'"


@dataclass(frozen=True)
class ParsedChoice:
    letter: str | None  # None: unparsable (no fallback asked for)
    # "answer_tag" | "bracket" | "letter_space" | "letter_dot" | "option_text" | "random" | "none"
    method: str


def choice_info(options: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """``index2ans`` and ``all_choices`` as upstream's ``get_multi_choice_info``."""
    letters = [chr(ord("A") + i) for i in range(len(options))]
    return dict(zip(letters, map(str, options), strict=True)), letters


def parse_multi_choice_response(
    response: str,
    all_choices: Sequence[str],
    index2ans: dict[str, str],
    random_fallback: random.Random | None = None,
) -> ParsedChoice:
    """Parse a model reply into one option letter (see module docstring)."""
    response = response if isinstance(response, str) else ""
    pos = response.rfind("Answer:")
    if pos != -1:
        tail = response[pos + len("Answer:") :].strip()
        matches = [c for c in all_choices if c in tail]
        if len(matches) == 1:
            return ParsedChoice(matches[0], "answer_tag")

    padded = " " + _strip_each(response) + " "
    for method, template in (("bracket", "({})"), ("letter_space", "{} "), ("letter_dot", "{}.")):
        cands = [c for c in all_choices if template.format(c) in padded]
        if cands:
            if len(cands) == 1:
                return ParsedChoice(cands[0], method)
            # upstream locates bracket candidates by "(X)", the two letter forms by " X "
            probe = "({})" if method == "bracket" else " {} "
            return ParsedChoice(_last(cands, lambda c, probe=probe: padded.rfind(probe.format(c))), method)

    if len(padded.split()) > 5:
        low = padded.lower()
        cands = [c for c, ans in index2ans.items() if ans.lower() in low]
        if cands:
            return ParsedChoice(_last(cands, lambda c: low.rfind(index2ans[c].lower())), "option_text")

    if random_fallback is not None and all_choices:
        return ParsedChoice(random_fallback.choice(list(all_choices)), "random")
    return ParsedChoice(None, "none")


def _strip_each(response: str) -> str:
    """Upstream's ``for char in [...]: response = response.strip(char)``.

    WHY not ``response.strip(_STRIP)``: the single pass strips every listed character from both
    ends until none is left, so ``"B,."`` → ``"B"``; upstream strips one class at a time and
    ``"B,."`` → ``"B,"`` (the ``,`` pass is already over when the ``.`` goes). Parity is promised.
    """
    for char in _STRIP:
        response = response.strip(char)
    return response


def _last(cands: list[str], position: Callable[..., int]) -> str:
    """The candidate whose position is largest; ties → the earliest in option order (``max``, like
    upstream's ``np.argmax``, keeps the first maximum)."""
    return max(cands, key=position)
