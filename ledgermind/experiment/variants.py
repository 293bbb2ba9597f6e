"""The Table 3 variants, from their one home: ``conf/ablation/NAME.yaml``.

Why one home: a list of variants kept by hand in several places (Table 3's rows, the report's
structural zeros, the Makefile's sweep, help texts) makes a new ablation touch many files, and a
forgotten copy silently drops a row. Each variant file states what the run does (the flags it
turns, which also declares them: ``pipeline/config.declare_flags``), its ``name`` (the option
name, which the run records as its identity's ``variant``) and, under ``table``, how it is shown:

    table:
      display: w/o Dual-Read        # the row's name in Table 3 and the report
      row: 4                        # its place in the paper's row order (full first; 3.5 fits between)
      structural: [dual_read, ...]  # census keys the variant cannot reach (grey, not "never fired")

The ``table`` node is presentation, not experiment: the run drops it before it records or hashes
its config (``experiment/app.check_schemas``), so renaming a row never changes a run's identity or
splits a resume. A reader finds a run's variant by that recorded name (``variant``), never by its flags.

Read as data (``confutil.option_node``: the file over its base, nothing resolved), never composed
by Hydra: a report reading old runs resolves no interpolation and runs no code. The dispatcher's
unreachable paths are not listed here; they follow from the flags (``report/census_table.structural_zeros``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from ledgermind.confutil import CONF_DIR, container, option_node
from ledgermind.errors import ConfigError, first_line
from ledgermind.pipeline.config import AblationFlags, ablation_flags

GROUP = "ablation"
TABLE_KEY = "table"


@dataclass(frozen=True)
class Variant:
    """One row of Table 3: its config name, how it is shown, and the flags it runs with."""

    name: str
    display: str
    row: float
    flags: AblationFlags  # the defaults with this variant's changes
    structural: tuple[str, ...] = ()


def load_variants(conf_dir: Path | None = None) -> tuple[Variant, ...]:
    """Every variant of ``<conf_dir>/ablation/`` (default ``conf/``) in row order; files starting
    with ``_`` are bases, not variants."""
    return _load(Path(conf_dir or CONF_DIR).resolve())


@lru_cache(maxsize=4)
def _load(conf_dir: Path) -> tuple[Variant, ...]:
    folder = conf_dir / GROUP
    variants = tuple(
        sorted(
            (_variant(p) for p in sorted(folder.glob("*.yaml")) if not p.name.startswith("_")),
            key=lambda v: v.row,
        )
    )
    _check_unique(variants, folder)
    return variants


def _variant(path: Path) -> Variant:
    """The variant file (with any base its defaults list names), read unresolved."""
    from omegaconf.errors import OmegaConfBaseException

    try:
        raw = container(option_node(GROUP, path.stem, path.parent.parent), resolve=False)
    except (OSError, ValueError, yaml.YAMLError, OmegaConfBaseException) as e:
        raise ConfigError(f"{path}: cannot read the variant file: {e}") from e
    table = raw.get(TABLE_KEY)
    if not isinstance(table, Mapping) or not {"display", "row"} <= set(table):
        raise ConfigError(
            f"{path}: needs a '{TABLE_KEY}:' node with display and row (experiment/variants.py)"
        )
    if raw.get("name") != path.stem:
        raise ConfigError(f"{path}: name must be {path.stem!r} (the option name), got {raw.get('name')!r}")
    try:
        flags = ablation_flags(raw)
    except OmegaConfBaseException as e:
        raise ConfigError(f"{path}: {first_line(e)}") from e
    structural = tuple(str(k) for k in table.get("structural") or ())
    return Variant(path.stem, str(table["display"]), float(table["row"]), flags, structural)


def _check_unique(variants: tuple[Variant, ...], folder: Path) -> None:
    """Two variants on one row, or with the same flags, would make a table (or a census) ambiguous."""
    for what, attr in (("row", "row"), ("display name", "display"), ("flags", "flags")):
        seen: dict[Any, str] = {}
        for v in variants:
            if (first := seen.setdefault(getattr(v, attr), v.name)) != v.name:
                raise ConfigError(f"{folder}: {first} and {v.name} have the same {what}")


def names() -> tuple[str, ...]:
    """The variant names in row order (``full`` first)."""
    return tuple(v.name for v in load_variants())


def display_name(name: str) -> str:
    """The row name of a variant; an unlisted one (``custom``, ``official_cot``) shows its own name."""
    return listed.display if (listed := variant(name)) is not None else name


def variant(name: str) -> Variant | None:
    """The listed variant of that name (a run's recorded ``variant``); None: not a listed one
    (``custom``, ``official_cot``)."""
    return next((v for v in load_variants() if v.name == name), None)
