"""The single door to the backend for one item: every call is timed and recorded in τ.

Why it exists: model calls are steps of the trajectory (they advance the ledger clock that TTLs
count in) and the census reads them (``request_key`` shows whether two readings were the same
request), so no pipeline stage may talk to the backend any other way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ledgermind.backends.base import Backend, ContentPart, GenerationRequest, Message
from ledgermind.backends.budget import sent_image_pixels
from ledgermind.backends.cache import request_key
from ledgermind.backends.reasoning import separate
from ledgermind.backends.sample_log import image_digests, logged_messages
from ledgermind.errors import LedgerMindError, ToolError
from ledgermind.pipeline.call_log import record_call
from ledgermind.pipeline.config import PipelineConfig
from ledgermind.trajectory import Trajectory

STRUCTURED_HINT = "\nRespond with a JSON object that follows the requested schema."


class IdenticalRequest(ToolError):
    """A re-invocation would repeat an earlier request of the same item byte for byte: not sent."""


class ModelIO:
    def __init__(self, backend: Backend, cfg: PipelineConfig, traj: Trajectory) -> None:
        self.backend, self.cfg, self.traj = backend, cfg, traj
        self.structured = cfg.structured_output and backend.supports_structured_output
        self.model_s = 0.0
        self.sent: set[str] = set()  # request keys sent for this item (a re-invocation may not repeat one)
        # while the executor re-invokes a tool: the repeated requests refused (None: not re-invoking)
        self.refused: list[str] | None = None

    async def call(
        self,
        stage: str,
        text: str,
        images: Sequence[ContentPart],
        system: str | None,
        schema: dict[str, Any] | None,
        draw: int = 0,
    ) -> str:
        """Send one request; failures raise ``ToolError`` (a model-backed tool's T1).

        ``draw`` > 0 asks for an independent sample (temperature ``reading_temperature``, seed
        ``seed + draw``): a RETRY of a reading, which greedy decoding would otherwise repeat.
        """
        messages = [Message.text("system", system)] if system else []
        hint = STRUCTURED_HINT if schema else ""
        messages.append(Message("user", [*images, text + hint]))
        req = GenerationRequest(
            messages=messages,
            temperature=self.cfg.reading_temperature if draw else self.cfg.temperature,
            max_tokens=self.cfg.max_tokens,
            seed=self.cfg.seed + draw,
            json_schema=schema if self.structured else None,
            stage=stage,
            item_id=self.traj.item_id,  # routing keeps an item's calls on one server (not part of the key)
        )
        t0 = time.perf_counter()
        key, pixels, sample = "", [], []
        try:  # the one boundary of a model call: whatever fails in it is a failed call, never a reply
            digests = image_digests(req.messages)
            key, pixels = request_key(req, self.backend.model_id, digests), sent_image_pixels(req.messages)
            sample = logged_messages(req.messages, digests)
            self._refuse_repeat(stage, key)
            reply = separate(await self.backend.generate(req))  # the answer only; thinking is kept apart
        except IdenticalRequest:
            raise  # not sent, so not a model call: the repair policy fails over
        except Exception as exc:
            cause = str(exc) if isinstance(exc, LedgerMindError) else f"{type(exc).__name__}: {exc}"
            self._log(stage, t0, key, sample, pixels, error=cause)
            raise ToolError(f"api_error: {cause}") from exc
        self._log(stage, t0, key, sample, pixels, reply=reply)
        return reply.text

    def _refuse_repeat(self, stage: str, key: str) -> None:
        """Inside a re-invocation, a request already sent for this item is not sent again: greedy
        decoding would repeat the earlier reply, so it would only spend budget."""
        if self.refused is not None and key in self.sent:
            self.refused.append(key)
            raise IdenticalRequest(
                f"{stage}: the re-invocation repeats an earlier request of this item; not sent"
            )
        self.sent.add(key)

    def _log(
        self, stage: str, t0: float, key: str, sample: list[dict[str, Any]], pixels: list[int], **outcome: Any
    ) -> None:
        """Record a model call (one step of τ: it advances the ledger's clock that TTLs count in)."""
        dt = time.perf_counter() - t0
        self.model_s += dt
        record_call(self.traj, self.backend, stage, dt, key, sample, pixels=pixels, **outcome)

    async def ask(
        self,
        stage: str,
        text: str,
        images: Sequence[ContentPart] = (),
        system: str | None = None,
        schema: dict[str, Any] | None = None,
    ) -> str | None:
        """A model call that is not evidence (reasoning, decision): None when the backend failed.
        ``schema`` is requested only where the backend honours structured output."""
        try:
            return await self.call(stage, text, images, system, schema if self.structured else None)
        except ToolError as exc:
            self.traj.notes.append(f"{stage}: {exc}")
            return None
