"""Helpers for the experiment-harness tests: run scripts/run.py in a subprocess with fakes."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEST_CONF = Path(__file__).resolve().parent / "conf"

# scripts/run.py with the fake agent/scorer/benchmark and the scripted backend: no model, no data.
FAKE_OVERRIDES = [
    f"hydra.searchpath=[file://{TEST_CONF}]",
    "benchmark=fake",
    "backend=scripted",
    "backend.allow_scripted=true",
    "agent_factory=tests.experiment.fakes.build_fake_agent",
    "scorer=tests.experiment.fakes.fake_score",
    "progress=false",
]


WRAPPER = re.compile(r"^from (\S+) import main$", re.MULTILINE)  # scripts/<name>.py: the package main it runs


def subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_AGENT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["WANDB_SILENT"] = "true"
    env.update(extra)
    return env


def run_process(
    script: str, *args: str, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """``python scripts/<script> ARGS`` in a child process: for what a process boundary decides (signals,
    a lock held by another pid, the interpreter's own startup, a child's environment)."""
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / script), *args],
        cwd=REPO,
        env=subprocess_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# One child's driver: each [script, args] of argv[1] (JSON) run as run_script runs it; per run, its exit
# code, stdout, stderr and the child's peak resident memory so far (KiB) go to the file argv[2]. The
# peak is the kernel's VmHWM, which starts anew at exec: getrusage's ru_maxrss keeps the peak of the
# process it was forked from (the test process, hundreds of MB).
_DRIVER = (
    "import json, pathlib, re, sys\n"
    "from tests.experiment.conftest import run_script\n"
    "done = []\n"
    "for script, args in json.loads(sys.argv[1]):\n"
    "    r = run_script(script, *args)\n"
    "    peak = int(re.search(r'VmHWM:\\s*(\\d+) kB', pathlib.Path('/proc/self/status').read_text())[1])\n"
    "    done.append([r.returncode, r.stdout, r.stderr, peak])\n"
    "pathlib.Path(sys.argv[2]).write_text(json.dumps(done))\n"
)


def run_scripts_in_child(
    runs: Sequence[tuple[str, Sequence[str]]],
    answers: Path,
    wrap: Callable[[list[str]], list[str]] = list,
    **env: str,
) -> list[tuple[subprocess.CompletedProcess[str], int]]:
    """Each ``(script, args)`` of ``runs``, one after the other, as ``run_script`` makes it, in one child
    process with ``subprocess_env(**env)`` (``wrap`` may start it in a namespace; ``answers`` is the file
    it reports to): for what only another process shows (its mounts, its peak memory, W&B's service)
    without a child's start-up (Python, the project's imports) per run. Each run's outcome, and the
    child's peak resident memory (KiB) when that run ended."""
    todo = json.dumps([[script, list(args)] for script, args in runs])
    argv = wrap([sys.executable, "-c", _DRIVER, todo, str(answers)])
    child = subprocess.run(
        argv, cwd=REPO, env=subprocess_env(**env), capture_output=True, text=True, timeout=600
    )
    assert child.returncode == 0, child.stderr[-3000:]
    return [
        (subprocess.CompletedProcess([script, *args], code, out, err), peak)
        for (script, args), (code, out, err, peak) in zip(runs, json.loads(answers.read_text()), strict=True)
    ]


def run_script(script: str, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    """``python scripts/<script> ARGS`` run in this process, as a user sees it: its exit code (an uncaught
    exception: 1 and the traceback on stderr), stdout and stderr, the files it wrote.

    Why not a child: each child pays Python, Hydra and the project's imports (OCR, torch) again, most of
    the suite's time. A script is a wrapper of a package ``main`` (tests/test_cli_console.py), which
    runs here with the child's argv, environment and cwd; the process state it changes (logging, signal
    handlers, Hydra's global config) is put back. ``timeout`` is the child's; here pytest-timeout
    bounds a run. A script that holds its own ``main`` (a benchmark) runs as the module it is:
    ``run_module("scripts.bench_runner", ...)``."""
    path = REPO / "scripts" / script
    found = WRAPPER.search(path.read_text(encoding="utf-8"))
    assert found, f"scripts/{script} holds its own main: run it with run_module('scripts.{path.stem}')"
    return _in_process(found.group(1), [str(path), *args], env)


def run_module(module: str, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` (a module whose ``__main__`` exits with its ``main()``) with ``stdin``
    as its input, in this process as ``run_script`` runs a script."""
    return _in_process(module, [module, *args], env, stdin)


def _in_process(
    module: str, argv: list[str], env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    out, err = io.StringIO(), io.StringIO()
    with _as_child(argv, subprocess_env(**env), stdin):
        main = importlib.import_module(module).main  # a script's own sys.path change is put back
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            _python_warning_filters()  # a warning is a stderr line, as in a child
            try:
                sys.exit(main())
            except SystemExit as e:
                code = _exit_status(e.code)
            except BaseException:  # what the interpreter does with an uncaught exception
                traceback.print_exc()
                code = 1
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def _python_warning_filters() -> None:
    """The interpreter's own filters (not pytest's, which records warnings instead of printing them)."""
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category, append=True)


def _exit_status(code: object) -> int:
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)  # sys.exit("message"): printed, status 1
    return 1


@contextlib.contextmanager
def _as_child(argv: list[str], env: dict[str, str], stdin: str) -> Iterator[None]:
    """argv, environment, stdin and cwd of ``python ARGV`` started from the repository; on the way out
    they, sys.path, the root logger, the signal handlers and Hydra's global state are restored."""
    from hydra.core.global_hydra import GlobalHydra

    saved_env, saved_argv, path_list, cwd, saved_stdin = (
        dict(os.environ),
        sys.argv[:],
        sys.path[:],
        os.getcwd(),
        sys.stdin,
    )
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    signals = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    _set_environ(env)
    sys.argv[:] = argv
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    os.chdir(REPO)
    try:
        yield
    finally:
        _set_environ(saved_env)
        sys.argv[:], sys.path[:], sys.stdin = saved_argv, path_list, saved_stdin
        os.chdir(cwd)
        for h in root.handlers:
            if h not in handlers:
                h.close()
        root.handlers[:] = handlers
        root.setLevel(level)
        for s, handler in signals.items():
            signal.signal(s, handler)
        GlobalHydra.instance().clear()


def _set_environ(env: dict[str, str]) -> None:
    """Make os.environ equal ``env`` touching only the keys that differ (another thread of the test
    process may read the C environment meanwhile)."""
    for key in set(os.environ) - set(env):
        del os.environ[key]
    for key, value in env.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


@pytest.fixture
def run_py():
    return lambda *args, **kw: run_script("run.py", *args, **kw)


@pytest.fixture(scope="session")
def run_py_help() -> subprocess.CompletedProcess[str]:
    """``python scripts/run.py --help``, once per test process: two modules read its page."""
    return run_script("run.py", "--help")


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``finished_run(out, *overrides, counter=None)``: ``out`` becomes a copy of the finished folder that
    ``run.py`` with the fakes, ``logger=none`` and ``overrides`` writes, and ``counter`` (if given) a
    copy of its agent's calls (``FAKE_AGENT_COUNTER``). Each such run is made once per test process:
    most run-folder tests start from the same few finished runs, and a test damages or resumes only
    its own copy. A copy is the folder as written (links kept); only ``.hydra/hydra.yaml``, which no
    reader reads, names where it was made."""
    root = tmp_path_factory.mktemp("finished")
    made: dict[tuple[str, ...], Path] = {}

    def copy(out: Path, *overrides: str, counter: Path | None = None) -> Path:
        if overrides not in made:
            src = root / str(len(made))
            proc = run_script(
                "run.py",
                *FAKE_OVERRIDES,
                "logger=none",
                f"hydra.run.dir={src / 'run'}",
                *overrides,
                FAKE_AGENT_COUNTER=str(src / "calls.txt"),
            )
            assert proc.returncode == 0, proc.stderr
            made[overrides] = src
        shutil.copytree(made[overrides] / "run", out, symlinks=True)
        if counter is not None:
            shutil.copyfile(made[overrides] / "calls.txt", counter)
        return out

    return copy
