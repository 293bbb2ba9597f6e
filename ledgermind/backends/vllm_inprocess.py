"""vLLM in-process backend: one GPU, no server, requests batched inside the engine.

Why the asynchronous engine: ``LLM.chat`` is synchronous, so concurrent items had to queue
behind a lock and the GPU saw one request at a time. ``AsyncLLM`` (vLLM v1) schedules every
request it has been given with continuous batching, exactly like the server but without HTTP,
which is what a SLURM array job with one GPU per task wants.

The engine lives on its own event loop in a daemon thread: its output handler is bound to the loop
that created it, while our callers come from several loops (the runner's, ``generate_sync``'s
fresh ones). ``generate`` hands the request to that loop and awaits the result, so chat-template
rendering and image processing never block the caller's loop either. Structured outputs
(``StructuredOutputsParams``) and per-request seeds are ordinary ``SamplingParams`` fields.
The renderer turns each image part's ``uuid`` (its content digest, ``backends/chat.py``) into the
prompt's ``multi_modal_uuids``, so the engine's processor and prefix caches key on the digest.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Mapping
from typing import Any

from ledgermind.backends.base import BACKENDS, Backend, GenerationRequest, Reply
from ledgermind.backends.chat import to_openai_messages
from ledgermind.backends.model_ref import ModelRef
from ledgermind.errors import BackendError, MissingExtraError


@BACKENDS.register("vllm_inprocess")
class VLLMInProcessBackend(Backend):
    name = "vllm_inprocess"
    supports_structured_output = True

    def __init__(self, model: Mapping[str, Any], engine_args: Mapping[str, Any] | None = None) -> None:
        self.ref = ModelRef.from_mapping(model)
        self._model_id = self.ref.name
        # model-level recommended args (conf/model/*.yaml vllm_args), overridden by backend ones: the
        # same rule as the server command and the recorded identity (provenance.configured_image_budget)
        self.engine_args = self.ref.engine_args(engine_args)
        try:  # fail at construction, not at the first item
            import vllm
        except ImportError as exc:
            raise MissingExtraError("the vllm_inprocess backend", "vllm", "vllm") from exc
        self._vllm = vllm
        self._engine: Any = None  # AsyncLLM, created on first use inside the engine thread
        self._loop: asyncio.AbstractEventLoop | None = None  # the engine's own, run by a daemon thread
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._ids = itertools.count()

    # ------------------------------------------------------------------ engine lifecycle
    def _engine_loop(self) -> asyncio.AbstractEventLoop:
        with self._start_lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=self._loop.run_forever, name="vllm-engine", daemon=True
                )
                self._thread.start()
            return self._loop

    async def _ensure_engine(self) -> Any:
        """Runs on the engine loop only (one coroutine at a time creates it: the loop is single-threaded)."""
        if self._engine is None:
            from vllm.engine.arg_utils import AsyncEngineArgs
            from vllm.v1.engine.async_llm import AsyncLLM

            engine_args = AsyncEngineArgs(
                model=self.ref.resolve_source(), revision=self.ref.revision, **self.engine_args
            )
            self._engine = AsyncLLM.from_engine_args(engine_args)
        return self._engine

    # ------------------------------------------------------------------ generation
    async def generate(self, request: GenerationRequest) -> Reply:
        # the sampling parameters are built in the caller's frame: a bad request fails here
        kwargs: dict[str, Any] = dict(
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            stop=list(request.stop) or None,
            seed=request.seed,
        )
        if request.json_schema is not None or request.regex is not None:
            from vllm.sampling_params import StructuredOutputsParams

            kwargs["structured_outputs"] = StructuredOutputsParams(
                json=request.json_schema, regex=request.regex
            )
        params = self._vllm.SamplingParams(**kwargs)
        future = asyncio.run_coroutine_threadsafe(self._agenerate(request, params), self._engine_loop())
        return await asyncio.wrap_future(future)

    async def _agenerate(self, request: GenerationRequest, params: Any) -> Reply:
        engine = await self._ensure_engine()
        engine_input = await self._render(engine, request)
        t0 = time.perf_counter()
        final = None
        async for out in engine.generate(engine_input, params, f"ledgermind-{next(self._ids)}"):
            final = out
        latency = time.perf_counter() - t0
        if final is None or not final.outputs:
            raise BackendError("vllm_inprocess: the engine finished the request without an output")
        completion = final.outputs[0]
        return self.reply(
            completion.text,
            prompt_tokens=len(final.prompt_token_ids or []),
            completion_tokens=len(completion.token_ids),
            finish_reason=str(completion.finish_reason or "stop"),
            latency_s=latency,
            meta={"token_ids": list(completion.token_ids)},
        )

    @staticmethod
    async def _render(engine: Any, request: GenerationRequest) -> Any:
        """The chat template + image processing ``LLM.chat`` applies, through the engine's renderer."""
        from vllm.renderers.params import ChatParams

        renderer = engine.renderer
        chat_params = ChatParams(
            chat_template_kwargs={
                "add_generation_prompt": True,
                "continue_final_message": False,
                "tools": None,
                "tokenize": False,
            }
        )
        # the chat template emits BOS/EOS itself (as LLM.chat and the server do)
        tok_params = renderer.default_chat_tok_params.with_kwargs(add_special_tokens=False)
        _, (engine_input,) = await renderer.render_chat_async(
            [to_openai_messages(request.messages)], chat_params, tok_params
        )
        return engine_input

    async def aclose(self) -> None:
        loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.shutdown()
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=30)
