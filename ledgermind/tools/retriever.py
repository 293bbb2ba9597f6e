"""Offline retriever: BM25 (``rank_bm25``) over a local JSONL corpus of ``{id?, title, text, url?}``.

The default SEARCH tool when no web-search key is set, so knowledge questions still produce
RETRIEVAL evidence offline. Results are reported as local: ``url = local://corpus/<id>`` and
``meta["source"] = "local"``, so the ledger never passes a corpus passage off as a web page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.errors import DataError, ToolError
from ledgermind.jsonl import bad_line, read_jsonl
from ledgermind.tools.base import Observation, Tool, ToolKind
from ledgermind.tools.search import Component, digest

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str
    url: str | None = None


def load_corpus(path: str | Path) -> list[Passage]:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"retrieval corpus {path} not found")
    passages: list[Passage] = []
    what = "a JSON object with 'text' (a corpus line)"
    for row in read_jsonl(path, torn_tail=False, what=what):
        rec = row.value
        try:
            passages.append(
                Passage(
                    str(rec.get("id", row.line_no)),
                    str(rec.get("title", "")),
                    str(rec["text"]),
                    rec.get("url"),
                )
            )
        except (KeyError, TypeError, AttributeError):
            raise bad_line(path, row.line_no, row.text, what) from None
    if not passages:
        raise DataError(f"retrieval corpus {path} is empty")
    return passages


class LocalRetrieverTool(Tool):
    """``invoke(query=...)`` → the top-k BM25 passages (zero-score passages are not evidence)."""

    name = "local_retriever"
    kind = ToolKind.SEARCH

    def __init__(self, corpus_path: str | Path, top_k: int = 3, max_chars: int = 600) -> None:
        from rank_bm25 import BM25Okapi

        self.passages = load_corpus(corpus_path)
        self.top_k = top_k  # App. D.6: top-3, as for web search
        self.max_chars = max_chars  # App. D.6: 600-character digest
        self._bm25 = BM25Okapi([tokenize(f"{p.title} {p.text}") or ["\0"] for p in self.passages])

    def _run(self, query: str) -> tuple[list[Observation], dict[str, Any]]:
        if not isinstance(query, str) or not tokenize(query):
            raise ToolError("local_retriever needs a query with at least one word")
        scores = self._bm25.get_scores(tokenize(query))
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[: self.top_k]
        hits = [(self.passages[i], float(scores[i])) for i in ranked if scores[i] > 0]
        components = [
            Component("local", f"{p.title}: {p.text}" if p.title else p.text, f"local://corpus/{p.id}")
            for p, _ in hits
        ]
        text = digest(components, self.max_chars)
        obs = [
            Observation(
                text=c.text,
                url=c.url,
                score=s,
                meta={
                    "source": "local",
                    "rank": r,
                    "passage_id": p.id,
                    "original_url": p.url,
                    "digest": text,
                },
            )
            for r, (c, (p, s)) in enumerate(zip(components, hits, strict=True))
        ]
        return obs, {"digest": text, "provider": "local"}
