"""Resolve a ``conf/model`` node into something a backend can load, and a stable identity.

The ``model`` group node (``name``, ``hub_id``, ``path``, ``builder``, ``context_length``,
``max_images``, ``vllm_args``, ...) is shared by every backend. A model is loaded from, in order:
a ``builder`` (the self-built tiny test model, made on the fly), a local ``path``, or a ``hub_id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ledgermind.confutil import to_plain
from ledgermind.errors import ConfigError

BUILDERS = ("tiny_qwen2_vl",)


@dataclass(frozen=True)
class ModelRef:
    name: str
    hub_id: str | None = None
    path: str | None = None
    builder: str | None = None
    revision: str | None = None
    context_length: int = 4096
    max_images: int = 2
    dtype: str = "auto"
    vllm_args: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, model: Mapping[str, Any]) -> ModelRef:
        # nested OmegaConf nodes would reach JSON writers (cache key, serve flags)
        if isinstance(model, Mapping):
            model = to_plain(model) or {}
        if not isinstance(model, Mapping) or not model.get("name"):
            raise ConfigError(f"model config needs at least a 'name'; got {dict(model or {})!r}")
        builder = model.get("builder")
        if builder is not None and builder not in BUILDERS:
            raise ConfigError(f"unknown model builder {builder!r}; known: {', '.join(BUILDERS)}")
        if not (builder or model.get("path") or model.get("hub_id")):
            raise ConfigError(f"model {model['name']!r} needs one of 'builder', 'path' or 'hub_id'")
        known = {f.name for f in fields(cls)}
        given = {k: v for k, v in model.items() if k in known and v is not None}
        return cls(**given | {"name": str(model["name"])})

    def engine_args(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """vLLM engine arguments: ``vllm_args`` (+ ``overrides``) with the model's own limits as defaults.

        The one source of the image-token budget (``mm_processor_kwargs``), context length and
        images per prompt, shared by the in-process engine and ``scripts/serve.py`` so that a
        server and an in-process run see images the same way.
        """
        args = {**dict(self.vllm_args), **dict(overrides or {})}
        args.setdefault("max_model_len", self.context_length)
        args.setdefault("limit_mm_per_prompt", {"image": self.max_images, "video": 0})
        return args

    @property
    def served_name(self) -> str:
        """What a server started by ``scripts/serve.py`` serves and ``vllm_server`` asks for."""
        return self.hub_id or self.path or self.name

    def resolve_source(self) -> str:
        """A local directory or hub id loadable by transformers/vLLM; builds the tiny model if asked."""
        if self.builder == "tiny_qwen2_vl":
            from ledgermind.backends.tiny import build_tiny_qwen2_vl

            return str(build_tiny_qwen2_vl(self.path))
        if self.path:
            if not Path(self.path).expanduser().exists():
                raise ConfigError(f"model path {self.path!r} does not exist")
            return str(Path(self.path).expanduser())
        assert self.hub_id is not None
        return self.hub_id
