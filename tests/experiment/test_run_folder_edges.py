"""The run folder's edges, driven through the scripts as a user would: no write follows a link out
of the folder, a hostile YAML or JSON file is one line within bounded memory, and a resume tells
the truth (the sweep's resume command, a smaller limit, the keys that differ, missing trajectories
and torn lines). Each test checks the exit code, the one line, and the files before and after."""

from __future__ import annotations

import html
import json
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.experiment.conftest import FAKE_OVERRIDES, REPO, run_script, run_scripts_in_child, subprocess_env
from tests.experiment.test_run_dir_faults import _errors, _fake, _lines, _wait_for

TARGET_TEXT = "a file outside the run folder\n"


def _outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside.txt"
    target.write_text(TARGET_TEXT)
    return target


def _notes(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if ln.startswith("note:")]


# ------------------------------------------------------------------------------ writes never follow a link
@pytest.mark.parametrize("name", ["table3.md", "table3.png", "census.md"])
def test_table3_refuses_a_linked_output_and_writes_nothing(tmp_path: Path, finished_run, name: str) -> None:
    out, target = finished_run(tmp_path / "run"), _outside(tmp_path)
    (out / name).symlink_to(target)
    proc = run_script("table3.py", str(out))
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc) == [
        f"error: {out / name}: is a symbolic link; nothing is written through it (it could lead out of the folder)"
    ]
    assert target.read_text() == TARGET_TEXT
    assert not (out / "table3.csv").exists()  # refused before any file of the table is written


def test_srfa_refuses_a_linked_srfa_jsonl(tmp_path: Path, finished_run) -> None:
    out, target = finished_run(tmp_path / "run", "limit=2"), _outside(tmp_path)
    (out / "srfa.jsonl").symlink_to(target)
    proc = run_script("srfa.py", str(out), "--trust-config", "logger=none")
    assert proc.returncode == 2, proc.stderr
    assert f"error: {out / 'srfa.jsonl'}" in _errors(proc)[-1] and "symbolic link" in _errors(proc)[-1]
    assert target.read_text() == TARGET_TEXT
    assert not (out / "srfa_metrics.json").exists()


def test_rescore_refuses_a_linked_backup_folder_and_rewrites_nothing(tmp_path: Path, finished_run) -> None:
    out, elsewhere = finished_run(tmp_path / "run"), tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "rescore").symlink_to(elsewhere)
    before = {p: (out / p).read_bytes() for p in ("results.jsonl", "metrics.json")}
    proc = run_script("rescore.py", str(out), "--trust-config")
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc) == [
        f"error: {out / 'rescore'}: is a symbolic link; nothing is written through it (it could lead out of the folder)"
    ]
    assert list(elsewhere.iterdir()) == []
    assert {p: (out / p).read_bytes() for p in before} == before


def test_report_refuses_a_linked_report_folder(tmp_path: Path, finished_run) -> None:
    out, elsewhere = finished_run(tmp_path / "run", "limit=2"), tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "index.html").write_text(TARGET_TEXT)
    (out / "report").symlink_to(elsewhere)
    proc = run_script("report.py", str(out))
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc) == [
        f"error: {out / 'report'}: is a symbolic link; nothing is written through it (it could lead out of the folder)"
    ]
    assert [p.name for p in elsewhere.iterdir()] == ["index.html"]
    assert (elsewhere / "index.html").read_text() == TARGET_TEXT


# ------------------------------------------------------------------------------ bounded readers
ALIAS_BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""

ALIAS_LINE = "not valid YAML (an alias (*) on line 2; a run's config has none)"
NESTED = "[" * 100_000 + "]" * 100_000
# the readers of a run folder's config and their arguments after the folder
BOMBED = {
    "table3.py": [],
    "rescore.py": [],
    "srfa.py": ["logger=none"],
    "plan.py": ["--items", "100"],
    "report.py": [],
}
PEAK_KIB = 500 * 1024


@pytest.fixture(scope="module")
def bounded(
    tmp_path_factory: pytest.TempPathFactory, finished_run
) -> dict[str, tuple[Path, subprocess.CompletedProcess[str], int]]:
    """Per reader of ``BOMBED``: a fake run folder whose config is an alias bomb, the reader's outcome on
    it and the peak memory (KiB) so far; and ``nested``: rescore on a folder (its agent counting into
    ``calls.txt`` beside it) whose second result line is nested 100,000 deep. All readers run in one
    child, one after the other: its peak memory, imports included, bounds each reader's."""
    root = tmp_path_factory.mktemp("bounded")
    folders = {script: root / script.removesuffix(".py") / "run" for script in BOMBED}
    for out in folders.values():
        finished_run(out, "limit=2")
        (out / ".hydra" / "config.yaml").write_text(ALIAS_BOMB)
    nested = folders["nested"] = root / "nested" / "run"
    finished_run(nested, counter=root / "nested" / "calls.txt")
    lines = _lines(nested / "results.jsonl")
    (nested / "results.jsonl").write_text("\n".join([lines[0], NESTED, *lines[2:]]) + "\n")
    runs = [(script, [str(folders[script]), *args]) for script, args in BOMBED.items()]
    done = run_scripts_in_child(
        [*runs, ("rescore.py", [str(nested), "--trust-config"])], root / "answers.json"
    )
    return {name: (out, *outcome) for (name, out), outcome in zip(folders.items(), done, strict=True)}


@pytest.mark.parametrize("script", sorted(BOMBED))
def test_a_yaml_alias_bomb_is_one_line_in_bounded_memory(bounded: dict, script: str) -> None:
    out, proc, peak_kib = bounded[script]
    config = out / ".hydra" / "config.yaml"
    assert "Traceback" not in proc.stderr
    assert peak_kib < PEAK_KIB, peak_kib
    if script == "report.py":  # the report renders without the benchmark and says why on the page
        assert proc.returncode == 0, proc.stderr
        assert f"{config}: {ALIAS_LINE}" in html.unescape((out / "report" / "index.html").read_text())
        return
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc)[-1] == f"error: {config}: {ALIAS_LINE}"


def test_a_deeply_nested_result_line_is_refused_by_rescore_then_redone_by_the_resume(bounded: dict) -> None:
    out, proc, peak_kib = bounded["nested"]
    results, counter = out / "results.jsonl", out.parent / "calls.txt"
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc) == [
        f"error: {results}: line 2 is not a readable result record (nested deeper than 100 levels: "
        f"{NESTED[:60]!r})"
    ]
    assert peak_kib < PEAK_KIB, peak_kib

    (lost,) = {f"q{i}" for i in range(6)} - {json.loads(x)["id"] for x in _lines(results) if x != NESTED}
    resumed = _fake(out, FAKE_AGENT_COUNTER=str(counter))
    assert resumed.returncode == 0, resumed.stderr
    assert _notes(resumed) == [
        f"note: {results} line(s) 2: not result records; removed, their items are solved again"
    ]
    assert _lines(counter)[6:] == [lost]  # the lost line's item, solved again
    assert sorted(json.loads(x)["id"] for x in _lines(results)) == [f"q{i}" for i in range(6)]
    assert run_script("rescore.py", str(out), "--trust-config").returncode == 0


def test_a_deeply_nested_item_line_is_that_items_error(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "run"
    data.mkdir()
    good = {"id": "good", "question": "q?", "options": ["x", "y"], "answer": "A"}
    (data / "items.jsonl").write_text(json.dumps(good) + "\n" + NESTED + "\n")
    proc = run_script(
        "run.py",
        *FAKE_OVERRIDES,
        "logger=none",
        "benchmark=jsonl",
        f"benchmark.path={data}",
        f"hydra.run.dir={out}",
    )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = [json.loads(x) for x in _lines(out / "results.jsonl")]
    assert [r["error"] is None for r in rows].count(True) == 1
    bad = next(r for r in rows if r["error"] is not None)
    assert "line 2" in bad["error"] and "nested deeper than 100 levels" in bad["error"], bad["error"]


# ------------------------------------------------------------------------------ resume tells the truth
def _sweep(sweep: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        str(REPO / "scripts" / "run.py"),
        "-m",
        *FAKE_OVERRIDES,
        "logger=none",
        "concurrency=1",
        f"hydra.sweep.dir={sweep}",
        "seed=0,1",
        *extra,
    ]


def _run_as_printed(command: str, **env: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    assert argv[:2] == ["python", "scripts/run.py"], command
    return run_script("run.py", *argv[2:], **env)


def _job_ids(job: Path) -> list[str]:
    return sorted(json.loads(x)["id"] for x in _lines(job / "results.jsonl"))


def test_a_terminated_sweep_prints_one_command_that_resumes_the_whole_sweep(tmp_path: Path) -> None:
    sweep, started, gate = tmp_path / "sweep", tmp_path / "started", tmp_path / "gate"
    proc = subprocess.Popen(
        _sweep(sweep),
        cwd=REPO,
        env=subprocess_env(FAKE_AGENT_STARTED=str(started), FAKE_AGENT_GATE=str(gate)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(started, proc)  # the first job holds its folder and waits inside its first item
    except AssertionError:
        proc.kill()
        raise
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith(
        "error: terminated (SIGTERM); finished items are kept; resume with: "
    )
    command = lines[0].split("resume with: ", 1)[1]
    assert f"hydra.sweep.dir={sweep}" in command and " -m " in command

    resumed = _run_as_printed(command)
    assert resumed.returncode == 0, resumed.stderr
    for job in ("seed=0", "seed=1"):
        assert _job_ids(sweep / job) == [f"q{i}" for i in range(6)]
        assert not (sweep / job / "responses.sqlite").exists()  # the sweep's one cache, not a file per job
    assert len(list(sweep.glob("responses-*.sqlite"))) == 1


def test_a_sweep_with_item_errors_prints_one_command_that_retries_every_job(tmp_path: Path) -> None:
    sweep, counter = tmp_path / "sweep", tmp_path / "calls.txt"
    proc = run_script("run.py", *_sweep(sweep)[2:], FAKE_AGENT_FAIL="q2", FAKE_AGENT_COUNTER=str(counter))
    assert proc.returncode == 3, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert lines[0] == f"error: {sweep / 'seed=0'}: 1 of 6 items failed (RuntimeError: corrupt image in q2)"
    head, _, command = lines[1].partition("; retry them with: ")
    assert head == f"error: {sweep / 'seed=1'}: 1 of 6 items failed (RuntimeError: corrupt image in q2)"
    assert len(lines) == 2

    again = _run_as_printed(command, FAKE_AGENT_COUNTER=str(counter))
    assert again.returncode == 0, again.stderr
    assert _lines(counter)[12:] == ["q2", "q2"]  # exactly the failed item of each job, nothing else
    for job in ("seed=0", "seed=1"):
        assert json.loads((sweep / job / "metrics.json").read_text())["errors"] == 0


def test_a_smaller_limit_into_a_finished_folder_is_refused_and_nothing_changes(
    tmp_path: Path, finished_run
) -> None:
    out = finished_run(tmp_path / "run")
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    proc = _fake(out, "limit=3")
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc) == [
        f"error: {out} holds results of 3 items this run does not select (q3, q4, q5), so its metrics would "
        "cover a subset of them; select them again (the limit/item_ids that made it), use another "
        "hydra.run.dir, or add resume=new to start a new directory beside it"
    ]
    after = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert {k: v for k, v in after.items() if k != ".lock"} == {
        k: v for k, v in before.items() if k != ".lock"
    }
    assert _fake(out, "limit=8").returncode == 0  # a larger limit resumes
    assert json.loads((out / "metrics.json").read_text())["n_items"] == 6


def test_a_refused_resume_names_the_keys_that_differ(tmp_path: Path, finished_run) -> None:
    out = finished_run(tmp_path / "run", "limit=2")
    proc = _fake(out, "limit=2", "pipeline.gamma=0.9", "scoring.random_fallback_seed=3")
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc) == [
        f"error: {out} holds another experiment: pipeline.gamma was 0.5, now 0.9; scoring.random_fallback_seed "
        "was null, now 3; use another hydra.run.dir, or add resume=new to start a new directory beside it"
    ]


def test_deleted_trajectories_are_noted_and_solved_again(tmp_path: Path, finished_run) -> None:
    out, counter = tmp_path / "run", tmp_path / "calls.txt"
    finished_run(out, "limit=3", counter=counter)
    full = json.loads((out / "metrics.json").read_text())
    for traj in (out / "trajectories").iterdir():
        traj.unlink()
    (out / "trajectories").rmdir()

    again = _fake(out, "limit=3", FAKE_AGENT_COUNTER=str(counter))
    assert again.returncode == 0, again.stderr
    assert _notes(again) == [
        f"note: {out}: 3 finished items have no trajectory (q0, q1, q2); solving them again"
    ]
    assert sorted(_lines(counter)[3:]) == ["q0", "q1", "q2"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["mechanisms"] == full["mechanisms"] and metrics["n_items"] == 3
    assert len(list((out / "trajectories").iterdir())) == 3
    assert len(_lines(out / "results.jsonl")) == 3


def test_a_torn_middle_line_is_noted_solved_again_and_rescore_works(tmp_path: Path, finished_run) -> None:
    out, counter = tmp_path / "run", tmp_path / "calls.txt"
    finished_run(out, "limit=4", counter=counter)
    lines = _lines(out / "results.jsonl")
    torn_id = json.loads(lines[1])["id"]
    (out / "results.jsonl").write_text("\n".join([lines[0], lines[1][:30], *lines[2:]]) + "\n")

    again = _fake(out, "limit=4", FAKE_AGENT_COUNTER=str(counter))
    assert again.returncode == 0, again.stderr
    assert _notes(again) == [
        f"note: {out / 'results.jsonl'} line(s) 2: not result records; removed, their items are solved again"
    ]
    assert _lines(counter)[4:] == [torn_id]
    rescored = run_script("rescore.py", str(out), "--trust-config")
    assert rescored.returncode == 0, rescored.stderr
    assert sorted(json.loads(x)["id"] for x in _lines(out / "results.jsonl")) == [f"q{i}" for i in range(4)]


def test_a_refused_resume_whose_keys_read_as_before_names_those_read_from_the_environment(
    tmp_path: Path, finished_run
) -> None:
    """The recorded config keeps ``${oc.env:…}`` unresolved: the same text on both sides, another
    value once resolved. The line names the keys that read the environment instead of only a hash."""
    gamma = "pipeline.gamma=${oc.env:PROBE_GAMMA,0.5}"
    out = finished_run(tmp_path / "run", "limit=2", gamma)
    proc = _fake(out, "limit=2", gamma, PROBE_GAMMA="0.9")
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc) == [
        f"error: {out} holds another experiment: the config reads as before, but a key read from the "
        "environment may now resolve to another value: model.path (${oc.env:LEDGERMIND_CACHE,${oc.env:"
        "XDG_CACHE_HOME,${oc.env:HOME}/.cache}/ledgermind}/tiny-qwen2-vl), pipeline.gamma "
        "(${oc.env:PROBE_GAMMA,0.5}); "
        "use another hydra.run.dir, or add resume=new to start a new directory beside it"
    ]
