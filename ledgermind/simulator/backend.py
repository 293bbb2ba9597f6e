"""``backend=simulated``: an MLLM stand-in with known, configurable failure modes (a test instrument).

Why: no real multimodal weights run on the CPU machines, and a tiny random model answers garbage,
so no run could show whether a mechanism catches what it exists to catch. This backend behaves
like an MLLM whose failures are injected at configured rates and recorded in every reply's
``meta["simulator"]``, so a Table 3 multirun can be compared with the faults that were injected.

What it sees is only what a real model sees: the request's messages (text and images) and its
sampling parameters. It recognises the task from the prompt text (``tasks.py``), reads images with
the project's own OCR (``vision.py``), and its single privileged input is the answer key of the
run's benchmark (``answer_key.py``). It never reads ``request.stage``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image

from ledgermind.backends.base import BACKENDS, Backend, BackendDescription, GenerationRequest, Reply
from ledgermind.simulator import plugin as _plugin  # registers the census section and audit check
from ledgermind.simulator.answer_key import AnswerKey, CropLocator, KeyEntry
from ledgermind.simulator.faults import Fault, FaultRates, Injected, draw_rng, rates_from_config
from ledgermind.simulator.label import LABEL, NOTE, TAGS
from ledgermind.simulator.replies import Draft, Mind, compose
from ledgermind.simulator.tasks import PromptView, Task
from ledgermind.simulator.vision import Vision, pixel_digest

FORMAT_BREAK = "Let me look at this more carefully before I commit to anything."


@BACKENDS.register("simulated")
class SimulatedBackend(Backend):
    name = "simulated"
    description = BackendDescription(label=LABEL, disclaimer=NOTE, tags=TAGS, plugin=_plugin.__name__)
    supports_structured_output = True

    def __init__(
        self,
        model: Mapping[str, Any] | None = None,
        benchmark: Mapping[str, Any] | None = None,
        seed: int = 0,
        faults: str | bool = "on",
        vision_ocr: Any = None,
        vision_cache_dir: str | None = None,
        perception_cache: str | None = None,
        crop_match_threshold: float = 0.8,
        crop_capped_side: int = 4096,
        banner: bool = True,
        answer_key: AnswerKey | None = None,
        **rates: Any,
    ) -> None:
        self.rates: FaultRates = rates_from_config(faults, **rates)
        self.seed = int(seed)
        self.key = answer_key if answer_key is not None else AnswerKey.from_benchmark(benchmark)
        self.vision = Vision(vision_ocr, vision_cache_dir, perception_cache)
        self.locator = CropLocator(self.key, threshold=crop_match_threshold, capped_side=int(crop_capped_side))
        self._model_id = f"simulated({(model or {}).get('name', 'model')})"
        if banner:
            print(f"NOTE: backend=simulated. {NOTE}. Rates: {self.rates.as_dict()}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------------ request → reply
    async def generate(self, request: GenerationRequest) -> Reply:
        import asyncio

        return await asyncio.to_thread(self.respond, request)

    def respond(self, request: GenerationRequest) -> Reply:
        text = "\n".join(m.text_content() for m in request.messages)
        images = [p for m in request.messages for p in m.images()]
        paths = [Path(p) for p in images if not isinstance(p, Image.Image)]
        task = PromptView.of(text).task
        entry = self.key.lookup(text, paths)
        if entry is None and task is Task.READ:
            entry = next((e for p in images if isinstance(p, Image.Image) and (e := self.locator.locate(p))), None)
        view = PromptView.of(text, entry.question if entry else None)
        # Greedy determinism: the draw is a function of the request (and of the model instance,
        # ``seed``). Sampling parameters are part of the request key, so a sampled request with a
        # different sampling seed is a different draw, and a repeat of the same one is not.
        rng = draw_rng(self.seed, entry.item_id if entry else "-", self._request_key(request, images))

        def look() -> list[str]:
            return [line for img in images for line in self.vision.lines(img)]

        draft = self._draft(Mind(self.rates, rng, entry, view, look, bool(images)), request)
        return Reply(
            text=draft.text,
            completion_tokens=len(draft.text.split()),
            prompt_tokens=len(text.split()),
            backend=self.name,
            model=self.model_id,
            meta={"simulator": {
                "task": view.task.value,
                "item": entry.item_id if entry else None,
                "faults": [f.to_dict() for f in draft.faults],
            }},
        )  # fmt: skip

    def _draft(self, mind: Mind, request: GenerationRequest) -> Draft:
        """Empty and format faults first (they replace the whole reply), then the task's reply."""
        if mind.rng.random() < self.rates.empty_rate:
            return Draft("", faults=[Injected(Fault.EMPTY, {})])
        broken = mind.rng.random() < self.rates.format_error_rate
        draft = compose(mind)
        if broken:
            return Draft(_break(draft, request), faults=[Injected(Fault.FORMAT, {})])
        if request.json_schema is not None and draft.payload is not None and _fits(draft.payload, request.json_schema):
            draft.text = json.dumps(draft.payload, ensure_ascii=False)
        elif request.regex:
            draft.text = _fit_regex(draft.text, request.regex)
        return draft

    def _request_key(self, request: GenerationRequest, images: list[Any]) -> str:
        """Everything that determines a reply except the stage label (which a model never sees)."""
        h = hashlib.sha256()
        for m in request.messages:
            h.update(m.role.encode() + b"\0" + m.text_content().encode() + b"\0")
        for img in images:
            h.update((pixel_digest(img) if isinstance(img, Image.Image) else self.key.digest(Path(img))).encode())
        sampled_seed = request.seed if request.temperature > 0 else None  # greedy decoding ignores the seed
        params = (request.temperature, request.max_tokens, request.stop, sampled_seed, request.regex)
        h.update(repr(params).encode() + json.dumps(request.json_schema, sort_keys=True).encode())
        return h.hexdigest()

    def lookup(self, text: str, images: list[Path]) -> KeyEntry | None:
        return self.key.lookup(text, images)


def _fits(payload: Mapping[str, Any], schema: Mapping[str, Any]) -> bool:
    """The payload has the schema's required keys with non-null values (the shapes we produce)."""
    return all(payload.get(k) is not None for k in schema.get("required", ()))


def _break(draft: Draft, request: GenerationRequest) -> str:
    """A reply that breaks the requested format: truncated JSON, or prose without the asked markers."""
    if request.json_schema is not None and draft.payload is not None:
        full = json.dumps(draft.payload, ensure_ascii=False)
        return full[: max(1, len(full) // 2)]
    return FORMAT_BREAK


def _fit_regex(text: str, pattern: str) -> str:
    """The first of: the whole reply, one of its lines, or the value after 'Answer:' that matches."""
    rx = re.compile(pattern)
    candidates = [text, *text.splitlines()]
    if "Answer:" in text:
        candidates.append(text.rsplit("Answer:", 1)[1].split("|")[0].strip())
    return next((c for c in candidates if rx.fullmatch(c)), text)
