"""Run LedgerMind on a benchmark: ``python scripts/run.py [group=option ...] [+ablation=NAME]``.

Examples::

    python scripts/run.py                                   # tiny offline CPU smoke run
    python scripts/run.py model=qwen2_5_vl_7b backend=vllm_server backend.base_urls=[http://localhost:8000/v1] \
        benchmark=mmmu_pro_standard10 +ablation=no_ecc
    python scripts/run.py -m +experiment=table3 backend.base_urls=[http://localhost:8000/v1]   # every conf/ablation variant × 3 seeds
    python scripts/run.py pipeline=official pipeline.prompt=cot benchmark=mmmu_pro_vision \
        backend=replay backend.path=../shared/data/mmmu_pro_subset/gpt4o_outputs/vision_cot.jsonl
    python scripts/run.py hydra.run.dir=outputs/2025-01-01/12-00-00   # resume that run (retries errored items)

Exit codes: 0 every item scored; 3 the run finished but some items failed (server, input, disk or
engine; one summary line on stderr with the exact command that retries exactly those; a ``-m`` sweep:
one line per job, the last with the one command that resumes the whole sweep); 2
configuration, data or preflight error, or the output directory holds another experiment or is in
use (one line on stderr, nothing ran); 4 the disk refused the run's own files (full, read-only:
one line with the resume command); 130 interrupted (Ctrl-C) and 143 terminated (SIGTERM, what a
cluster scheduler sends before pre-emption), each with one line and the resume command; 1 internal error.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, cast

import hydra
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from ledgermind.backends.cache import sweep_dir
from ledgermind.cli import run_args  # foreign flags; Hydra's composition errors in one line
from ledgermind.confutil import CONF_DIR
from ledgermind.errors import UserError, first_line, is_disk_failure, user_error_in
from ledgermind.experiment.run_summary import run_summary
from ledgermind.experiment.sweep_dirs import register_resolvers, resume_command
from ledgermind.pipeline.config import register_schemas

register_resolvers()  # hydra.sweep.subdir names multirun jobs from their overrides
register_schemas()  # conf/pipeline/ledgermind.yaml composes over PipelineConfig

EXIT_USER_ERROR = 2
EXIT_ITEM_ERRORS = 3
EXIT_DISK = 4
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process the signal ended
FULL_ERROR = "HYDRA_FULL_ERROR"


class Terminated(KeyboardInterrupt):
    """SIGTERM: stop as Ctrl-C does (finished items are kept, the resume command is printed)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


# per (multi)run job with errored items: its summary line and the command that retries them (a sweep's:
# one for all its jobs); reset by ``main``
_failed_runs: list[tuple[str, str]] = []
# non-empty once a job's task has started (reset by ``main``): an OSError that reaches ``main``
# before that came from Hydra making the run or sweep folder
_in_task: list[bool] = []


# An absolute path: the same search path (file://<repo>/conf) whether this runs as scripts/run.py,
# ``ledgermind run`` or ``python -m ledgermind run``; Hydra names the job after this module ("run").
@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def _task(cfg: DictConfig) -> None:
    from ledgermind.experiment.app import run_experiment

    _in_task.append(True)  # an OSError from here on is the run's, not Hydra's folder-making

    in_sweep = sweep_dir() is not None
    try:
        metrics = run_experiment(cfg)
        if cfg.get("report", False):
            # the HTML report, a step of this command after the run (the run itself never imports the
            # report, which reads run folders); run_experiment moved output_dir under resume=new
            from ledgermind.report import build_report

            print(f"report: {build_report(Path(str(cfg.output_dir)))}", flush=True)
    except KeyboardInterrupt as e:
        what = "terminated (SIGTERM)" if isinstance(e, Terminated) else "interrupted"
        print(f"error: {what}; finished items are kept; resume with: {_resume(cfg)}", file=sys.stderr)
        raise SystemExit(EXIT_TERMINATED if isinstance(e, Terminated) else EXIT_INTERRUPTED) from None
    except Exception as e:
        if is_disk_failure(e):  # a full or read-only disk under the run's own files (or its response cache)
            what = str(e)
            if isinstance(e, OSError) and e.strerror:
                what = f"{e.strerror}: {e.filename}" if e.filename else e.strerror
            print(
                f"error: the disk refused the run's files ({what}); finished items are kept; "
                f"free space (or make it writable) and resume with: {_resume(cfg)}",
                file=sys.stderr,
            )
            raise SystemExit(EXIT_DISK) from None
        # a config value missing/invalid, a bad path; a constructor's ConfigError arrives wrapped by
        # Hydra's instantiate: still the user's to fix
        if (cause := e if isinstance(e, OmegaConfBaseException) else user_error_in(e)) is None:
            raise
        line = run_args.composition_error(cause) or first_line(cause)
        print(f"error: {line}", file=sys.stderr)  # OmegaConf's later lines (full_key: ...) add nothing
        _drop_empty_job_dir()
        raise SystemExit(EXIT_USER_ERROR) from None
    shown = cfg.get("print_census")
    print(
        run_summary(metrics, Path(str(cfg.output_dir)), census=not in_sweep if shown is None else bool(shown))
    )
    if metrics["errors"]:
        _failed_runs.append((failure_summary(metrics, str(cfg.output_dir) if in_sweep else ""), _resume(cfg)))
    _in_task.clear()  # the job is done: the next job's folder is Hydra's to make again


def _refuse_folder(e: OSError, *, sweep: bool) -> NoReturn:
    """Hydra makes the job's folder before the task starts, so a ``hydra.run.dir`` naming a file
    (or a folder under one), a folder it may not write or a full disk fails in Hydra's own
    ``mkdir``: one line naming the folder (exit 2; a disk that refuses it: exit 4), never a traceback."""
    key = "hydra.sweep.dir" if sweep else "hydra.run.dir"
    where = f"the {'sweep' if sweep else 'run'} folder {e.filename}" if e.filename else f"the {key} folder"
    why = f"{e.strerror}: {e.filename}" if e.strerror and e.filename else (e.strerror or str(e))
    if e.errno in (errno.EEXIST, errno.ENOTDIR):
        print(
            f"error: {where} cannot be made ({why}): a file is in its way; choose another {key}",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_USER_ERROR) from None
    if is_disk_failure(e):
        print(
            f"error: {where} cannot be made ({why}): free space (or make it writable) "
            f"or choose another {key}",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_DISK) from None
    print(f"error: {where} cannot be made ({why}); choose another {key}", file=sys.stderr)
    raise SystemExit(EXIT_USER_ERROR) from None


def _drop_empty_job_dir() -> None:
    """Hydra makes the job's folder before the task starts; a run refused before it claimed the
    folder (a bad value, missing data) leaves it empty, and an empty folder would look like a run
    that did nothing. Only an empty real folder goes, as when a claimed run is taken back; so do the
    empty folders above it that the run-dir template names by the start time alone (the default
    ``outputs/${now:%Y-%m-%d}/...``'s date folder), never one the user named."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    with contextlib.suppress(Exception):  # no Hydra context, or a folder is not empty: keep it
        hc = HydraConfig.get()
        folder = Path(str(hc.runtime.output_dir))
        if folder.is_symlink():
            return
        folder.rmdir()
        if hc.mode != RunMode.RUN:
            return
        template = Path(str(cast(dict, OmegaConf.to_container(hc.run, resolve=False))["dir"]))
        for part, parent in zip(reversed(template.parts[:-1]), folder.parents, strict=False):
            if "${now:" not in part or part.count("${") != part.count("${now:") or parent.is_symlink():
                return
            parent.rmdir()


def failure_summary(metrics: dict, job: str = "") -> str:
    """`[<job dir>: ]3 of 59 items failed (model call failed (official): …)`."""
    causes = metrics.get("error_causes") or {}
    top = next(iter(causes), "see results.jsonl")
    return f"{job + ': ' if job else ''}{metrics['errors']} of {metrics['n_items']} items failed ({top})"


def _resume(cfg: DictConfig) -> str:
    """The command that resumes this run in its own directory, whatever its timestamp; in a sweep
    this process launched, the command that resumes every job of the sweep (a job a launcher runs
    elsewhere, e.g. submitit, has no sweep command line: its own job's command)."""
    from hydra.core.hydra_config import HydraConfig

    sweep = sweep_dir()
    if sweep and {"-m", "--multirun"} & set(sys.argv[1:]):  # this process launched the sweep
        return resume_command(sys.argv[1:], sweep, sweep=True)
    hc = HydraConfig.get()
    internal = (
        "hydra.run.",
        "hydra.sweep.",
        "hydra.mode",
        "hydra.job.",
        "hydra.runtime.",
        "hydra.output_subdir",
    )
    extra = [o for o in hc.overrides.hydra if not o.startswith(internal)]  # e.g. hydra.searchpath
    return resume_command([*extra, *hc.overrides.task], Path(str(cfg.output_dir)))


def main(argv: Sequence[str] | None = None) -> None:
    """The run command; ``argv`` (default: ``sys.argv[1:]``) becomes Hydra's command line."""
    _failed_runs.clear()
    if argv is not None:
        sys.argv[1:] = list(argv)
    try:
        sys.argv[1:] = run_args.preprocess(sys.argv[1:])
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(EXIT_USER_ERROR) from None
    signal.signal(signal.SIGTERM, _on_sigterm)  # a scheduler's pre-emption stops like Ctrl-C
    from ledgermind.experiment.progress import start_sweep

    start_sweep(run_args.sweep_jobs(sys.argv[1:]))  # -m in this process: one bar over jobs × items
    full_error = os.environ.get(FULL_ERROR)
    os.environ[FULL_ERROR] = "1"  # Hydra raises its composition error instead of printing five lines
    _in_task.clear()
    try:
        _task()
    except Exception as e:  # the task reports its own errors; what reaches here is Hydra's refusal
        line = run_args.composition_error(e)  # Hydra's MissingConfigException is an OSError too
        if line is None and isinstance(e, OSError) and not _in_task:  # Hydra making the run (or sweep) folder
            _refuse_folder(e, sweep=bool({"-m", "--multirun"} & set(sys.argv[1:])))
        if line is None:
            raise
        print(f"error: {line}", file=sys.stderr)
        raise SystemExit(EXIT_USER_ERROR) from None
    finally:
        if full_error is None:
            del os.environ[FULL_ERROR]
        else:
            os.environ[FULL_ERROR] = full_error
    for line, _ in _failed_runs[:-1]:
        print(f"error: {line}", file=sys.stderr)
    if _failed_runs:
        line, retry = _failed_runs[-1]
        print(f"error: {line}; retry them with: {retry}", file=sys.stderr)
        raise SystemExit(EXIT_ITEM_ERRORS)
