"""Web search tool (paper App. D.6): Serper primary, SerpAPI fallback.

Each call returns three components — answer box, knowledge graph, top-3 organic snippets with
URLs — as one ``Observation`` each (fact = snippet, src = URL: κ = RETRIEVAL in the ledger). The
re-answering prompt uses the components concatenated and truncated to 600 characters
(``digest``), recorded in every observation's ``meta["digest"]`` so the ledger keeps it.

API keys come from environment variables only and never appear in logs or errors (SerpAPI takes
its key as a query parameter, so URLs are redacted wherever we print them).

A healthy API that finds nothing is an evidence gap (no observations: the method repairs it); a
service that fails (unreachable, an HTTP error, a malformed answer, after the retries and the
fallback) is ``SearchServiceError``, an infrastructure failure: the item is an error with its
cause and a rerun retries it, never an answer made without the search it asked for.
"""

from __future__ import annotations

import logging
import os
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ledgermind.backends.retry import (
    Failure,
    GaveUp,
    RetryPolicy,
    is_retryable_status,
    retry_after_s,
    retrying,
)
from ledgermind.errors import ConfigError, FailureKind, ToolError
from ledgermind.tools.base import Observation, Tool, ToolKind

SERPER_KEY_ENV = "SERPER_API_KEY"
SERPAPI_KEY_ENV = "SERPAPI_API_KEY"
_SECRET_RE = re.compile(r"(api_key=)[^&\s'\"]+", re.IGNORECASE)


def redact(text: str) -> str:
    return _SECRET_RE.sub(r"\1***", text)


def _redact_record(record: logging.LogRecord) -> bool:
    """httpx logs request URLs at INFO; SerpAPI URLs carry the key."""
    record.msg, record.args = redact(record.getMessage()), ()
    return True


logging.getLogger("httpx").addFilter(_redact_record)


@dataclass(frozen=True)
class SearchConfig:
    max_retries: int = 5  # App. D.6
    backoff_cap_s: float = 32.0  # App. D.6
    backoff_base_s: float = 1.0
    timeout_s: float = 10.0
    top_k: int = 3  # App. D.6: top-3 organic snippets
    max_chars: int = 600  # App. D.6: concatenation truncated to 600 characters
    serper_url: str = "https://google.serper.dev/search"
    serpapi_url: str = "https://serpapi.com/search.json"


@dataclass(frozen=True)
class Component:
    """One part of a search result: ``answer_box``, ``knowledge_graph`` or ``organic``."""

    kind: str
    text: str
    url: str | None = None


class ProviderError(Exception):
    """One provider failed for good (after its retries, or on a non-retryable answer)."""


class SearchServiceError(ToolError):
    """Every available provider failed: the remote service, not this query."""

    failure_kind = FailureKind.INFRASTRUCTURE


# SerpAPI reports an empty result page in its ``error`` field: that is an answer, not a failure
SERPAPI_NO_RESULTS = "hasn't returned any results"


def digest(components: list[Component], max_chars: int = 600) -> str:
    """The re-answering prompt's view of a result: components in order, one per line, truncated."""
    lines = [f"{c.text} ({c.url})" if c.url else c.text for c in components]
    return "\n".join(lines)[:max_chars]


def _kg_text(kg: Mapping[str, Any]) -> str:
    head = " ".join(str(kg[k]) for k in ("title", "type") if kg.get(k))
    attrs = "; ".join(f"{k}: {v}" for k, v in (kg.get("attributes") or {}).items())
    return ". ".join(p for p in (head, kg.get("description") or "", attrs) if p)


@dataclass(frozen=True)
class Provider:
    """One search API: how to ask it, and the keys under which its JSON keeps each component."""

    name: str
    key_env: str
    request: Callable[[SearchConfig, str, str], dict[str, Any]]  # (config, query, key) -> httpx request
    answer_box: str
    knowledge_graph: str
    organic: str

    def parse(self, data: Mapping[str, Any], top_k: int) -> list[Component]:
        """The answer box, the knowledge graph and the top-k organic hits, those with text, in order."""
        if SERPAPI_NO_RESULTS in str(data.get("error", "")):
            return []
        if data.get("error"):
            raise ProviderError(f"{self.name} error: {redact(str(data['error']))[:200]}")
        out: list[Component] = []
        if box := data.get(self.answer_box):
            text = str(box.get("answer") or box.get("snippet") or box.get("title") or "")
            out.append(Component("answer_box", text, box.get("link")))
        if kg := data.get(self.knowledge_graph):
            link = kg.get("descriptionLink") or (kg.get("source") or {}).get("link") or kg.get("website")
            out.append(Component("knowledge_graph", _kg_text(kg), link))
        for hit in (data.get(self.organic) or [])[:top_k]:
            out.append(
                Component("organic", f"{hit.get('title', '')}: {hit.get('snippet', '')}", hit.get("link"))
            )
        return [c for c in out if c.text.strip()]

    async def search(
        self, client: httpx.AsyncClient, query: str, cfg: SearchConfig, rng: random.Random
    ) -> list[Component]:
        """The components of one query, retried as the policy allows; ``ProviderError`` when it fails for good."""

        async def attempt() -> list[Component] | Failure:
            try:
                resp = await client.request(**self.request(cfg, query, os.environ[self.key_env]))
            except httpx.TransportError as exc:
                return Failure(f"{self.name}: {type(exc).__name__}")
            if resp.status_code == 200:
                return self.parse(_json_object(resp, self.name), cfg.top_k)
            if not is_retryable_status(resp.status_code):
                raise ProviderError(f"{self.name}: HTTP {resp.status_code}")
            return Failure(f"{self.name}: HTTP {resp.status_code}", retry_after_s=retry_after_s(resp.headers))

        policy = RetryPolicy(cfg.max_retries, cfg.backoff_base_s, cfg.backoff_cap_s)
        try:
            return (await retrying(attempt, policy, rng, self.name))[0]
        except GaveUp as gave_up:
            raise ProviderError(f"{gave_up.failure.why} (after {cfg.max_retries} retries)") from None


def _json_object(resp: httpx.Response, provider: str) -> Mapping[str, Any]:
    try:
        data = resp.json()
    except ValueError:
        raise ProviderError(f"{provider}: malformed JSON response") from None
    if not isinstance(data, Mapping):
        raise ProviderError(f"{provider}: unexpected response type {type(data).__name__}")
    return data


SERPER = Provider(
    "serper",
    SERPER_KEY_ENV,
    lambda cfg, q, key: {
        "method": "POST",
        "url": cfg.serper_url,
        "json": {"q": q},
        "headers": {"X-API-KEY": key},
    },
    "answerBox",
    "knowledgeGraph",
    "organic",
)
SERPAPI = Provider(
    "serpapi",
    SERPAPI_KEY_ENV,
    lambda cfg, q, key: {
        "method": "GET",
        "url": cfg.serpapi_url,
        "params": {"q": q, "engine": "google", "api_key": key},
    },
    "answer_box",
    "knowledge_graph",
    "organic_results",
)


def web_search_available() -> bool:
    return bool(os.environ.get(SERPER_KEY_ENV) or os.environ.get(SERPAPI_KEY_ENV))


class WebSearchTool(Tool):
    """``invoke(query=...)``. Serper first; SerpAPI when Serper times out or errors (App. D.6)."""

    name = "web_search"
    kind = ToolKind.SEARCH

    def __init__(self, config: SearchConfig | None = None, seed: int | None = None) -> None:
        self.config = config or SearchConfig()
        self.rng = random.Random(seed)
        if not web_search_available():
            raise ConfigError(
                f"web search needs {SERPER_KEY_ENV} or {SERPAPI_KEY_ENV} in the environment "
                "(or use the offline local_retriever tool)"
            )

    async def _arun(self, query: str) -> tuple[list[Observation], dict[str, Any]]:
        if not isinstance(query, str) or not query.strip():
            raise ToolError("web_search needs a non-empty query string")
        errors: list[str] = []
        async with httpx.AsyncClient(timeout=self.config.timeout_s) as client:
            for provider in (p for p in (SERPER, SERPAPI) if os.environ.get(p.key_env)):
                try:
                    components = await provider.search(client, query, self.config, self.rng)
                except ProviderError as exc:
                    errors.append(redact(str(exc)))
                    continue
                text = digest(components, self.config.max_chars)
                meta = {"provider": provider.name, "source": "web", "digest": text}
                obs = [
                    Observation(text=c.text, url=c.url, meta={"component": c.kind, "rank": i, **meta})
                    for i, c in enumerate(components)
                ]
                return obs, {"digest": text, "provider": provider.name}
        raise SearchServiceError("all search providers failed: " + "; ".join(errors))
