"""The official MMMU-Pro evaluation protocol as an agent: one model call, the official prompt, no tools.

Why it exists: a LedgerMind number means something only next to the number the same model gets
under the benchmark's own protocol, computed by the same loader, parser and metrics. This agent
reproduces ``mmmu-pro/infer/*.py`` of MMMU-Benchmark/MMMU:

* prompts come from the official ``prompts.yaml`` (``{direct, cot} × {standard, vision}``), read
  from a configurable file (``pipeline.prompts_path``), selected by ``pipeline.prompt``;
* **standard**: ``f"{question}\\n{options}\\n{prompt}"`` with options as ``"A. text"`` lines, and
  every ``<image N>`` replaced by ``<image>`` (``replace_images_tokens``); the images are
  ``image_1 … image_k`` in index order (``origin_mmmu_doc_to_visual``), sent before the text in
  one user message;
* **vision**: the page image and the vision prompt only (question and options are pixels).

The whole reply is the answer (``Trajectory.answer``), so the scorer runs the official parser on
everything the model wrote, as ``evaluate.py`` does. A failed call is a ``ModelCall`` with
``error`` set — the harness reports the item as an error, never as a wrong answer. Calls are
recorded by ``call_log``, as every agent's are (``request_key``, ``step``, ``meta`` included).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from ledgermind.backends.base import Backend, ContentPart, GenerationRequest, Message
from ledgermind.backends.cache import request_key
from ledgermind.backends.reasoning import separate
from ledgermind.backends.sample_log import logged_messages
from ledgermind.benchmarks.item import Item
from ledgermind.confutil import to_plain
from ledgermind.errors import ConfigError, LedgerMindError
from ledgermind.pipeline.call_log import record_call
from ledgermind.pipeline.config import build
from ledgermind.pipeline.render import option_lines
from ledgermind.trajectory import PathKind, Trajectory

STAGE = "official"
IMAGE_TOKEN = "<image>"  # what replace_images_tokens puts where "<image N>" stood


PROMPTS = ("direct", "cot")  # pipeline.prompt
SETTINGS = ("standard", "vision")  # item.meta["setting"] (a standard setting names its option count)


@dataclass(frozen=True)
class OfficialConfig:
    prompts_path: Path | None = None  # required: the official prompts.yaml
    prompt: str = "cot"
    max_tokens: int = 4096
    temperature: float = 0.0
    seed: int = 0


def load_prompts(path: Path | None, prompt: str) -> dict[str, str]:
    """The ``prompt`` kind's ``{"standard": ..., "vision": ...}`` of the official YAML, which must
    hold both kinds for both settings."""
    if path is None:
        raise ConfigError("pipeline.prompts_path is required: the official MMMU-Pro prompts.yaml")
    if prompt not in PROMPTS:
        raise ConfigError(f"pipeline.prompt must be direct or cot, got {prompt!r}")
    try:
        data = yaml.safe_load(path.expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"pipeline.prompts_path: cannot read {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"pipeline.prompts_path: {path} is not valid YAML ({exc})") from None
    for kind in PROMPTS:
        for setting in SETTINGS:
            if not isinstance((data or {}).get(kind, {}).get(setting), str):
                raise ConfigError(f"{path} lacks the {kind}/{setting} prompt")
    return data[prompt]


def setting_of(item: Item) -> str:
    return "vision" if item.meta.get("setting") == "vision" else "standard"


def replace_images_tokens(text: str) -> str:
    """The official rule: ``<image 1>`` … ``<image 7>`` become ``<image>``."""
    return re.sub(r"<image [1-7]>", IMAGE_TOKEN, text)


def official_content(item: Item, prompts: Mapping[str, str]) -> list[ContentPart]:
    """Images then text, as the official inference scripts build one user turn."""
    images: list[ContentPart] = [Path(p) for p in item.images]
    if setting_of(item) == "vision":
        return [*images, prompts["vision"]]
    text = f"{item.question}\n{option_lines(item.options or [])}\n{prompts['standard']}"
    return [*images, replace_images_tokens(text)]


class OfficialAgent:
    """``async solve(item) -> Trajectory`` under the official protocol (one call, no tools)."""

    def __init__(self, backend: Backend, cfg: OfficialConfig) -> None:
        self.backend, self.cfg = backend, cfg
        self.prompts = load_prompts(cfg.prompts_path, cfg.prompt)

    def request(self, item: Item) -> GenerationRequest:
        return GenerationRequest(
            messages=[Message("user", official_content(item, self.prompts))],
            temperature=self.cfg.temperature,
            max_tokens=self.cfg.max_tokens,
            seed=self.cfg.seed,
            stage=STAGE,
            item_id=item.id,
        )

    async def solve(self, item: Item) -> Trajectory:
        traj = Trajectory(item_id=item.id, question=item.question, path=PathKind.OFFICIAL)
        traj.profile = {
            "question_types": ["mcq"],
            "protocol": f"mmmu_pro_official/{self.cfg.prompt}/{setting_of(item)}",
        }
        t0 = time.perf_counter()
        key, sample = "", []
        try:
            request = self.request(item)
            sample = logged_messages(request.messages)
            # the images' hashes as the logged sample holds them (an unreadable one: ""): no image is
            # read twice, and an unreadable image stays the backend's failure to report
            digests = [p["sha256"] for m in sample for p in m["content"] if p["type"] == "image"]
            key = request_key(request, self.backend.model_id, digests)
            reply = separate(await self.backend.generate(request))  # thinking is never the answer
        except Exception as exc:
            cause = str(exc) if isinstance(exc, LedgerMindError) else f"{type(exc).__name__}: {exc}"
            record_call(traj, self.backend, STAGE, time.perf_counter() - t0, key, sample, error=cause)
            traj.timings = {"total_s": time.perf_counter() - t0, "model_s": time.perf_counter() - t0}
            return traj
        finally:
            self.backend.item_done(item.id)  # its one call is over: not active on its server any more
        dt = time.perf_counter() - t0
        record_call(traj, self.backend, STAGE, dt, key, sample, reply=reply)
        traj.answer = traj.raw_answer = reply.text  # the whole reply: the official parser reads all of it
        traj.notes += [f"image budget: {note}" for note in reply.meta.get("image_budget", [])]
        traj.timings = {"total_s": dt, "model_s": dt, "tool_s": 0.0, "own_s": 0.0}
        return traj


def build_official_agent(cfg: Any, backend: Backend) -> OfficialAgent:
    """Agent factory for ``pipeline=official`` (selected by ``pipeline.agent_factory``)."""
    node = to_plain(cfg.get("pipeline")) or {}
    node.setdefault("seed", cfg.get("seed", 0))
    own = {f.name: node[f.name] for f in fields(OfficialConfig) if f.name in node}
    return OfficialAgent(backend, build(OfficialConfig, own, "pipeline"))
