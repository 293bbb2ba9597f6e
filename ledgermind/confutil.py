"""Config helpers shared by the entry points."""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import os
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

#: The Hydra config tree (``conf/``) every entry point and reader composes from.
CONF_DIR = Path(__file__).resolve().parents[1] / "conf"

#: Names the folder of the real evaluation data (``conf/benchmark/*.yaml`` read it too).
SHARED_DATA_ENV = "LEDGERMIND_SHARED_DATA"


def shared_data_dir() -> Path:
    """The real evaluation data: ``$LEDGERMIND_SHARED_DATA``, else ``shared/data`` beside the checkout.

    Why a function: the benchmark configs honour the variable at composition time
    (``${oc.env:LEDGERMIND_SHARED_DATA,../shared/data}``); every command and study default must
    follow the same variable when it is read, not when a module was first imported."""
    return Path(os.environ.get(SHARED_DATA_ENV) or CONF_DIR.parent.parent / "shared" / "data")


def cache_root() -> Path:
    """Where derived files (rendered pages, the tiny model, perception payloads, OCR keys) live
    unless a config says otherwise: ``$LEDGERMIND_CACHE``, else ``ledgermind`` under
    ``$XDG_CACHE_HOME`` or ``~/.cache``; never site-packages. Read when called, as above."""
    if own := os.environ.get("LEDGERMIND_CACHE"):
        return Path(own).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "ledgermind"


def instantiate(node: Any, key: str, **kwargs: Any) -> Any:
    """Hydra's ``instantiate`` of the config node at ``key``, where what Hydra would raise as a
    traceback but the user made is a config error in one line naming the key: a ``_target_`` that
    does not import (for a misspelt name in a module that imports, with the closest name there), or
    a class that refuses the node's values (``ValueError`` / ``TypeError`` from its constructor). A
    ``UserError`` the class raised itself comes out as it is, unwrapped, so that a run refused by
    it is taken back like any refusal before its first item."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate as hydra_instantiate

    from ledgermind.errors import ConfigError, LedgerMindError, UserError, first_line

    try:
        return hydra_instantiate(node, **kwargs)
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, UserError):  # the class's own one-line refusal: the caller's to handle as such
            raise cause from None
        if isinstance(cause, ValueError | TypeError) and not isinstance(cause, LedgerMindError):
            if _raised_constructing(cause):  # a range, a type, an unknown keyword: a config value
                raise ConfigError(f"{key}: {type(cause).__name__}: {first_line(cause)}") from exc
        if not str(exc).startswith("Error locating target") or cause is None:
            raise
        target = str(node.get("_target_") if isinstance(node, Mapping) else node)
        why = str(cause).strip().splitlines()[-1]  # Hydra's own hint: "Are you sure that …"
        module, _, name = target.rpartition(".")
        with contextlib.suppress(Exception):
            close = difflib.get_close_matches(name, dir(importlib.import_module(module)), n=1)
            why = f"did you mean {module}.{close[0]}?" if close else why
        raise ConfigError(f"{key}._target_: cannot import {target!r} ({why})") from None


def _raised_constructing(exc: BaseException) -> bool:
    """Whether ``exc`` came from the call itself (a keyword the class does not take) or from the
    class's own ``__init__`` / ``__post_init__`` checking its values, and not from code they called
    (loading weights, opening a file): only the former is the node's value; the latter keeps its
    traceback, as a bug must."""
    codes = [frame.f_code for frame, _ in traceback.walk_tb(exc.__traceback__)]
    own = [c for c in codes if "hydra" not in Path(c.co_filename).parts]
    return all(c.co_name in ("__init__", "__post_init__") for c in own)


def parse_yaml_in_c() -> None:
    """Make OmegaConf (and so Hydra) parse YAML with libyaml's C parser where PyYAML has it.

    Why: a run composes its config twice (Hydra reads the mode, then the job), each time from about
    twenty commented YAML files, and PyYAML's pure-Python scanner was half of reading them (a fifth
    of a composition; the test suite composes hundreds of times). Only the parser changes: the loader
    is OmegaConf's own class (its float and timestamp rules, its duplicate-key check, its
    constructors) with libyaml producing the nodes, so every config composes to the same values
    (tests/experiment/test_config.py compares both on every file of ``conf/``)."""
    import yaml
    from omegaconf import _utils, basecontainer

    if getattr(yaml, "__with_libyaml__", False) and not hasattr(_utils.get_yaml_loader, "python_loader"):
        _utils.get_yaml_loader = basecontainer.get_yaml_loader = _c_loader(_utils.get_yaml_loader)


def _c_loader(python_loader: Any) -> Any:
    @functools.cache
    def get_yaml_loader() -> Any:
        from yaml.constructor import SafeConstructor
        from yaml.cyaml import CParser
        from yaml.resolver import Resolver

        class CParsedLoader(CParser, python_loader()):  # type: ignore[misc]
            def __init__(self, stream: Any) -> None:
                CParser.__init__(self, stream)
                SafeConstructor.__init__(self)
                Resolver.__init__(self)

        return CParsedLoader

    get_yaml_loader.python_loader = python_loader  # type: ignore[attr-defined]
    return get_yaml_loader


def to_plain(node: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A resolved plain dict from an OmegaConf node or any mapping (None stays None).

    Why deep: a plain dict can still hold OmegaConf nodes (``dict(cfg.model)`` keeps
    ``vllm_args.mm_processor_kwargs.size`` a ``DictConfig``), and such a value crashes the first
    JSON writer it reaches. Everything that leaves Hydra goes through here and comes out as plain
    dicts, lists and scalars all the way down.
    """
    return None if node is None else dict(plain_value(node))


def container(node: Any, *, resolve: bool = True, throw_on_missing: bool = False) -> dict[str, Any]:
    """``OmegaConf.to_container`` of a mapping node, with string keys (a config node's keys are
    option names: callers pass them on as keyword arguments)."""
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(node, resolve=resolve, throw_on_missing=throw_on_missing)
    if not isinstance(plain, dict):
        raise TypeError(f"a config mapping was expected, got a {type(plain).__name__}")
    return {str(k): v for k, v in plain.items()}


def plain_value(value: Any) -> Any:
    """Any value with every OmegaConf container (at any depth) replaced by a resolved dict or list."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(value, DictConfig | ListConfig):
        return OmegaConf.to_container(value, resolve=True)
    if isinstance(value, Mapping):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(plain_value(v) for v in value)
    return value


def flat_items(tree: Mapping[str, Any], sep: str = ".") -> Iterator[tuple[str, Any]]:
    """Every value of a nested mapping that is not itself a mapping, by its joined key, depth-first in
    the mapping's own order: ``{"a": {"b": 1}, "c": 2}`` gives ``("a.b", 1), ("c", 2)``; an empty
    mapping has no values. For readers that show a nested record in one table or one flat namespace
    (the census rows of the report, the W&B summary)."""
    for key, value in tree.items():
        if isinstance(value, Mapping):
            for inner, leaf in flat_items(value, sep):
                yield f"{key}{sep}{inner}", leaf
        else:
            yield str(key), value


def option_node(group: str, option: str, conf_dir: Path | None = None) -> Any:
    """``conf/<group>/<option>.yaml`` with the bases its defaults list names in the same group
    (``defaults: [_loader, _self_]``) merged in order, as an unresolved ``DictConfig`` (no
    interpolation resolved, no code run) without the ``defaults`` key.

    Why: an option states only what it changes over its base (``benchmark/_loader``); a reader that wants the option's keys (the variant list, the check of
    ``benchmark.limit=…`` on the command line) must see the base's keys too, exactly as Hydra does.
    """
    from omegaconf import DictConfig, ListConfig, OmegaConf

    folder = Path(conf_dir or CONF_DIR) / group
    node = OmegaConf.load(folder / f"{option}.yaml")
    if not isinstance(node, DictConfig):
        raise ValueError(f"{folder / option}.yaml is not a mapping")
    merged: DictConfig | ListConfig = OmegaConf.create({})
    defaults = list(node.pop("defaults", None) or ["_self_"])
    for entry in defaults if "_self_" in defaults else [*defaults, "_self_"]:
        if entry == "_self_":
            merged = OmegaConf.merge(merged, node)
        elif isinstance(entry, str):  # a base of the same group; `override /group: x` entries are Hydra's
            merged = OmegaConf.merge(merged, option_node(group, entry, conf_dir))
    return merged
