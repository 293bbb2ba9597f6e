"""Option labels in a claim are references to the question's option list, not evidence to match.

Why: NCC treats option labels as exact-match numbers (Eq. 5, App. C), which is right when the
evidence itself carries labels (a page that prints "(C) 42"). But a judgment such as "the answer
is B" is checked against its cited tool facts, and no OCR line or crop read says "B": the label
would fail NCC by construction and demote every judgment that names its option by letter. What
such a claim asserts is the option's *text*, so grounding sees the text in place of the label
(and just drops the label when the text follows it anyway, as in "B. q=0.48"). Only the view the
cascade checks changes; the claim keeps its words. A label outside the option list stays, so NCC
still catches "the answer is H" on a four-option item.
"""

from __future__ import annotations

from collections.abc import Sequence

from ledgermind.grounding.numbers import NumKind, extract_numbers, normalise_chars


def resolve_option_refs(text: str, options: Sequence[str] | None) -> str:
    """``text`` with every option label that names one of ``options`` replaced by that option's text."""
    if not options or not text:
        return text
    norm = normalise_chars(text)
    refs = [(n, n.label) for n in extract_numbers(norm) if n.kind is NumKind.OPTION_LABEL and n.label]
    out, pos = [], 0
    for n, label in refs:
        idx = ord(label) - ord("A")
        if not 0 <= idx < len(options) or not str(options[idx]).strip():
            continue
        option = " ".join(str(options[idx]).split())
        follows = " ".join(norm[n.end : n.end + len(option) + 8].split()).lstrip(".:) ").casefold()
        out.append(norm[pos : n.start])
        pos = n.end
        if follows.startswith(option.casefold()):  # "B. q=0.48": the label and its punctuation go
            while pos < len(norm) and norm[pos] in ".:) \t":
                pos += 1
        else:
            out.append(option)
    if pos == 0:
        return text
    out.append(norm[pos:])
    return " ".join("".join(out).split())
