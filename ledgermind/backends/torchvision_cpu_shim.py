"""Make a CUDA ``torchvision`` wheel importable beside a CPU-only ``torch`` (CPU test environments only).

The problem: PyPI's ``torchvision`` wheel is a CUDA build. Beside ``torch==X+cpu`` its compiled
extension ``torchvision._C`` fails to load, which torchvision tolerates (``extension._has_ops()``
returns False and every meta registration is guarded by it) — except two unguarded
``@torch.library.register_fake("torchvision::nms" / "torchvision::qnms")`` decorators in
``torchvision/_meta_registrations.py``. They raise ``RuntimeError: operator torchvision::nms does
not exist``, so ``import torchvision`` fails, and with it transformers 5.x's Qwen2-VL image
processor (and vLLM's multimodal path).

The fix: just before ``torchvision._meta_registrations`` executes, and only if the compiled ops
did *not* load, declare the two operator schemas (same signatures as torchvision's C++) through
``torch.library``. The fake registrations then succeed; calling the ops still fails with
torchvision's own "ops not available" error, which is the honest behaviour without ``_C``.
When ``_C`` loads (any GPU install) the shim does nothing.

It is activated by a one-line ``.pth`` file that ``scripts/cpu_torchvision_fix.py install`` puts
in the environment's site-packages. The ``.pth`` only installs an import hook (no torch import at
interpreter start-up), and it reaches subprocesses (vLLM's engine core) too. This module must stay
self-contained (stdlib + torch only) because it is copied next to the ``.pth``. Hence no module
imports it: ``scripts/cpu_torchvision_fix.py`` copies this file by path (``make env`` runs it).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

TARGET = "torchvision._meta_registrations"
# Signatures of the fake kernels in torchvision/_meta_registrations.py (= torchvision/csrc/ops/nms.cpp).
SCHEMAS: dict[str, str] = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}
_LIBRARIES: list[Any] = []  # keep torch.library fragments alive for the process lifetime


def declare_missing_schemas() -> list[str]:
    """Declare the torchvision op schemas that are missing; returns the names declared."""
    import torch

    missing = [name for name in SCHEMAS if not _op_exists(torch, name)]
    if missing:
        lib = torch.library.Library("torchvision", "FRAGMENT")
        for name in missing:
            lib.define(SCHEMAS[name])
        _LIBRARIES.append(lib)
    return missing


def _op_exists(torch: Any, name: str) -> bool:
    try:
        getattr(torch.ops.torchvision, name)
    except (AttributeError, RuntimeError):
        return False
    return True


class _Loader(importlib.abc.Loader):
    """Wraps the real loader of ``torchvision._meta_registrations`` to declare schemas first."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self._inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        extension = sys.modules.get("torchvision.extension")
        if extension is not None and not extension._has_ops():
            declare_missing_schemas()
        self._inner.exec_module(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Any, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


def install() -> None:
    """Put the hook first on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
