"""A rule-driven fake model for deterministic tests of every pipeline branch.

It must never answer a real run by accident, so it refuses to be constructed unless the caller
opts in explicitly (``allow_scripted=True`` in the config, or ``LEDGERMIND_ALLOW_SCRIPTED=1``),
and every reply says ``backend="scripted"``, which the run records.

Rules see exactly what a real model sees — the message text, the images, the sampling
parameters and the structured-output schema — and nothing else: not the pipeline's stage name
(it is recorded on the request for logs, never matched) and not how many calls came before.
So identical requests always get identical replies, as with greedy decoding, and a test cannot
pass by steering the fake with information a real model never receives.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ledgermind.backends.base import BACKENDS, Backend, GenerationRequest, Reply
from ledgermind.backends.budget import image_size
from ledgermind.errors import BackendError, ConfigError

ALLOW_ENV = "LEDGERMIND_ALLOW_SCRIPTED"


@dataclass(frozen=True)
class Rule:
    """Matches when every given condition holds; ``None`` conditions are wildcards.

    ``pattern``: regex searched in the last user message (multiline). ``prompt``: the name of a
    prompt template, resolved to its text signature (``ledgermind.prompts.signatures``) — it is
    still a match on the message text. ``images``: number of images in the request.
    ``sampled``: temperature > 0. ``seed``: the request seed. ``structured``: a JSON schema is
    requested. ``image_size``: (width, height) of the first image.
    """

    reply: str
    pattern: str | None = None
    prompt: str | None = None
    images: int | None = None
    sampled: bool | None = None
    seed: int | None = None
    structured: bool | None = None
    image_size: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        for p in self._patterns():
            try:
                re.compile(p)
            except re.error as exc:
                raise ConfigError(f"scripted rule has an invalid regex {p!r}: {exc}") from exc

    def _patterns(self) -> list[str]:
        from ledgermind.prompts.signatures import signature

        out = [self.pattern] if self.pattern is not None else []
        if self.prompt is not None:
            try:
                out.append(signature(self.prompt))
            except KeyError as exc:
                raise ConfigError(f"scripted rule: {exc.args[0]}") from None
        return out

    def matches(self, request: GenerationRequest) -> bool:
        images = [im for m in request.messages for im in m.images()]
        if self.image_size is not None and (not images or image_size(images[0]) != tuple(self.image_size)):
            return False
        checks = (
            (self.images, len(images)),
            (self.sampled, not request.deterministic),
            (self.seed, request.seed),
            (self.structured, request.json_schema is not None),
        )
        if any(want is not None and want != got for want, got in checks):
            return False
        text = request.last_user_text()
        return all(re.search(p, text, flags=re.MULTILINE) for p in self._patterns())

    @classmethod
    def from_any(cls, r: Rule | Mapping[str, Any]) -> Rule:
        if isinstance(r, Rule):
            return r
        if not set(r) <= (allowed := {f.name for f in fields(cls)}) or "reply" not in r:
            raise ConfigError(
                f"scripted rule needs 'reply' and only {sorted(allowed - {'reply'})} "
                f"(a rule can match only what a model sees); got {dict(r)!r}"
            )
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
        self._lock = threading.Lock()
        self.history: list[GenerationRequest] = []  # every request seen, for test assertions

    async def generate(self, request: GenerationRequest) -> Reply:
        with self._lock:
            self.history.append(request)
        i = next((i for i, rule in enumerate(self.rules) if rule.matches(request)), None)
        text = self.default if i is None else self.rules[i].reply
        if text is None:
            raise BackendError(
                "scripted backend: no rule matches the request "
                f"(last user text={request.last_user_text()[:120]!r}) and no default reply is set"
            )
        return self.reply(text, completion_tokens=len(text.split()), meta={"rule": i})
