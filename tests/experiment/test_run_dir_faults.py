"""A run directory that cannot lie: each fault class driven through the scripts as a user would.

1. resume checks what it resumes (identity, lock, resume command, torn line, Ctrl-C);
2. failures are item errors whatever raised them (bad rows, damaged cache, unencodable text);
3. run folders are data (report/rescore never import from them, images stay inside, corrupt lines refused,
   replay files checked);
4. config mistakes are one line, exit 2.

Every test checks the exit code, the one line, and that finished results were neither lost nor relabelled.
"""

from __future__ import annotations

import json
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ledgermind.runs.trajectories import safe_filename, trajectory_path
from tests.experiment.conftest import FAKE_OVERRIDES, REPO, run_script, subprocess_env

PROMPTS = {
    k: {"standard": "Answer with the option letter.", "vision": "Answer with the option letter."}
    for k in ("cot", "direct")
}


def _errors(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """stderr lines that are not the tiny-model banner or log lines."""
    return [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith(("NOTE:", "["))]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _fake(out: Path, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_script("run.py", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={out}", *extra, **env)


def _write_jsonl(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        for r in rows:
            fh.write(r if isinstance(r, bytes) else json.dumps(r).encode())
            fh.write(b"\n")
    return path


# ------------------------------------------------------------------------------ 1. resume
def test_rerun_with_another_experiment_is_refused_and_nothing_is_relabelled(
    tmp_path: Path, finished_run
) -> None:
    out = finished_run(tmp_path / "run")
    results, config = _lines(out / "results.jsonl"), (out / ".hydra" / "config.yaml").read_text()

    other = _fake(out, "+ablation=no_ecc")
    assert other.returncode == 2, other.stderr
    assert _errors(other) == [
        f"error: {out} holds another experiment: variant was full, now no_ecc; use another hydra.run.dir, "
        "or add resume=new to start a new directory beside it"
    ]
    assert _lines(out / "results.jsonl") == results and (out / ".hydra" / "config.yaml").read_text() == config
    assert json.loads((out / "metrics.json").read_text())["identity"]["variant"] == "full"

    # a key outside the protocol fields is caught by the config hash; limit/concurrency are resumable
    assert "pipeline.gamma was 0.5, now 0.9" in _errors(_fake(out, "pipeline.gamma=0.9"))[0]
    assert _fake(out, "limit=8", "concurrency=1").returncode == 0
    config = (out / ".hydra" / "config.yaml").read_text()  # an accepted resume records its own config

    new = _fake(out, "+ablation=no_ecc", "resume=new")
    assert new.returncode == 0, new.stderr
    sibling = out.with_name("run-2")
    assert json.loads((sibling / "metrics.json").read_text())["identity"]["variant"] == "no_ecc"
    assert yaml.safe_load((sibling / ".hydra" / "config.yaml").read_text())["ablation"]["name"] == "no_ecc"
    assert _lines(out / "results.jsonl") == results and (out / ".hydra" / "config.yaml").read_text() == config


def test_multirun_relaunched_in_another_order_resumes_its_own_jobs(tmp_path: Path) -> None:
    sweep, counter = tmp_path / "sweep", tmp_path / "calls.txt"
    first = run_script(
        "run.py",
        "-m",
        *FAKE_OVERRIDES,
        "logger=none",
        f"hydra.sweep.dir={sweep}",
        "+ablation=full,no_ecc",
        "seed=0,1",
        FAKE_AGENT_COUNTER=str(counter),
    )
    assert first.returncode == 0, first.stderr
    jobs = sorted(p.name for p in sweep.iterdir() if p.is_dir())
    assert jobs == [
        "ablation=full,seed=0",
        "ablation=full,seed=1",
        "ablation=no_ecc,seed=0",
        "ablation=no_ecc,seed=1",
    ]
    calls = len(_lines(counter))
    again = run_script(
        "run.py",
        "-m",
        *FAKE_OVERRIDES,
        "logger=none",
        f"hydra.sweep.dir={sweep}",
        "seed=1,0",
        "+ablation=no_ecc,full",
        FAKE_AGENT_COUNTER=str(counter),
    )
    assert again.returncode == 0, again.stderr
    assert len(_lines(counter)) == calls  # every job found its finished items
    for job in jobs:
        ident = json.loads((sweep / job / "metrics.json").read_text())["identity"]
        assert job == f"ablation={ident['variant']},seed={ident['seed']}"


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until the holder signals (``path`` exists); its early death is a failure, not a hang."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, "the holder exited before it signalled"
        assert time.monotonic() < deadline, "the holder never signalled"
        time.sleep(0.02)


def launch(out: Path, *extra: str, piped: bool = False, **env: str) -> subprocess.Popen:
    """``run.py`` with the fakes into ``out``, one item at a time, in the background (``env``: the
    fake agent's settings); ``piped``: its output is kept, as text, for ``communicate``."""
    stream = subprocess.PIPE if piped else subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, str(REPO / "scripts" / "run.py"), *FAKE_OVERRIDES, "logger=none", "concurrency=1"]
        + [f"hydra.run.dir={out}", *extra],
        cwd=REPO,
        env=subprocess_env(**env),
        stdout=stream,
        stderr=stream,
        text=piped,
    )


def _holder(out: Path, tmp: Path, *extra: str) -> tuple[subprocess.Popen, Path, Path]:
    """A run that holds ``out`` and waits, inside its first item, until the test creates the gate file."""
    started, gate = tmp / "started", tmp / "gate"
    return launch(out, *extra, FAKE_AGENT_STARTED=str(started), FAKE_AGENT_GATE=str(gate)), started, gate


def test_second_run_into_a_held_directory_exits_2_naming_the_holder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    holder, started, gate = _holder(out, tmp_path)
    try:
        _wait_for(started, holder)  # it holds the directory and is inside its first item
        second = _fake(out)
        assert second.returncode == 2, second.stderr
        assert _errors(second) == [
            f"error: {out} is in use by another run (pid {holder.pid}); wait for it to finish or use another hydra.run.dir"
        ]
    finally:
        gate.touch()
        assert holder.wait(timeout=120) == 0
    assert sorted(json.loads(x)["id"] for x in _lines(out / "results.jsonl")) == [f"q{i}" for i in range(6)]


def test_complete_last_line_without_newline_is_kept_not_redone(tmp_path: Path, finished_run) -> None:
    out, counter = tmp_path / "run", tmp_path / "calls.txt"
    finished_run(out, counter=counter)
    path = out / "results.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # a kill between the record and its newline
    again = _fake(out, FAKE_AGENT_COUNTER=str(counter))
    assert again.returncode == 0, again.stderr
    assert len(_lines(counter)) == 6  # nothing redone
    assert len(_lines(path)) == 6 and json.loads((out / "metrics.json").read_text())["n_scored"] == 6


def test_ctrl_c_is_one_line_with_the_resume_command(tmp_path: Path) -> None:
    out, counter = tmp_path / "run", tmp_path / "calls.txt"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "scripts" / "run.py"),
            *FAKE_OVERRIDES,
            "logger=none",
            "concurrency=1",
            f"hydra.run.dir={out}",
        ],
        cwd=REPO,
        env=subprocess_env(FAKE_AGENT_DELAY="0.4", FAKE_AGENT_COUNTER=str(counter)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a shell delivers it: a test worker (pytest-xdist) may run with SIGINT ignored, and
        # an ignored signal stays ignored in a child, which would then finish instead of stopping
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        not (out / "results.jsonl").exists() or not _lines(out / "results.jsonl")
    ):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    line = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(line) == 1 and line[0].startswith("error: interrupted; finished items are kept; resume with: ")
    done = {json.loads(x)["id"] for x in _lines(out / "results.jsonl")}
    assert 1 <= len(done) < 6
    command = shlex.split(line[0].split("resume with: ", 1)[1])
    assert command[:2] == ["python", "scripts/run.py"] and command[-1] == f"hydra.run.dir={out}"
    resumed = run_script("run.py", *command[2:], FAKE_AGENT_COUNTER=str(counter))
    assert resumed.returncode == 0, resumed.stderr
    solved = _lines(counter)
    assert all(solved.count(i) == 1 for i in done)  # finished items were not redone
    assert json.loads((out / "metrics.json").read_text())["n_scored"] == 6


def test_sigterm_during_an_items_own_work_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    """SIGTERM lands wherever the event loop's thread is; in an item's synchronous work (grounding,
    NER) it must still stop the run as Ctrl-C does: one line, exit 143, and a rerun resumes."""
    out, counter, started = tmp_path / "run", tmp_path / "calls.txt", tmp_path / "started"
    proc = launch(
        out,
        piped=True,
        FAKE_AGENT_BUSY="1.5",
        FAKE_AGENT_COUNTER=str(counter),
        FAKE_AGENT_STARTED=str(started),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_lines(started) if started.exists() else []) < 2:
        time.sleep(0.05)  # the second item has started its busy work; the first is on disk
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stdout + stderr and "never retrieved" not in stdout + stderr, stdout + stderr
    line = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("NOTE:")]
    assert len(line) == 1 and line[0].startswith(
        "error: terminated (SIGTERM); finished items are kept; resume with: "
    )
    done = {json.loads(x)["id"] for x in _lines(out / "results.jsonl")}
    assert len(done) == 1
    command = shlex.split(line[0].split("resume with: ", 1)[1])
    resumed = run_script("run.py", *command[2:], FAKE_AGENT_COUNTER=str(counter))
    assert resumed.returncode == 0, resumed.stderr
    assert all(_lines(counter).count(i) == 1 for i in done)  # the finished item was not redone
    assert json.loads((out / "metrics.json").read_text())["n_scored"] == 6


# ------------------------------------------------------------------------------ 2. item errors
def test_bad_rows_are_per_item_errors_and_ids_get_their_own_files(tmp_path: Path) -> None:
    good = {"question": "q?", "options": ["x", "y"], "answer": "A"}
    data = _write_jsonl(
        tmp_path / "data" / "items.jsonl",
        [
            {"id": "q 1", **good},
            {"id": "q_1", **good},
            {"id": "q/1", **good},
            b"{not json",
            b'{"id": "bytes", "question": "\xff\xfe"}',
            {"id": "o5", **good, "options": 5},
            {"id": "i5", **good, "images": 5},
            {"id": "m", **good, "meta": [1, 2]},
            {"id": "abc", **good, "options": "abc"},
        ],
    )
    out = tmp_path / "run"
    overrides = [o for o in FAKE_OVERRIDES if not o.startswith("benchmark=")]
    proc = run_script(
        "run.py",
        *overrides,
        "benchmark=jsonl",
        f"benchmark.path={data}",
        "logger=none",
        f"hydra.run.dir={out}",
    )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = {d["id"]: d for d in map(json.loads, _lines(out / "results.jsonl"))}
    assert len(rows) == 9
    assert {i for i, r in rows.items() if r["error"] is None} == {"q 1", "q_1", "q/1"}
    assert "line 4 is not a valid JSON object (Expecting" in rows["line4"]["error"]
    assert "line 5 is not a valid JSON object (not UTF-8 at byte" in rows["line5"]["error"]
    assert "field 'options'" in rows["o5"]["error"] and "field 'images'" in rows["i5"]["error"]
    assert "field 'meta'" in rows["m"]["error"] and "field 'options'" in rows["abc"]["error"]
    assert all(r["score"] == 0 and r["prediction"] is None for r in rows.values() if r["error"])
    # three ids that sanitise alike keep three trajectories, each holding its own id
    paths = {trajectory_path(out, i) for i in ("q 1", "q_1", "q/1")}
    assert len(paths) == 3 and all(
        json.loads(p.read_text())["item_id"] in ("q 1", "q_1", "q/1") for p in paths
    )


def test_damaged_response_cache_is_one_line_and_a_miss(tmp_path: Path) -> None:
    """The real pipeline and scripted model; a cache row and then the whole file damaged between runs."""
    data = _write_jsonl(
        tmp_path / "data" / "items.jsonl",
        [
            {"id": "a", "question": "Which colour is the sky?", "options": ["blue", "green"], "answer": "A"},
        ],
    )
    common = [
        f"benchmark.path={data}",
        "benchmark=jsonl",
        "backend=scripted",
        "backend.allow_scripted=true",
        "backend.default=Answer: A",
        "logger=none",
        "progress=false",
        f"cache.path={tmp_path / 'c.sqlite'}",
    ]
    assert run_script("run.py", *common, f"hydra.run.dir={tmp_path / 'r1'}").returncode == 0
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        db.execute("UPDATE replies SET reply = '{corrupt'")
    second = run_script("run.py", *common, f"hydra.run.dir={tmp_path / 'r2'}")
    assert second.returncode == 0, second.stderr
    log = second.stdout + second.stderr  # Hydra's log handler writes to stdout
    assert log.count("unreadable entry") == 1 and "Traceback" not in log
    assert json.loads((tmp_path / "r2" / "metrics.json").read_text())["accuracy"] == 1.0
    (tmp_path / "c.sqlite").write_bytes(b"this is not a database" * 100)
    third = run_script("run.py", *common, f"hydra.run.dir={tmp_path / 'r3'}")
    assert third.returncode == 0, third.stderr
    assert (third.stdout + third.stderr).count("is unreadable") == 1 and (
        tmp_path / "c.sqlite.corrupt"
    ).exists()


def test_unreadable_image_is_that_items_error_and_no_one_elses(tmp_path: Path) -> None:
    """A directory named like an image, under the real pipeline and a perfect simulated model: that
    item is an error; the valid items beside it (same answer key) are still answered right."""
    from PIL import Image

    data = tmp_path / "data"
    (data / "x.png").mkdir(parents=True)
    Image.new("RGB", (64, 64), "white").save(data / "good.png")
    _write_jsonl(
        data / "items.jsonl",
        [
            {
                "id": "bad",
                "question": "What is in <image 1>?",
                "images": ["x.png"],
                "options": ["a", "b"],
                "answer": "A",
            },
            {
                "id": "g1",
                "question": "What is in <image 1>?",
                "images": ["good.png"],
                "options": ["a", "b"],
                "answer": "A",
            },
            {"id": "g2", "question": "Which colour is the sky?", "options": ["blue", "green"], "answer": "A"},
        ],
    )
    out = tmp_path / "run"
    proc = run_script(
        "run.py",
        "benchmark=jsonl",
        f"benchmark.path={data / 'items.jsonl'}",
        "backend=simulated",
        "backend.faults=off",
        "logger=none",
        "progress=false",
        f"hydra.run.dir={out}",
    )
    assert proc.returncode == 3, proc.stderr
    rows = {d["id"]: d for d in map(json.loads, _lines(out / "results.jsonl"))}
    assert "x.png" in rows["bad"]["error"] and rows["bad"]["prediction"] is None
    assert (rows["g1"]["score"], rows["g1"]["error"], rows["g2"]["score"]) == (1.0, None, 1.0)


def test_null_usage_fields_are_zero_not_a_failed_call() -> None:
    from ledgermind.backends.vllm_server import VLLMServerBackend

    backend = VLLMServerBackend(model={"name": "m", "hub_id": "m"}, base_urls=["http://127.0.0.1:9/v1"])
    data = {
        "choices": [{"message": {"content": "A"}, "finish_reason": None}],
        "usage": {"prompt_tokens": None, "completion_tokens": None},
    }
    reply = backend._parse(data, 0.1, "http://127.0.0.1:9/v1", 1)
    assert (reply.text, reply.prompt_tokens, reply.completion_tokens) == ("A", 0, 0)


# ------------------------------------------------------------------------------ 3. run folders are data
def _planted_run(out: Path, marker: Path) -> Path:
    """The finished run ``out`` with its recorded config edited to call ``os.mkdir(marker)`` when loaded."""
    cfg_path = out / ".hydra" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["benchmark"] = {"_target_": "os.mkdir", "path": str(marker)}
    cfg["scorer"] = "os.mkdir"
    cfg_path.write_text(yaml.safe_dump(cfg))
    return out


def test_report_and_rescore_never_run_code_named_by_a_run_folder(tmp_path: Path, finished_run) -> None:
    marker = tmp_path / "pwned"
    run = _planted_run(finished_run(tmp_path / "shared_run"), marker)
    results = _lines(run / "results.jsonl")
    report = run_script("report.py", str(run))
    assert report.returncode == 0, report.stderr
    assert "only registered benchmarks are reloaded" in (run / "report" / "index.html").read_text()
    rescore = run_script("rescore.py", str(run))
    assert rescore.returncode == 2 and len(_errors(rescore)) == 1 and "a run folder is data" in rescore.stderr
    assert not marker.exists() and _lines(run / "results.jsonl") == results


def test_report_shows_only_run_images_survives_huge_images_and_surrogates(
    tmp_path: Path, finished_run
) -> None:
    from PIL import Image

    out = finished_run(tmp_path / "run")
    secret = tmp_path / "secret.png"
    Image.new("RGB", (8, 8), "red").save(secret)
    huge = out / "huge.png"
    Image.new("1", (20_000, 20_000)).save(huge)  # 400 MP: above PIL's decompression-bomb guard
    for item_id, image in (("q0", secret), ("q1", huge)):
        p = trajectory_path(out, item_id)
        t = json.loads(p.read_text())
        t["raw_answer"] = "Answer: A \ud800"  # a lone surrogate, as some replies carry
        t["ledger"] = {
            "entries": [
                {
                    "id": "OC-1",
                    "src": "ocr",
                    "kappa": "PERCEPTION",
                    "fact": "x",
                    "sigma": 0.9,
                    "omega": "ACTIVE",
                    "bbox": [1, 1, 4, 4],
                    "tool_call_id": "ocr#1",
                }
            ],
            "tool_outputs": [{"call_id": "ocr#1", "tool": "ocr", "inputs": {"image": str(image)}}],
        }
        p.write_text(json.dumps(t))
    first = run_script("report.py", str(out))
    assert first.returncode == 0, first.stderr
    pages = {i: (out / "report" / "items" / f"{safe_filename(i)}.html").read_text() for i in ("q0", "q1")}
    assert "outside the run and data directories, not shown: secret.png" in pages["q0"]
    assert "image too large to show" in pages["q1"]
    assert not list((out / "report").rglob("*.png"))  # neither file was copied
    again = run_script("report.py", str(out))  # a rebuild replaces the report
    assert again.returncode == 0, again.stderr
    assert not [p for p in out.iterdir() if p.name.startswith(".report")]  # no build leftovers


def test_rescore_refuses_a_results_file_with_corrupt_lines(tmp_path: Path, finished_run) -> None:
    out = finished_run(tmp_path / "run")
    lines = _lines(out / "results.jsonl")
    (out / "results.jsonl").write_text("\n".join([lines[0], "{garbage", *lines[1:]]) + "\n")
    before = (out / "results.jsonl").read_bytes()
    proc = run_script("rescore.py", str(out), "--trust-config")
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc) == [
        f"error: {out / 'results.jsonl'}: line 2 is not a readable result record (Expecting property name enclosed in double quotes: '{{garbage')"
    ]
    assert (out / "results.jsonl").read_bytes() == before


@pytest.fixture
def replay_run(tmp_path: Path):
    data = _write_jsonl(
        tmp_path / "data" / "items.jsonl",
        [
            {"id": f"r{i}", "question": f"question {i}?", "options": ["x", "y"], "answer": "A"}
            for i in range(3)
        ],
    )
    prompts = tmp_path / "prompts.yaml"
    prompts.write_text(yaml.safe_dump(PROMPTS))

    def run(replies: list, out: str) -> subprocess.CompletedProcess[str]:
        path = _write_jsonl(tmp_path / f"{out}.jsonl", replies)
        return run_script(
            "run.py",
            "pipeline=official",
            f"pipeline.prompts_path={prompts}",
            "benchmark=jsonl",
            f"benchmark.path={data}",
            "backend=replay",
            f"backend.path={path}",
            "logger=none",
            "progress=false",
            f"hydra.run.dir={tmp_path / out}",
        )

    return run


def test_replay_file_faults_are_one_line_each(replay_run, tmp_path: Path) -> None:
    ok = [{"id": "r0", "response": "Answer: A"}, {"id": "r1", "response": "Answer: A"}]
    dup = replay_run([*ok, {"id": "r0", "response": "Answer: B"}], "dup")
    assert dup.returncode == 2 and _errors(dup) == [
        f"error: {tmp_path / 'dup.jsonl'}: record 3 repeats id 'r0' with a different 'response'; keep one reply per id"
    ]
    bad = replay_run([*ok, b"{oops"], "bad")
    assert bad.returncode == 2 and _errors(bad) == [
        f"error: {tmp_path / 'bad.jsonl'}: line 3 is not valid JSON (Expecting property name enclosed in double quotes: '{{oops')"
    ]
    null = replay_run([*ok, {"id": "r2", "response": None}], "null")
    assert null.returncode == 3, null.stderr
    rows = {d["id"]: d for d in map(json.loads, _lines(tmp_path / "null" / "results.jsonl"))}
    assert "is null" in rows["r2"]["error"] and rows["r2"]["prediction"] is None
    assert [rows[i]["score"] for i in ("r0", "r1")] == [1.0, 1.0]


# ------------------------------------------------------------------------------ 4. config mistakes
@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            ["backend=vllm_server", "backend.base_urls=[]"],
            "error: vllm_server backend needs at least one base URL",
        ),
        (["backend=vllm_server", "backend.concurrency=0"], "error: concurrency must be >= 1, got 0"),
        (
            ["backend=simulated", "+backend.phantom_rat=0.1"],
            "error: unknown simulator rate(s) ['phantom_rat']",
        ),
        (
            ["backend=replay", "backend.path=/no/such/replies.jsonl"],
            "error: backend.path: replies file not found",
        ),
        (["logger=wandb_online"], "error: logger=wandb_online: W&B could not start"),
    ],
)
def test_config_mistakes_are_one_line_exit_2(tmp_path: Path, overrides: list[str], expected: str) -> None:
    base = (
        [o for o in FAKE_OVERRIDES if not o.startswith("backend")]
        if overrides[0].startswith("backend=")
        else FAKE_OVERRIDES
    )
    wandb = overrides[0].startswith("logger")
    args = [*base, *([] if wandb else ["logger=none"]), *overrides, f"hydra.run.dir={tmp_path / 'r'}"]
    if wandb:  # W&B in a child of its own, without a login a home directory or the environment holds
        env = {k: v for k, v in subprocess_env().items() if not k.startswith("WANDB_") or k == "WANDB_SILENT"}
        env["HOME"] = str(tmp_path)  # no ~/.netrc: no W&B login
        proc = subprocess.run(
            [sys.executable, str(REPO / "scripts" / "run.py"), *args],
            cwd=REPO,
            text=True,
            capture_output=True,
            timeout=120,
            env=env,
        )
    else:
        proc = run_script("run.py", *args)
    assert proc.returncode == 2, proc.stderr
    lines = _errors(proc)
    assert len(lines) == 1 and lines[0].startswith(expected), proc.stderr
    assert not (tmp_path / "r" / "results.jsonl").exists()
