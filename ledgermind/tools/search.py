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

import asyncio
import logging
import os
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from ledgermind.backends.retry import RetryPolicy, is_retryable_status
from ledgermind.errors import ConfigError, FailureKind, ToolError
from ledgermind.tools.base import Observation, Tool, ToolKind

log = logging.getLogger(__name__)

SERPER_KEY_ENV = "SERPER_API_KEY"
SERPAPI_KEY_ENV = "SERPAPI_API_KEY"
_SECRET_RE = re.compile(r"(api_key=)[^&\s'\"]+", re.IGNORECASE)


def redact(text: str) -> str:
    return _SECRET_RE.sub(r"\1***", text)


class _RedactFilter(logging.Filter):
    """httpx logs request URLs at INFO; SerpAPI URLs carry the key."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(str(record.getMessage()))
        record.args = ()
        return True


logging.getLogger("httpx").addFilter(_RedactFilter())


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


# -- response parsing (both providers' JSON shapes) ----------------------------------------------
def _kg_text(kg: Mapping[str, Any]) -> str:
    head = " ".join(str(kg[k]) for k in ("title", "type") if kg.get(k))
    attrs = "; ".join(f"{k}: {v}" for k, v in (kg.get("attributes") or {}).items())
    return ". ".join(p for p in (head, kg.get("description") or "", attrs) if p)


def _answer_text(box: Mapping[str, Any]) -> str:
    return str(box.get("answer") or box.get("snippet") or box.get("title") or "")


def parse_serper(data: Mapping[str, Any], top_k: int) -> list[Component]:
    out: list[Component] = []
    if box := data.get("answerBox"):
        out.append(Component("answer_box", _answer_text(box), box.get("link")))
    if kg := data.get("knowledgeGraph"):
        out.append(Component("knowledge_graph", _kg_text(kg), kg.get("descriptionLink") or kg.get("website")))
    for hit in (data.get("organic") or [])[:top_k]:
        out.append(Component("organic", f"{hit.get('title', '')}: {hit.get('snippet', '')}", hit.get("link")))
    return [c for c in out if c.text.strip()]


def parse_serpapi(data: Mapping[str, Any], top_k: int) -> list[Component]:
    if SERPAPI_NO_RESULTS in str(data.get("error", "")):
        return []
    if data.get("error"):
        raise ProviderError(f"serpapi error: {redact(str(data['error']))[:200]}")
    out: list[Component] = []
    if box := data.get("answer_box"):
        out.append(Component("answer_box", _answer_text(box), box.get("link")))
    if kg := data.get("knowledge_graph"):
        src = kg.get("source") or {}
        out.append(Component("knowledge_graph", _kg_text(kg), src.get("link") or kg.get("website")))
    for hit in (data.get("organic_results") or [])[:top_k]:
        out.append(Component("organic", f"{hit.get('title', '')}: {hit.get('snippet', '')}", hit.get("link")))
    return [c for c in out if c.text.strip()]


# -- providers ----------------------------------------------------------------------------------
class _Provider:
    name: ClassVar[str]
    key_env: ClassVar[str]

    def __init__(self, cfg: SearchConfig, rng: random.Random) -> None:
        self.cfg = cfg
        self.policy = RetryPolicy(cfg.max_retries, cfg.backoff_base_s, cfg.backoff_cap_s)
        self.rng = rng

    @property
    def available(self) -> bool:
        return bool(os.environ.get(self.key_env))

    def _key(self) -> str:
        return os.environ[self.key_env]

    async def _send(self, client: httpx.AsyncClient, query: str) -> httpx.Response:
        raise NotImplementedError

    def _parse(self, data: Mapping[str, Any]) -> list[Component]:
        raise NotImplementedError

    async def search(self, client: httpx.AsyncClient, query: str) -> list[Component]:
        delays = self.policy.delays(self.rng)
        while True:
            try:
                resp = await self._send(client, query)
                if resp.status_code == 200:
                    return self._parse_body(resp)
                if not is_retryable_status(resp.status_code):
                    raise ProviderError(f"{self.name}: HTTP {resp.status_code}")
                failure = f"{self.name}: HTTP {resp.status_code}"
            except httpx.TransportError as exc:
                failure = f"{self.name}: {type(exc).__name__}"
            delay = next(delays, None)
            if delay is None:
                raise ProviderError(f"{failure} (after {self.policy.max_retries} retries)")
            log.warning("%s; retrying in %.2fs", failure, delay)
            await asyncio.sleep(delay)

    def _parse_body(self, resp: httpx.Response) -> list[Component]:
        try:
            data = resp.json()
        except ValueError:
            raise ProviderError(f"{self.name}: malformed JSON response") from None
        if not isinstance(data, Mapping):
            raise ProviderError(f"{self.name}: unexpected response type {type(data).__name__}")
        return self._parse(data)


class SerperProvider(_Provider):
    name = "serper"
    key_env = SERPER_KEY_ENV

    async def _send(self, client: httpx.AsyncClient, query: str) -> httpx.Response:
        return await client.post(self.cfg.serper_url, json={"q": query}, headers={"X-API-KEY": self._key()})

    def _parse(self, data: Mapping[str, Any]) -> list[Component]:
        return parse_serper(data, self.cfg.top_k)


class SerpApiProvider(_Provider):
    name = "serpapi"
    key_env = SERPAPI_KEY_ENV

    async def _send(self, client: httpx.AsyncClient, query: str) -> httpx.Response:
        params = {"q": query, "engine": "google", "api_key": self._key()}
        return await client.get(self.cfg.serpapi_url, params=params)

    def _parse(self, data: Mapping[str, Any]) -> list[Component]:
        return parse_serpapi(data, self.cfg.top_k)


def web_search_available() -> bool:
    return bool(os.environ.get(SERPER_KEY_ENV) or os.environ.get(SERPAPI_KEY_ENV))


class WebSearchTool(Tool):
    """``invoke(query=...)``. Serper first; SerpAPI when Serper times out or errors (App. D.6)."""

    name = "web_search"
    kind = ToolKind.SEARCH

    def __init__(self, config: SearchConfig | None = None, seed: int | None = None) -> None:
        self.config = config or SearchConfig()
        rng = random.Random(seed)
        self.providers: list[_Provider] = [
            SerperProvider(self.config, rng),
            SerpApiProvider(self.config, rng),
        ]
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
            for provider in self.providers:
                if not provider.available:
                    continue
                try:
                    components = await provider.search(client, query)
                except ProviderError as exc:
                    errors.append(redact(str(exc)))
                    continue
                return self._observations(components, provider.name)
        raise SearchServiceError("all search providers failed: " + "; ".join(errors))

    def _observations(
        self, components: list[Component], provider: str
    ) -> tuple[list[Observation], dict[str, Any]]:
        text = digest(components, self.config.max_chars)
        obs = [
            Observation(
                text=c.text,
                url=c.url,
                meta={"component": c.kind, "rank": i, "provider": provider, "source": "web", "digest": text},
            )
            for i, c in enumerate(components)
        ]
        return obs, {"digest": text, "provider": provider}
