"""The backend a run identity names, and what it says about its runs.

Why: ``metrics.json["identity"]["backend"]`` records the backend's class name (the last segment of
its ``_target_``, or the registered name of a ``name:`` config). Readers of a run (the summary,
Table 3, the report, the audit) need that backend's own description — its label, its disclaimer —
and its census sections and S-RFA checks registered, without any of them importing a particular
backend. So the recorded name is resolved here, lazily, to the class that answered: a registered
name through ``BACKENDS``, a class name through the ``_target_`` of the ``conf/backend/*.yaml`` that
builds it (the one place where each backend's ``module.Class`` is written). Importing that class
imports its module, which registers its plugin (``BackendDescription.plugin``), which is imported
here too, so a run reads the same in every process whatever that process imported before.

A name no config and no registry knows (a custom test backend, a run from another checkout) is a
backend with nothing to say: ``BackendDescription()``.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path

import yaml

from ledgermind.backends.base import BACKENDS, Backend, BackendDescription
from ledgermind.confutil import CONF_DIR


def describe_backend(recorded: str, conf_dir: Path = CONF_DIR) -> BackendDescription:
    """The description of the backend named ``recorded``, its plugin imported (module docstring)."""
    if (cls := backend_class(recorded, conf_dir)) is None:
        return BackendDescription()
    description = cls.description
    if description.plugin:
        importlib.import_module(description.plugin)
    return description


def backend_class(recorded: str, conf_dir: Path = CONF_DIR) -> type[Backend] | None:
    """The class behind a recorded backend name, or None when nothing names it."""
    if recorded in BACKENDS:
        return BACKENDS.get(recorded)
    if (target := configured_targets(conf_dir).get(recorded)) is None:
        return None
    module, _, attr = target.rpartition(".")
    cls = getattr(importlib.import_module(module), attr, None)
    return cls if isinstance(cls, type) and issubclass(cls, Backend) else None


@lru_cache(maxsize=4)
def configured_targets(conf_dir: Path = CONF_DIR) -> dict[str, str]:
    """``{class name: "module.Class"}`` over the ``_target_`` of every ``conf/backend/*.yaml``."""
    targets: dict[str, str] = {}
    for path in sorted((conf_dir / "backend").glob("*.yaml")):
        node = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        target = node.get("_target_") if isinstance(node, dict) else None
        if isinstance(target, str) and "." in target:
            targets[target.rsplit(".", 1)[-1]] = target
    return targets
