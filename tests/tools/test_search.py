"""Web search against a local HTTP server on 127.0.0.1 serving Serper / SerpAPI JSON shapes."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from ledgermind.errors import ConfigError, FailureKind
from ledgermind.experiment.failures import tool_failure
from ledgermind.tools.search import SERPER, SearchConfig, WebSearchTool, digest

SERPER_OK = {
    "answerBox": {"answer": "Paris", "link": "https://example.org/paris"},
    "knowledgeGraph": {
        "title": "France",
        "type": "Country",
        "description": "Country in Europe.",
        "descriptionLink": "https://en.wikipedia.org/wiki/France",
        "attributes": {"Capital": "Paris"},
    },
    "organic": [
        {"title": f"Result {i}", "link": f"https://r{i}.example", "snippet": f"snippet {i} " + "x" * 150}
        for i in range(5)
    ],
}
SERPAPI_OK = {
    "answer_box": {"snippet": "Paris is the capital", "link": "https://serpapi.example/a"},
    "organic_results": [{"title": "S", "link": "https://s.example", "snippet": "from serpapi"}],
}


class FakeApis:
    """Per-path queue of steps: a dict (200 JSON), an int status, "timeout" (sleep), or "garbage"."""

    def __init__(self, port: int = 0) -> None:
        self.steps: dict[str, list] = defaultdict(list)
        self.hits: dict[str, int] = defaultdict(int)
        self.seen: list[tuple[str, dict, dict]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _serve(self) -> None:
                url = urlparse(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fake.hits[url.path] += 1
                fake.seen.append((url.path, dict(self.headers), {**parse_qs(url.query), "body": body}))
                step = fake.steps[url.path].pop(0) if fake.steps[url.path] else 500
                if step == "timeout":
                    time.sleep(1.0)
                    step = 500
                if step == "garbage":
                    payload, status = b"<html>not json", 200
                elif isinstance(step, dict):
                    payload, status = json.dumps(step).encode(), 200
                else:
                    payload, status = b'{"message": "err"}', int(step)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        # a short poll: shutdown() waits for it, and the default 0.5 s would be most of a test
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()


@pytest.fixture()
def apis():
    fake = FakeApis()
    yield fake
    fake.server.shutdown()


@pytest.fixture()
def keys(monkeypatch):
    monkeypatch.setenv("SERPER_API_KEY", "serper-secret-123")
    monkeypatch.setenv("SERPAPI_API_KEY", "serpapi-secret-456")


def tool(apis, **kw) -> WebSearchTool:
    cfg = SearchConfig(
        serper_url=f"{apis.base}/serper",
        serpapi_url=f"{apis.base}/serpapi",
        backoff_base_s=0.0,
        timeout_s=kw.pop("timeout_s", 5.0),
        **kw,
    )
    return WebSearchTool(cfg, seed=0)


def test_serper_result_components_and_digest(apis, keys):
    apis.steps["/serper"] = [SERPER_OK]
    out = tool(apis).invoke(query="capital of France")
    assert out.ok and out.kind.value == "search"
    kinds = [o.meta["component"] for o in out.observations]
    assert kinds == ["answer_box", "knowledge_graph", "organic", "organic", "organic"]  # top-3 organic
    assert out.observations[0].text == "Paris" and out.observations[0].url == "https://example.org/paris"
    assert "Capital: Paris" in out.observations[1].text
    text = out.observations[0].meta["digest"]
    assert len(text) == 600 and text.startswith("Paris (https://example.org/paris)\nFrance Country")
    assert all(o.meta["provider"] == "serper" for o in out.observations)
    path, headers, q = apis.seen[0]
    assert headers["X-API-KEY"] == "serper-secret-123" and json.loads(q["body"]) == {"q": "capital of France"}


@pytest.mark.parametrize("failure", [500, 429, 503])
def test_retryable_statuses_are_retried_then_succeed(apis, keys, failure):
    apis.steps["/serper"] = [failure, failure, SERPER_OK]
    out = tool(apis).invoke(query="q")
    assert out.ok and apis.hits["/serper"] == 3 and apis.hits["/serpapi"] == 0


def test_falls_back_to_serpapi_after_five_retries(apis, keys):
    apis.steps["/serper"] = [500] * 10
    apis.steps["/serpapi"] = [SERPAPI_OK]
    out = tool(apis).invoke(query="q")
    assert out.ok and apis.hits["/serper"] == 6  # 1 try + at most 5 retries (App. D.6)
    assert [o.meta["provider"] for o in out.observations] == ["serpapi", "serpapi"]
    assert out.observations[0].text == "Paris is the capital"
    _, _, q = apis.seen[-1]
    assert q["api_key"] == ["serpapi-secret-456"] and q["q"] == ["q"]


@pytest.mark.parametrize("failure", ["garbage", 401])
def test_non_retryable_errors_fall_back_immediately(apis, keys, failure):
    apis.steps["/serper"] = [failure]
    apis.steps["/serpapi"] = [SERPAPI_OK]
    out = tool(apis).invoke(query="q")
    assert out.ok and apis.hits["/serper"] == 1


def test_timeouts_fall_back(apis, keys):
    apis.steps["/serper"] = ["timeout"] * 3
    apis.steps["/serpapi"] = [SERPAPI_OK]
    out = tool(apis, timeout_s=0.2, max_retries=2).invoke(query="q")
    assert out.ok and out.observations[0].meta["provider"] == "serpapi" and apis.hits["/serper"] == 3


def test_both_failing_is_an_error_output_without_secrets(apis, keys, caplog):
    apis.steps["/serper"] = ["garbage"]
    apis.steps["/serpapi"] = [500] * 10
    with caplog.at_level(logging.DEBUG):
        out = tool(apis, max_retries=1).invoke(query="q")
    assert not out.ok and "all search providers failed" in out.error
    assert "malformed JSON" in out.error and "HTTP 500" in out.error
    everything = out.error + caplog.text
    assert "secret" not in everything and apis.hits["/serpapi"] == 2


def test_a_failing_service_is_an_infrastructure_failure_of_the_item(apis, keys):
    apis.steps["/serper"] = [401]
    apis.steps["/serpapi"] = [500] * 3
    out = tool(apis, max_retries=1).invoke(query="q")
    assert out.failure is FailureKind.INFRASTRUCTURE
    cause = tool_failure(out)
    assert cause.startswith(
        "infrastructure failed (web_search): SearchServiceError: all search providers failed"
    )
    assert "serper: HTTP 401" in cause and "serpapi: HTTP 500" in cause


@pytest.mark.parametrize(
    ("serper", "serpapi"),
    [
        ({}, None),
        ({"organic": []}, None),
        (500, {"error": "Google hasn't returned any results for this query."}),
    ],
)
def test_no_results_from_a_healthy_api_is_an_evidence_gap(apis, keys, serper, serpapi):
    apis.steps["/serper"] = [serper]
    apis.steps["/serpapi"] = [serpapi] if serpapi else []
    out = tool(apis, max_retries=0).invoke(query="q")
    assert out.error is None and out.observations == () and not out.ok  # T1: repaired, not an item error
    assert out.failure is None and tool_failure(out) is None


def test_a_serpapi_error_other_than_no_results_is_a_failure(apis, keys):
    apis.steps["/serper"] = [500]
    apis.steps["/serpapi"] = [{"error": "Invalid API key."}]
    out = tool(apis, max_retries=0).invoke(query="q")
    assert out.failure is FailureKind.INFRASTRUCTURE and "serpapi error: Invalid API key." in out.error


def test_only_available_provider_is_used(apis, monkeypatch):
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    monkeypatch.setenv("SERPAPI_API_KEY", "k")
    apis.steps["/serpapi"] = [SERPAPI_OK]
    assert tool(apis).invoke(query="q").ok and apis.hits["/serper"] == 0


def test_no_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="SERPER_API_KEY"):
        WebSearchTool()


def test_empty_query_is_an_error_output(apis, keys):
    out = tool(apis).invoke(query="  ")
    assert not out.ok and "non-empty query" in out.error and apis.hits["/serper"] == 0


def test_parse_and_digest_handle_sparse_results():
    comps = SERPER.parse({"organic": [{"title": "T", "snippet": "s"}]}, top_k=3)
    assert [(c.kind, c.url) for c in comps] == [("organic", None)]
    assert digest(comps) == "T: s" and SERPER.parse({}, 3) == []
