"""A rule-driven fake model for deterministic tests of every pipeline branch.

It must never answer a real run by accident, so it refuses to be constructed unless the caller
opts in explicitly (``allow_scripted=True`` in the config, or ``LEDGERMIND_ALLOW_SCRIPTED=1``),
and every reply says ``backend="scripted"``, which the run records.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ledgermind.backends.base import BACKENDS, Backend, GenerationRequest, Reply
from ledgermind.errors import BackendError, ConfigError

ALLOW_ENV = "LEDGERMIND_ALLOW_SCRIPTED"


@dataclass(frozen=True)
class Rule:
    """Matches when every given condition holds; ``None`` conditions are wildcards.

    ``pattern`` is searched (``re.search``) in the last user message; ``stage`` equals
    ``request.stage``; ``call`` equals the 0-based index of this call on the backend.
    """

    reply: str
    pattern: str | None = None
    stage: str | None = None
    call: int | None = None

    def __post_init__(self) -> None:
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ConfigError(f"scripted rule has an invalid regex {self.pattern!r}: {exc}") from exc

    def matches(self, request: GenerationRequest, call_index: int) -> bool:
        if self.stage is not None and request.stage != self.stage:
            return False
        if self.call is not None and call_index != self.call:
            return False
        return self.pattern is None or re.search(self.pattern, request.last_user_text()) is not None

    @classmethod
    def from_any(cls, r: Rule | Mapping[str, Any]) -> Rule:
        if isinstance(r, Rule):
            return r
        unknown = set(r) - {"reply", "pattern", "stage", "call"}
        if "reply" not in r or unknown:
            raise ConfigError(f"scripted rule needs 'reply' and only pattern/stage/call; got {dict(r)!r}")
        return cls(**dict(r))


@BACKENDS.register("scripted")
class ScriptedBackend(Backend):
    name = "scripted"
    supports_structured_output = False

    def __init__(
        self,
        model: Mapping[str, Any] | None = None,
        rules: Sequence[Rule | Mapping[str, Any]] = (),
        default: str | None = None,
        allow_scripted: bool = False,
    ) -> None:
        if not (allow_scripted or os.environ.get(ALLOW_ENV) == "1"):
            raise ConfigError(
                "the scripted backend answers from fixed rules and is for tests only; "
                f"set backend.allow_scripted=true (or {ALLOW_ENV}=1) to use it on purpose"
            )
        self.rules = [Rule.from_any(r) for r in rules]
        self.default = default
        self._model_id = str((model or {}).get("name", "scripted"))
        self._calls = 0
        self._lock = threading.Lock()
        self.history: list[GenerationRequest] = []  # every request seen, for test assertions

    async def generate(self, request: GenerationRequest) -> Reply:
        with self._lock:
            index = self._calls
            self._calls += 1
            self.history.append(request)
        for i, rule in enumerate(self.rules):
            if rule.matches(request, index):
                return self._reply(rule.reply, index, rule=i)
        if self.default is not None:
            return self._reply(self.default, index, rule=None)
        raise BackendError(
            f"scripted backend: no rule matches call {index} (stage={request.stage!r}, "
            f"last user text={request.last_user_text()[:120]!r}) and no default reply is set"
        )

    def _reply(self, text: str, index: int, rule: int | None) -> Reply:
        return Reply(
            text=text,
            completion_tokens=len(text.split()),
            backend=self.name,
            model=self.model_id,
            meta={"call_index": index, "rule": rule},
        )
