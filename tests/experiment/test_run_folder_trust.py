"""A run folder that cannot lie, part 2: driven through the scripts as a user would.

The record is written by its holder only (claimed before anything is written; every sweep job its
own directory); resume trusts only what the holder wrote; a foreign folder is inert data for
every reader. Each test checks the exit code, the one line, and the results / identity before
and after.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from ledgermind.runs.trajectories import trajectory_path
from tests.experiment.conftest import FAKE_OVERRIDES, run_script
from tests.experiment.test_run_dir_faults import _errors, _fake, _holder, _lines, _wait_for


def _ids(out: Path) -> list[str]:
    return [json.loads(x)["id"] for x in _lines(out / "results.jsonl")]


def _identity(out: Path) -> dict:
    return json.loads((out / "run_identity.json").read_text())["identity"]


# ------------------------------------------------------------------------------ claimed before written
def test_a_run_launched_into_a_held_directory_leaves_no_trace_in_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    holder, started, gate = _holder(out, tmp_path, "pipeline.gamma=0.5")
    try:
        _wait_for(started, holder)
        config, overrides = (
            (out / ".hydra" / "config.yaml").read_text(),
            (out / ".hydra" / "overrides.yaml").read_text(),
        )
        identity = (out / "run_identity.json").read_text()
        other = _fake(out, "+ablation=no_ecc", "pipeline.gamma=0.9")
        assert other.returncode == 2 and "is in use by another run" in _errors(other)[0], other.stderr
        # nothing of the refused run is in the holder's folder: not its config, overrides, identity or log
        assert (out / ".hydra" / "config.yaml").read_text() == config
        assert (out / ".hydra" / "overrides.yaml").read_text() == overrides
        assert (out / "run_identity.json").read_text() == identity
    finally:
        gate.touch()
        assert holder.wait(timeout=120) == 0
    recorded = yaml.safe_load((out / ".hydra" / "config.yaml").read_text())
    assert "ablation" not in recorded and recorded["pipeline"]["gamma"] == 0.5
    assert "pipeline.gamma=0.5" in yaml.safe_load((out / ".hydra" / "overrides.yaml").read_text())
    hydra_node = yaml.safe_load((out / ".hydra" / "hydra.yaml").read_text())["hydra"]
    assert "no_ecc" not in (out / "run.log").read_text() + str(hydra_node["overrides"])
    assert json.loads((out / "metrics.json").read_text())["identity"]["variant"] == "full"
    assert sorted(_ids(out)) == [f"q{i}" for i in range(6)]


def test_a_sweep_over_a_resumable_key_gives_every_job_its_own_directory(tmp_path: Path) -> None:
    sweep, counter = tmp_path / "sweep", tmp_path / "calls.txt"
    proc = run_script(
        "run.py",
        "-m",
        *FAKE_OVERRIDES,
        "logger=none",
        f"hydra.sweep.dir={sweep}",
        "limit=2,4",
        FAKE_AGENT_COUNTER=str(counter),
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in sweep.iterdir() if p.is_dir()) == ["limit=2", "limit=4"]
    assert sorted(_ids(sweep / "limit=2")) == ["q0", "q1"]
    assert sorted(_ids(sweep / "limit=4")) == ["q0", "q1", "q2", "q3"]
    assert len(_lines(counter)) == 6  # job 2 solved its own four items: it did not "resume" job 1
    assert json.loads((sweep / "limit=2" / "metrics.json").read_text())["n_items"] == 2
    assert json.loads((sweep / "limit=4" / "metrics.json").read_text())["n_items"] == 4
    # a relaunch finds each job's own items
    again = run_script(
        "run.py",
        "-m",
        *FAKE_OVERRIDES,
        "logger=none",
        f"hydra.sweep.dir={sweep}",
        "limit=4,2",
        FAKE_AGENT_COUNTER=str(counter),
    )
    assert again.returncode == 0, again.stderr
    assert len(_lines(counter)) == 6


# ------------------------------------------------------------------------------ resume trusts only the holder
def test_a_second_success_line_for_a_finished_id_is_refused_naming_the_line(
    tmp_path: Path, finished_run
) -> None:
    out = tmp_path / "run"
    finished_run(out)
    lines = _lines(out / "results.jsonl")
    q1 = next(n for n, x in enumerate(lines, 1) if json.loads(x)["id"] == "q1")
    pasted = {**json.loads(lines[q1 - 1]), "prediction": "B", "score": 0.0}  # another variant's verdict
    (out / "results.jsonl").write_text("\n".join([*lines, json.dumps(pasted)]) + "\n")
    before = (out / "results.jsonl").read_text()

    again = _fake(out)
    assert again.returncode == 2, again.stderr
    assert _errors(again) == [
        f"error: {out / 'results.jsonl'} line 7: a second result for item 'q1', already finished on line {q1}; "
        "a run never redoes a finished item, so this line is not the run's own: remove it"
    ]
    assert (out / "results.jsonl").read_text() == before
    # every reader refuses it the same way: the report does not show the pasted verdict
    report = run_script("report.py", str(out))
    assert report.returncode == 2 and "line 7: a second result for item 'q1'" in report.stderr, report.stderr


def test_results_without_a_readable_identity_are_never_adopted(tmp_path: Path, finished_run) -> None:
    out = tmp_path / "run"
    finished_run(out)
    results = _lines(out / "results.jsonl")
    for damage, state in (
        (lambda: (out / "run_identity.json").write_text("{not json"), "unreadable"),
        (lambda: (out / "run_identity.json").unlink(), "missing"),
    ):
        damage()
        (out / "metrics.json").unlink(missing_ok=True)
        other = _fake(out, "+ablation=no_ecc")
        assert other.returncode == 2, other.stderr
        assert _errors(other) == [
            f"error: {out} holds results but its run_identity.json is {state}, so which experiment they belong to "
            "cannot be told; use another hydra.run.dir, or add resume=new to start a new directory beside it"
        ]
        assert _lines(out / "results.jsonl") == results and not (out / "metrics.json").exists()
        assert "no_ecc" not in (out / ".hydra" / "config.yaml").read_text()
    new = _fake(out, "+ablation=no_ecc", "resume=new")
    assert new.returncode == 0, new.stderr
    assert (
        _identity(out.with_name("run-2"))["variant"] == "no_ecc" and _lines(out / "results.jsonl") == results
    )


def test_an_item_whose_content_changed_is_never_kept(tmp_path: Path) -> None:
    data, out = tmp_path / "items.jsonl", tmp_path / "run"
    rows = [
        {"id": f"q{i}", "question": f"question {i}?", "options": ["a", "b"], "answer": "A"} for i in range(3)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ("benchmark=jsonl", f"benchmark.path={data}")
    first = run_script("run.py", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={out}", *args)
    assert first.returncode == 0, first.stderr
    hashes = {json.loads(x)["id"]: json.loads(x)["item_sha256"] for x in _lines(out / "results.jsonl")}
    assert len(set(hashes.values())) == 3 and all(len(h) == 64 for h in hashes.values())
    items_sha = json.loads((out / "metrics.json").read_text())["identity"]["items_sha256"]

    rows[1]["answer"] = "B"  # the gold of q1 changed on disk; same ids, same config
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = _lines(out / "results.jsonl")
    again = run_script("run.py", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={out}", *args)
    assert again.returncode == 2, again.stderr
    assert _errors(again) == [
        f"error: {out / 'results.jsonl'}: item 'q1' changed since it was solved (its question, options, gold or "
        "images differ), so its verdict cannot be kept; run the changed data into another hydra.run.dir, "
        "or restore the data"
    ]
    assert _lines(out / "results.jsonl") == results
    other = tmp_path / "other"
    fresh = run_script("run.py", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={other}", *args)
    assert fresh.returncode == 0, fresh.stderr
    # the identity hashes content: the edited item set is another set (Table 3 will not pair the two)
    assert json.loads((other / "metrics.json").read_text())["identity"]["items_sha256"] != items_sha


# ------------------------------------------------------------------------------ a foreign folder is inert data
def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_results_file_linked_out_of_the_folder_is_neither_written_nor_read(
    tmp_path: Path, finished_run
) -> None:
    out, outside = tmp_path / "run", tmp_path / "outside.jsonl"
    finished_run(out, "limit=3")
    (out / "results.jsonl").rename(outside)
    precious = outside.read_bytes()[:-10]  # an outside file whose last line is torn (a resume would cut it)
    outside.write_bytes(precious)
    (out / "results.jsonl").symlink_to(outside)

    again = _fake(out)
    assert again.returncode == 2, again.stderr
    assert _errors(again) == [
        f"error: {out / 'results.jsonl'} is a symbolic link; a run folder's files must be its own (a resume would "
        "write through it): remove the link, or use another hydra.run.dir"
    ]
    assert outside.read_bytes() == precious  # not truncated, not appended to
    report = run_script("report.py", str(out))
    assert report.returncode == 2, report.stderr
    assert _errors(report) == [f"error: {out / 'results.jsonl'}: is a link out of the run folder; not read"]


def test_a_linked_trajectory_of_an_unfinished_item_refuses_the_resume_before_any_item(
    tmp_path: Path, finished_run
) -> None:
    """A resume would write the unfinished item's trajectory through the link: it is refused when
    the folder is claimed, before the item's model calls, not after them."""
    out, counter, outside = tmp_path / "run", tmp_path / "calls.txt", tmp_path / "outside.json"
    finished_run(out, "limit=2")
    rows = _lines(out / "results.jsonl")
    (out / "results.jsonl").write_text(rows[0] + "\n")  # the second item is unfinished
    traj = trajectory_path(out, json.loads(rows[1])["id"])
    traj.unlink()
    traj.symlink_to(outside)  # dangling: a write through it would make the file outside

    again = _fake(out, "limit=2", FAKE_AGENT_COUNTER=str(counter))
    assert again.returncode == 2, again.stderr
    assert _errors(again) == [
        f"error: {traj} is a symbolic link; a run folder's files must be its own (a resume would "
        "write through it): remove the link, or use another hydra.run.dir"
    ]
    assert not counter.exists() and not outside.exists()  # no item ran, nothing written through the link
    assert _lines(out / "results.jsonl") == rows[:1]


def test_a_hydra_folder_linked_out_lets_a_refused_rerun_write_nothing_there(
    tmp_path: Path, finished_run
) -> None:
    out, outside = tmp_path / "run", tmp_path / "elsewhere"
    finished_run(out)
    outside.mkdir()
    (outside / "config.yaml").write_text("precious: true\n")
    for f in (out / ".hydra").iterdir():
        f.unlink()
    (out / ".hydra").rmdir()
    (out / ".hydra").symlink_to(outside)
    again = _fake(out, "+ablation=no_ecc")
    assert again.returncode == 2 and "is a symbolic link" in _errors(again)[0], again.stderr
    assert _tree(outside) == {"config.yaml": b"precious: true\n"}


def test_a_trajectory_linked_from_outside_is_not_rendered(tmp_path: Path, finished_run) -> None:
    out, secret = tmp_path / "run", tmp_path / "secret.json"
    finished_run(out, "limit=2")
    traj = next((out / "trajectories").iterdir())
    record = json.loads(traj.read_text())
    record["raw_answer"] = "TOP-SECRET-OUTSIDE-TEXT"
    secret.write_text(json.dumps(record))
    traj.unlink()
    traj.symlink_to(secret)
    report = run_script("report.py", str(out))
    assert report.returncode == 0, report.stderr
    html = "".join(p.read_text(errors="replace") for p in (out / "report").rglob("*.html"))
    assert "TOP-SECRET-OUTSIDE-TEXT" not in html
    assert "is a link out of the run folder" in html  # a note on the page says why it is missing


def test_an_interpolation_in_a_foreign_config_is_never_resolved(tmp_path: Path, finished_run) -> None:
    out = tmp_path / "run"
    finished_run(out, "limit=2")
    cfg = yaml.safe_load((out / ".hydra" / "config.yaml").read_text())
    cfg["benchmark"]["n"] = 2
    cfg["benchmark"]["path"] = "${oc.env:OPENAI_API_KEY}"
    cfg["ablation"] = {"name": "${oc.env:OPENAI_API_KEY}"}
    (out / ".hydra" / "config.yaml").write_text(yaml.safe_dump(cfg))
    secret = "sk-THE-READERS-OWN-KEY"
    outputs = []
    for script, args in (
        ("report.py", [str(out)]),
        ("rescore.py", [str(out)]),
        ("compare.py", [str(out), str(out), "--out", str(tmp_path / "radar.png")]),
    ):
        proc = run_script(script, *args, OPENAI_API_KEY=secret)
        outputs.append(proc.stdout + proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
    written = b"".join(_tree(out).values())
    assert secret not in "".join(outputs) and secret.encode() not in written


def test_table3_auto_never_follows_a_foreign_online_logger(tmp_path: Path, finished_run) -> None:
    import socket
    import threading

    out = finished_run(tmp_path / "run", "limit=2")
    cfg = yaml.safe_load((out / ".hydra" / "config.yaml").read_text())
    cfg["logger"] = {
        "_target_": "ledgermind.experiment.wandb_logger.WandbLogger",
        "mode": "online",
        "entity": "someone-else",
        "project": "their-project",
        "tags": 5,
    }
    (out / ".hydra" / "config.yaml").write_text(yaml.safe_dump(cfg))

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    hits: list[str] = []
    stop = threading.Event()

    def listen() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            hits.append("connection")
            conn.close()

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    try:
        proc = run_script(
            "table3.py",
            str(out),
            "--out",
            str(tmp_path / "t3"),
            WANDB_API_KEY="x" * 40,
            WANDB_BASE_URL=f"http://127.0.0.1:{port}",
            WANDB_SILENT="true",
        )
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()
    assert proc.returncode == 0, proc.stderr
    assert hits == []  # no request left for the folder's W&B server (here: a local listener)
    assert not list((tmp_path / "t3").rglob("wandb"))  # and no W&B run was made from the folder's node


def test_wrong_typed_run_files_are_one_line_for_every_reader(tmp_path: Path, finished_run) -> None:
    out = tmp_path / "run"
    finished_run(out, "limit=3")
    lines = _lines(out / "results.jsonl")
    bad = {**json.loads(lines[1]), "score": "high", "question_types": 7}
    (out / "results.jsonl").write_text("\n".join([lines[0], json.dumps(bad), lines[2]]) + "\n")
    metrics = json.loads((out / "metrics.json").read_text())
    metrics["accuracy"] = "ninety"
    (out / "metrics.json").write_text(json.dumps(metrics))
    before = _tree(out)

    t3 = run_script("table3.py", str(out), "--logger", "none", "--out", str(tmp_path / "t3"))
    assert t3.returncode == 2, t3.stderr
    assert _errors(t3)[-1] == f"error: {out / 'metrics.json'}: field 'accuracy': expected float, got 'ninety'"
    rescore = run_script("rescore.py", str(out))
    assert rescore.returncode == 2 and "Traceback" not in rescore.stderr, rescore.stderr
    assert _tree(out) == before  # validated before anything was written
    report = run_script("report.py", str(out))
    assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
    assert any(
        ln.startswith(f"note: {out / 'results.jsonl'} line 2: not a readable result record (field 'score'")
        for ln in report.stderr.splitlines()
    ), report.stderr
    html = (out / "report" / "index.html").read_text()
    assert "field &#39;accuracy&#39;: expected float" in html or "field 'accuracy': expected float" in html
