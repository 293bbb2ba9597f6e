"""vLLM in-process backend: one GPU, no server (``vllm.LLM``), imported lazily.

``LLM.chat`` is synchronous and batches internally; we run it in a worker thread behind a lock
so the event loop stays responsive. For many concurrent items prefer ``vllm_server``, whose
continuous batching across requests is the reason it is the primary path.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

from ledgermind.backends.base import BACKENDS, Backend, GenerationRequest, Reply
from ledgermind.backends.chat import to_openai_messages
from ledgermind.backends.model_ref import ModelRef


def _import_vllm() -> Any:
    from ledgermind.errors import MissingExtraError

    try:
        import vllm
    except ImportError as exc:
        raise MissingExtraError("the vllm_inprocess backend", "vllm", "vllm") from exc
    return vllm


@BACKENDS.register("vllm_inprocess")
class VLLMInProcessBackend(Backend):
    name = "vllm_inprocess"
    supports_structured_output = True

    def __init__(self, model: Mapping[str, Any], engine_args: Mapping[str, Any] | None = None) -> None:
        self.ref = ModelRef.from_mapping(model)
        self._model_id = self.ref.name
        # model-level recommended args (conf/model/*.yaml vllm_args), overridden by backend ones
        self.engine_args = {**dict(self.ref.vllm_args), **dict(engine_args or {})}
        self._vllm = _import_vllm()  # fail at construction, not at the first item
        self._llm: Any = None
        self._lock = threading.Lock()

    def _ensure_engine(self) -> Any:
        if self._llm is None:
            args = dict(self.engine_args)
            args.setdefault("max_model_len", self.ref.context_length)
            args.setdefault("limit_mm_per_prompt", {"image": self.ref.max_images, "video": 0})
            self._llm = self._vllm.LLM(model=self.ref.resolve_source(), revision=self.ref.revision, **args)
        return self._llm

    def _sampling_params(self, request: GenerationRequest) -> Any:
        kwargs: dict[str, Any] = dict(
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            stop=list(request.stop) or None,
            seed=request.seed,
        )
        if request.json_schema is not None or request.regex is not None:
            from vllm.sampling_params import StructuredOutputsParams

            kwargs["structured_outputs"] = StructuredOutputsParams(json=request.json_schema, regex=request.regex)
        return self._vllm.SamplingParams(**kwargs)

    async def generate(self, request: GenerationRequest) -> Reply:
        return await asyncio.to_thread(self._generate_blocking, request)

    def _generate_blocking(self, request: GenerationRequest) -> Reply:
        with self._lock:
            llm = self._ensure_engine()
            t0 = time.perf_counter()
            out = llm.chat(to_openai_messages(request.messages), self._sampling_params(request), use_tqdm=False)[0]
            latency = time.perf_counter() - t0
        completion = out.outputs[0]
        return Reply(
            text=completion.text,
            prompt_tokens=len(out.prompt_token_ids or []),
            completion_tokens=len(completion.token_ids),
            finish_reason=str(completion.finish_reason or "stop"),
            latency_s=latency,
            backend=self.name,
            model=self.model_id,
        )
