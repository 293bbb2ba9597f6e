"""Content words of a question (Tok(·) of App. C without the set), in their original order.

It lives here, below the pipeline, because the search query (App. D.6), RETRY's query expansion
(App. E.2) and the dispatcher's cues all read the same words, and the pipeline's modules must
not import one another in a circle to get them.
"""

from __future__ import annotations

import re

from ledgermind.grounding.tokens import canonical_token, content_tokens


def content_words(text: str) -> list[str]:
    """Content words of a question in their original order (Tok(·) without the set)."""
    text = re.sub(r"<image\s*\d+>", " ", text, flags=re.IGNORECASE)
    keep = content_tokens(text)
    return list(
        dict.fromkeys(
            w for w in re.findall(r"[\w.-]+", text) if canonical_token(w.casefold().strip(".-")) in keep
        )
    )
