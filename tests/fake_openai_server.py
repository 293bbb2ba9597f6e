"""A tiny OpenAI-compatible server on 127.0.0.1 for harness tests: real sockets, real HTTP, no model.

It serves ``GET /v1/models`` (one model name) and ``POST /v1/chat/completions``. The reply is
driven by the request only: ``"Answer: X"`` where X is the first option letter listed in the
prompt as ``"X. text"`` (``"Answer: A"`` if none). ``die_after=N`` makes it behave like a server
killed mid-run: after N completions every new connection is dropped without a response and the
listening socket is closed, so clients see a transport error (then connection refused).
"""

from __future__ import annotations

import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_OPTION = re.compile(r"^([A-J])\. ", re.MULTILINE)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FakeOpenAIServer:
    def __init__(self, model: str, port: int | None = None, die_after: int | None = None) -> None:
        self.model, self.port, self.die_after = model, port or free_port(), die_after
        self.completions = 0
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _die(self) -> None:
        threading.Thread(target=self.stop, daemon=True).start()

    def reply_for(self, body: dict[str, Any]) -> str:
        text = "".join(
            part.get("text", "")
            for msg in body.get("messages", [])
            for part in (msg.get("content") if isinstance(msg.get("content"), list) else [{"text": msg.get("content") or ""}])
        )
        m = _OPTION.search(text)
        return f"Answer: {m.group(1) if m else 'A'}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _json(self, payload: dict[str, Any], status: int = 200) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 — http.server API
                if self.path.rstrip("/") == "/v1/models":
                    self._json({"object": "list", "data": [{"id": server.model, "object": "model"}]})
                else:
                    self._json({"error": "not found"}, 404)

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server._lock:
                    dead = server.die_after is not None and server.completions >= server.die_after
                    if not dead:
                        server.completions += 1
                        server.requests.append(body)
                if dead:  # a killed server: no response at all
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    server._die()
                    return
                if body.get("model") != server.model:
                    self._json({"error": {"message": f"model {body.get('model')!r} does not exist"}}, 404)
                    return
                text = server.reply_for(body)
                self._json(
                    {
                        "id": "cmpl-fake",
                        "object": "chat.completion",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 3},
                    }
                )

        return Handler
