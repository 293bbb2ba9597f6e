"""Local transformers backend (CPU or GPU) for machines without vLLM.

Uses the model's own processor and chat template, so the prompt is token-for-token the one vLLM
builds. ``generate`` runs in a worker thread (the event loop keeps serving other items) behind a
lock (one HF ``generate`` at a time: the model is not re-entrant and CPU cores are the bottleneck
anyway). Structured output is not enforced here (``supports_structured_output = False``); a
request that asks for it is answered unconstrained and flagged in ``Reply.meta``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from ledgermind.backends.base import BACKENDS, Backend, GenerationRequest, Reply
from ledgermind.backends.chat import to_hf_messages
from ledgermind.backends.model_ref import ModelRef
from ledgermind.errors import ConfigError, MissingExtraError

log = logging.getLogger(__name__)


@BACKENDS.register("transformers")
class TransformersBackend(Backend):
    name = "transformers"
    supports_structured_output = False

    def __init__(
        self,
        model: Mapping[str, Any],
        device: str = "auto",
        dtype: str = "auto",
        model_class: str = "AutoModelForImageTextToText",
        trust_remote_code: bool = False,
    ) -> None:
        self.ref = ModelRef.from_mapping(model)
        self._model_id = self.ref.name
        self.device = device
        self.dtype = dtype if dtype != "auto" else self.ref.dtype
        self.model_class = model_class
        self.trust_remote_code = trust_remote_code
        self._load_lock = threading.Lock()
        self._gen_lock = threading.Lock()
        self._model: Any = None
        self._processor: Any = None

    # -- loading -----------------------------------------------------------------------------
    def _ensure_loaded(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            try:
                import torch
                import transformers
            except ImportError as exc:
                raise MissingExtraError("the transformers backend", "hf", exc.name or "transformers") from exc
            source = self.ref.resolve_source()
            device = (
                self.device if self.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
            )
            auto = torch.bfloat16 if device.startswith("cuda") else torch.float32
            dtype = auto if self.dtype == "auto" else getattr(torch, self.dtype, None)
            if dtype is None:
                raise ConfigError(f"unknown torch dtype {self.dtype!r}")
            if (cls := getattr(transformers, self.model_class, None)) is None:
                raise ConfigError(f"transformers has no model class {self.model_class!r}")
            kwargs = dict(revision=self.ref.revision, trust_remote_code=self.trust_remote_code)
            self._processor = transformers.AutoProcessor.from_pretrained(source, **kwargs)
            self._model = cls.from_pretrained(source, dtype=dtype, **kwargs).to(device).eval()
            self._device = device

    # -- generation --------------------------------------------------------------------------
    async def generate(self, request: GenerationRequest) -> Reply:
        return await asyncio.to_thread(self._generate_blocking, request)

    def _generate_blocking(self, request: GenerationRequest) -> Reply:
        self._ensure_loaded()
        import torch

        messages, images = to_hf_messages(request.messages)
        prompt = self._processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        inputs = self._processor(text=[prompt], images=images or None, return_tensors="pt").to(self._device)
        gen_kwargs: dict[str, Any] = {"max_new_tokens": request.max_tokens}
        if request.deterministic:
            gen_kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            gen_kwargs.update(do_sample=True, temperature=request.temperature)
        if request.stop:
            gen_kwargs.update(stop_strings=list(request.stop), tokenizer=self._processor.tokenizer)
        with self._gen_lock:
            torch.manual_seed(request.seed)
            t0 = time.perf_counter()
            with torch.inference_mode():
                out = self._model.generate(**inputs, **gen_kwargs)
            latency = time.perf_counter() - t0
        n_prompt = int(inputs["input_ids"].shape[1])
        new_ids = out[0, n_prompt:]
        text = _cut_at_stop(self._processor.decode(new_ids, skip_special_tokens=True), request.stop)
        finish = "length" if len(new_ids) >= request.max_tokens and not request.stop else "stop"
        meta: dict[str, Any] = {"device": self._device, "token_ids": new_ids.tolist()}
        if request.json_schema is not None or request.regex is not None:
            meta["structured_output"] = "not_enforced"
        return self.reply(
            text,
            prompt_tokens=n_prompt,
            completion_tokens=int(len(new_ids)),
            finish_reason=finish,
            latency_s=latency,
            meta=meta,
        )


def _cut_at_stop(text: str, stop: tuple[str, ...]) -> str:
    """vLLM excludes the stop string from the reply; HF ``stop_strings`` keeps it. Match vLLM."""
    cut = min((i for s in stop if (i := text.find(s)) >= 0), default=-1)
    return text[:cut] if cut >= 0 else text
