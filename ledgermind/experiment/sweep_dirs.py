"""Naming a multirun's job folders from its swept keys, and the command that resumes a job.

Hydra-specific (it parses overrides and registers the ``ledgermind_sweep_subdir`` resolver used
by ``conf/config.yaml``), so it lives with the experiment, not with the run-folder format.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


# ------------------------------------------------------------------------------ naming and resuming
def sweep_overrides(argv: Sequence[str], params: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The override a multirun runs with per key: an experiment config's ``hydra.sweeper.params``
    (``params``) overridden by the command line (``+ablation=full,no_ecc``, ``seed=range(3)``), the
    last value of a key winning as in Hydra's basic sweeper. None when the line does not parse
    (Hydra then says why in its own words)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    args = [f"{k}={v}" for k, v in (params or {}).items()]
    args += [a for a in argv if "=" in a and not a.startswith("-")]
    try:
        parsed = OverridesParser.create().parse_overrides(args)
    except HydraException:
        return None
    return {o.key_or_group.lstrip("+~"): o for o in parsed}


def swept_keys(argv: Sequence[str], params: Mapping[str, Any] | None = None) -> set[str] | None:
    """The keys a multirun sweeps (``seed=0`` given to an experiment that sweeps seeds runs one seed:
    not swept). None when they cannot be told."""
    last = sweep_overrides(argv, params) or {}
    keys = {k for k, o in last.items() if o.is_sweep_override() and not k.startswith("hydra.")}
    return keys or None


def sweep_subdir(
    task_overrides: Sequence[str], argv: Sequence[str] | None = None, params: Mapping[str, Any] | None = None
) -> str:
    """A multirun job's directory name from the values of its swept keys (``ablation=no_ecc``,
    ``pipeline.prompt=cot,seed=1``), sorted by key: a relaunch with the sweep values in another
    order finds its own jobs, and two jobs never share a directory. A key a resume may change
    (``limit``, ``concurrency``) is part of the name only when it is swept: a sweep over ``limit=2,4``
    is two experiments that must not resume each other, while ``limit=10`` given to every job of a
    relaunch still finds the jobs. The swept keys come from the command line and the experiment
    config's ``hydra.sweeper.params`` (``swept_keys``); when they cannot be told, every override
    names the job.

    Characters unsafe in a file name become ``_``; a long name keeps a readable prefix and a hash.
    """
    import sys

    swept_bare = swept_keys(sys.argv[1:] if argv is None else argv, params)
    pairs = []
    for o in task_overrides:
        key, _, value = str(o).partition("=")
        bare = key.lstrip("+~")
        if swept_bare is None or bare in swept_bare:
            pairs.append(f"{bare}={value}")
    text = ",".join(sorted(pairs))
    if not text:
        return "default"
    name = re.sub(r"[^A-Za-z0-9.,=_+-]+", "_", text).strip("._") or "job"
    if name != text or len(name) > 120:
        name = f"{name[:100]}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"
    return name


def resume_command(args: Sequence[str], out_dir: Path, *, sweep: bool = False) -> str:
    """The exact command that resumes ``out_dir``: a run's overrides plus its ``hydra.run.dir``, or
    (``sweep``) the sweep's whole command line plus its ``hydra.sweep.dir``, so every job resumes in
    its own folder and the sweep's shared response cache (a file of the sweep folder) is found again."""
    key = "hydra.sweep.dir" if sweep else "hydra.run.dir"
    keep = [a for a in args if not a.startswith((f"{key}=", "resume="))]
    if sweep and not {"-m", "--multirun"} & set(keep):
        keep.insert(0, "-m")
    return "python scripts/run.py " + " ".join(
        shlex.quote(a) for a in [*keep, f"{key}={hydra_value(str(out_dir))}"]
    )


def hydra_value(text: str) -> str:
    """``text`` as a value Hydra's override parser reads back unchanged (a job folder's ``seed=0``
    is quoted: an unquoted ``=`` is a parse error)."""
    return text if re.fullmatch(r"[\w./:@%+~-]+", text) else "'" + text.replace("'", "\\'") + "'"


def register_resolvers() -> None:
    """``${ledgermind_sweep_subdir:...}`` for ``hydra.sweep.subdir`` (conf/config.yaml)."""
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("ledgermind_sweep_subdir"):
        OmegaConf.register_new_resolver(
            "ledgermind_sweep_subdir",
            lambda overrides, params=None: sweep_subdir(list(overrides), params=params),
        )
