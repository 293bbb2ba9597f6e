"""The one MLLM backend interface.

Async-first because a run keeps ``concurrency`` items in flight against one server; the sync
wrapper exists for scripts. Requests carry everything that determines the reply, so that the
response cache can key on a hash of the canonical request.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from PIL import Image
from pydantic import ConfigDict

from ledgermind.benchmarks.item import Item
from ledgermind.errors import ConfigError
from ledgermind.jsonl import valid_text
from ledgermind.registry import Registry

Role = Literal["system", "user", "assistant"]
ContentPart = str | Image.Image | Path  # str = text; Path/PIL = image (a str is always text)


@dataclass
class Message:
    """One chat message; ``content`` interleaves text (str) and images (PIL.Image or Path)."""

    role: Role
    content: list[ContentPart]

    @classmethod
    def text(cls, role: Role, text: str) -> Message:
        return cls(role, [text])

    def images(self) -> list[Image.Image | Path]:
        return [p for p in self.content if not isinstance(p, str)]

    def text_content(self) -> str:
        return "".join(p for p in self.content if isinstance(p, str))


def map_parts(
    messages: Sequence[Message], text: Callable[[str], Any], image: Callable[[Image.Image | Path], Any]
) -> list[dict[str, Any]]:
    """``[{"role", "content": [text(part) | image(part), ...]}]``: the one walk over a request's parts.

    Every view of a request (the OpenAI and transformers wire formats, the response cache's key, the
    trajectory's log) is this walk with its own two part functions, so a new kind of part, or the
    order of parts, is changed in one place and no view can drift from the others."""
    return [
        {"role": m.role, "content": [text(p) if isinstance(p, str) else image(p) for p in m.content]}
        for m in messages
    ]


@dataclass
class GenerationRequest:
    """Everything that determines a reply. ``stage`` names the pipeline stage (for scripted rules and logs)."""

    messages: list[Message]
    temperature: float = 0.0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    seed: int = 0
    json_schema: dict[str, Any] | None = None  # structured output: reply must validate against it
    regex: str | None = None  # structured output: reply must match it
    stage: str = ""
    # The benchmark item this request serves. Not part of the cache key (the reply depends on the
    # content, not the id); the replay backend answers by it.
    item_id: str = ""

    def __post_init__(self) -> None:
        if self.json_schema is not None and self.regex is not None:
            raise ConfigError("a request may constrain its output by json_schema or by regex, not both")

    @property
    def deterministic(self) -> bool:
        return self.temperature == 0.0

    def last_user_text(self) -> str:
        return next((m.text_content() for m in reversed(self.messages) if m.role == "user"), "")


@dataclass
class Reply:
    # strict, no unknown keys: a reply read back from the response cache is checked field by field
    __pydantic_config__ = ConfigDict(strict=True, extra="forbid")

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    latency_s: float = 0.0
    backend: str = ""
    model: str = ""
    cached: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""  # a reasoning model's thinking, kept apart from ``text`` (backends/reasoning.py)

    def __post_init__(self) -> None:
        self.text, self.reasoning = valid_text(self.text), valid_text(self.reasoning)


def reply_json(text: str) -> Any:
    """``json.loads`` of a model's reply with every string made valid text (see ``valid_text``):
    a JSON escape like ``"\\udebc"`` inside a structured output decodes to a lone surrogate. The
    decoded value is written back as one text, made valid there at once, and read again."""
    return json.loads(valid_text(json.dumps(json.loads(text), ensure_ascii=False)))


@dataclass(frozen=True)
class BackendDescription:
    """How a backend presents the runs it answered, in its own words.

    Why the backend says it: the run banner, ``metrics.json``, the Table 3 caption, the report and
    the logger tags must all say the same thing about what answered, and a production module must
    not recognise a particular backend (the simulator, a test instrument) by its class name.
    """

    label: str = ""  # what answered, in place of "model (backend)" ("" = the model answered)
    disclaimer: str = ""  # one sentence every output of its runs carries ("" = nothing to say)
    tags: tuple[str, ...] = ()  # experiment-logger tags of its runs
    # Module whose import registers this backend's census sections and S-RFA checks, so that a
    # process that only reads one of its runs counts and audits it as the run itself did.
    plugin: str = ""


class Backend(ABC):
    """Base class of all backends. Implementations register in ``BACKENDS``."""

    name: str = "abstract"
    description: ClassVar[BackendDescription] = BackendDescription()
    supports_structured_output: bool = False
    cacheable: bool = True  # False: never wrapped in the response cache (e.g. replay: the file is the cache)

    @property
    def model_id(self) -> str:
        return getattr(self, "_model_id", "unknown")

    @abstractmethod
    async def generate(self, request: GenerationRequest) -> Reply: ...

    async def preflight(self) -> None:  # noqa: B027 — optional hook
        """Check, before the first item, that the backend can serve requests at all.

        Raise ``PreflightError`` (one line) when it cannot: a run against a dead server would
        otherwise turn every item into an error. Default: nothing to check (local backends fail
        at construction time).
        """

    def reply(self, text: str, **fields: Any) -> Reply:
        """A reply of this backend, naming the backend and the model that answered (the run records both)."""
        return Reply(text, backend=self.name, model=self.model_id, **fields)

    def generate_sync(self, request: GenerationRequest) -> Reply:
        return asyncio.run(self.generate(request))

    def expect_items(self, items: Sequence[Item]) -> None:  # noqa: B027 — optional hook
        """The run will solve these items: its whole item list in benchmark order, before the first.

        Why: a backend that spreads items over several servers places them from this list, which
        every job of a sweep (and a resumed job) has alike, so each item meets the same server in
        every job (``backends/placement.py``). Default: nothing to place.
        """

    def item_done(self, item_id: str) -> None:  # noqa: B027 — optional hook
        """The agent will send no more requests for ``item_id``.

        Why: a backend that spreads items over several servers balances new items by the items
        still active on each; without this signal a finished item would count until it aged out.
        Default: nothing to release.
        """

    async def aclose(self) -> None:  # noqa: B027 — optional hook
        """Release connections / engines. Default: nothing to release."""


class WrappingBackend(Backend):
    """A backend that adds one concern around another (image budget, reasoning split, cache).

    Transparent for everything it does not change: name, structured-output support, model id,
    preflight, closing, and any other attribute of the inner backend (``base_urls``, counters).
    """

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name
        self.supports_structured_output = inner.supports_structured_output
        self.cacheable = getattr(inner, "cacheable", True)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not yet set (copy/pickle): avoid recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def preflight(self) -> None:
        await self.inner.preflight()

    def expect_items(self, items: Sequence[Item]) -> None:
        self.inner.expect_items(items)

    def item_done(self, item_id: str) -> None:
        self.inner.item_done(item_id)

    async def aclose(self) -> None:
        await self.inner.aclose()


BACKENDS: Registry[type[Backend]] = Registry("backend")
