"""S-RFA (Figure 5): splitting, ledger-mode labels, judge symmetry and failures, metrics, compare."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PIL import Image

from ledgermind.backends.base import Backend, GenerationRequest, Reply
from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.claims import Claim, ClaimType, Stage
from ledgermind.errors import UserError
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig
from ledgermind.runs.trajectories import trajectory_path
from ledgermind.srfa.compare import compare, format_table, radar_figure, radar_png
from ledgermind.srfa.judge import JUDGE_SYSTEM, Judge, prompt_hash
from ledgermind.srfa.protocol import AtomicClaim, SrfaMode, SrfaRecord, cohen_kappa, srfa_metrics
from ledgermind.srfa.run import EvidenceSource, SrfaSettings, load_run, srfa_run
from ledgermind.srfa.split import split_trace
from ledgermind.trajectory import PathKind, Trajectory
from perception.aliases import AliasTable
from tests.helpers import EchoOCR, TextImage

OPTIONS = ["Apollo 11", "Apollo 13", "Gemini 4", "Vostok 1"]
QUESTION = "Which mission is commemorated by the plaque in <image 1>?"


# ------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def cascade(ner) -> GroundingCascade:
    return GroundingCascade(GroundingConfig(), ner, AliasTable.default())


@pytest.fixture()
def image(tmp_path: Path) -> Path:
    p = tmp_path / "plaque.png"
    Image.new("RGB", (64, 48), "white").save(p)
    return p


def _item(image: Path, id_: str = "q1") -> Item:
    return Item(id_, QUESTION, [image], OPTIONS, "A", AnswerType.MCQ, difficulty="Easy")


def _baseline_traj(item_id: str, trace: str, ocr_lines: list[str]) -> Trajectory:
    t = Trajectory(item_id, QUESTION, PathKind.BASELINE)
    t.ledger.record(EchoOCR().invoke(image=TextImage(ocr_lines)))
    t.transcript = [{"role": "tools", "text": "..."}, {"role": "model", "text": trace}]
    return t


def _ledgermind_traj(item_id: str) -> Trajectory:
    t = Trajectory(item_id, QUESTION, PathKind.FULLPIPE)
    [a, b] = t.ledger.record(EchoOCR().invoke(image=TextImage(["Apollo 11 plaque", "July 1969"])))
    t.ledger.add_claim(Claim("SC-1", ClaimType.SC, "The plaque names Apollo 11", Stage.E, [a.id]))
    t.ledger.add_claim(Claim("SC-2", ClaimType.SC, "It is dated July 1969", Stage.J, [b.id]))
    t.ledger.add_claim(Claim("DC-1", ClaimType.DC, "Answer: A", None, ["SC-1"]))
    return t


def _write_run(run_dir: Path, rows: list[dict], trajs: dict[str, Trajectory]) -> Path:
    (run_dir / "trajectories").mkdir(parents=True)
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for item_id, t in trajs.items():
        trajectory_path(run_dir, item_id).write_text(json.dumps(t.to_dict()))
    return run_dir


def _row(
    item_id: str, prediction: str, score: float, difficulty: str = "Easy", path: str = "BASELINE"
) -> dict:
    return {
        "id": item_id,
        "prediction": prediction,
        "gold": "A",
        "score": score,
        "difficulty": difficulty,
        "path": path,
        "error": None,
    }


class JudgeBackend(Backend):
    """A judge that reads the request as a model would: it labels a trace line grounded iff the
    line mentions 'Apollo 11'; a trace containing 'GARBAGE' gets a reply that is not JSON."""

    name = "fake_judge"

    def __init__(self) -> None:
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> Reply:
        self.requests.append(request)
        text = request.last_user_text()
        trace = text.split("<<<TRACE\n", 1)[1].split("\nTRACE>>>", 1)[0]
        if "GARBAGE" in trace:
            return Reply("I think the trace is fine!!")
        if "The trace has been split into these claims:" in text:
            listed = text.split("split into these claims:\n", 1)[1].split("\n\n", 1)[0].splitlines()
            labels = [
                {"label": "grounded" if "Apollo 11" in c else "ungrounded", "reason": "r"} for c in listed
            ]
            return Reply(json.dumps({"labels": labels}))
        lines = [ln for ln in trace.splitlines() if ln.strip()]
        claims = [
            {"text": ln, "type": "SC", "label": "grounded" if "Apollo 11" in ln else "ungrounded"}
            for ln in lines[:-1]
        ]
        claims.append(
            {"text": lines[-1], "type": "DC", "label": "grounded" if "A" in lines[-1] else "ungrounded"}
        )
        return Reply(json.dumps({"claims": claims}))


# ------------------------------------------------------------------------------ splitting
def test_split_uses_sc_structure_and_answer_sentence() -> None:
    trace = (
        "[SC-1][E] The plaque reads Apollo 11 | Based on: [OC-1]\n"
        "[SC-2][I] Apollo 11 flew in 1969 | Based on: [OC-2]\n"
        "[SC-3][J] So the mission is Apollo 11\nAnswer: A"
    )
    s = split_trace(trace)
    assert s.structured and s.statements == (
        "The plaque reads Apollo 11",
        "Apollo 11 flew in 1969",
        "So the mission is Apollo 11",
    )
    assert s.decision == "Answer: A"


def test_split_sentences_packs_long_traces_into_ten_claims_without_losing_text() -> None:
    sentences = [f"Step {i} says the value is {i * 3}." for i in range(1, 31)]
    trace = " ".join(sentences) + "\nTherefore the answer is C.\nAnswer: C"
    s = split_trace(trace)
    assert len(s.statements) == 9 and s.decision == "Answer: C"
    joined = " ".join(s.statements)
    assert all(x in joined for x in sentences) and "Therefore the answer is C." in joined
    short = split_trace("The plaque says Apollo 11. It shows 1969.")
    assert short.statements == ("The plaque says Apollo 11.",) and short.decision == "It shows 1969."


def test_split_does_not_cut_a_name_after_its_title() -> None:
    """ "as Dr. Tobias Wren established" is one claim: the entity must stay whole for ECC to see it."""
    s = split_trace(
        "Water fits best, as Dr. Tobias Wren established. See Fig. 3 and St. Louis data. Answer: B"
    )
    assert s.statements == (
        "Water fits best, as Dr. Tobias Wren established.",
        "See Fig. 3 and St. Louis data.",
    )


def test_split_ignores_hidden_reasoning_blocks() -> None:
    s = split_trace("<think>Maybe it is Vostok 1.</think>The plaque reads Apollo 11. Answer: A")
    assert "Vostok" not in " ".join(s.statements) + s.decision


# ------------------------------------------------------------------------------ ledger mode
def _audit(tmp_path: Path, rows, trajs, items, cascade, mode=SrfaMode.LEDGER, judge=None, evidence=None):
    run = _write_run(tmp_path / "run", rows, trajs) if not (tmp_path / "run").exists() else tmp_path / "run"
    return asyncio.run(
        srfa_run(
            load_run(run),
            SrfaSettings(mode, 0.5),
            cascade=cascade,
            items=items,
            evidence=evidence,
            judge=judge,
        )
    ), run


def _audits(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "srfa.jsonl").read_text().splitlines()]


def test_ledger_mode_labels_phantom_entity_ungrounded_and_restated_ocr_grounded(
    tmp_path, image, cascade
) -> None:
    phantom = _baseline_traj(
        "q1",
        "The plaque commemorates Apollo 13 and Jim Lovell.\nAnswer: B",
        ["Apollo 11 plaque", "July 1969"],
    )
    faithful = _baseline_traj(
        "q2", "The plaque reads Apollo 11 plaque, July 1969.\nAnswer: A", ["Apollo 11 plaque", "July 1969"]
    )
    items = {"q1": _item(image, "q1"), "q2": _item(image, "q2")}
    metrics, run = _audit(
        tmp_path,
        [_row("q1", "B", 0.0), _row("q2", "A", 1.0)],
        {"q1": phantom, "q2": faithful},
        items,
        cascade,
    )
    by_id = {a["id"]: a for a in _audits(run)}
    p_sc, p_dc = by_id["q1"]["claims"]
    assert p_sc["label"] == "ungrounded" and "Lovell" in p_sc["reason"] or "Apollo 13" in p_sc["reason"]
    assert p_dc["ctype"] == "DC" and p_dc["answer"] == "B" and p_dc["label"] == "ungrounded"
    f_sc, f_dc = by_id["q2"]["claims"]
    assert f_sc["label"] == "grounded" and f_dc["answer"] == "A" and f_dc["label"] == "grounded"
    # hand-computed: claims q1 (0/2 grounded), q2 (2/2): UCR = mean(1, 0) = .5; GDR = mean(0, 1) = .5;
    # R4R: the one correct item has GDR 1 > .5 → 1; WDG: the one wrong item has GDR 0 → 0.
    m = metrics["ledger"]
    assert (m["Acc"], m["srfa.UCR_reason"], m["srfa.GDR"], m["srfa.R4R"], m["srfa.WDG"]) == (
        0.5,
        0.5,
        0.5,
        1.0,
        0.0,
    )
    assert m["by_difficulty"]["Easy"]["n"] == 2 and m["by_outcome"]["wrong"]["srfa.GDR"] == 0.0


def test_ledgermind_trajectory_is_audited_through_its_own_claims(tmp_path, image, cascade) -> None:
    metrics, run = _audit(
        tmp_path,
        [_row("q1", "A", 1.0, path="FULLPIPE")],
        {"q1": _ledgermind_traj("q1")},
        {"q1": _item(image)},
        cascade,
    )
    [audit] = _audits(run)
    assert [c["text"] for c in audit["claims"]] == [
        "The plaque names Apollo 11",
        "It is dated July 1969",
        "Answer: A",
    ]
    assert all(c["label"] == "grounded" for c in audit["claims"])
    assert metrics["ledger"]["srfa.GDR"] == 1.0 and metrics["ledger"]["srfa.UCR_reason"] == 0.0


def test_evidence_is_computed_on_demand_with_the_real_ocr_when_a_trace_has_no_ledger(
    tmp_path, cascade
) -> None:
    from PIL import ImageDraw

    from perception.tools import OCRTool

    img = Image.new("RGB", (420, 120), "white")
    ImageDraw.Draw(img).text((20, 40), "TRANQUILITY", fill="black", font_size=40)
    path = tmp_path / "sign.png"
    img.save(path)
    t = Trajectory("q1", QUESTION, PathKind.BASELINE)  # a replayed output: no tools, no ledger
    t.transcript = [{"role": "model", "text": "The sign says TRANQUILITY.\nAnswer: A"}]
    source = EvidenceSource({"ocr": OCRTool()})
    metrics, run = _audit(
        tmp_path, [_row("q1", "A", 1.0)], {"q1": t}, {"q1": _item(path)}, cascade, evidence=source
    )
    [audit] = _audits(run)
    assert audit["claims"][0]["label"] == "grounded"  # "TRANQUILITY" was read by the real OCR
    t.transcript = [{"role": "model", "text": "The sign says SERENITY.\nAnswer: A"}]
    trajectory_path(run, "q1").write_text(json.dumps(t.to_dict()))
    (run / "srfa.jsonl").unlink()
    asyncio.run(
        srfa_run(load_run(run), SrfaSettings(), cascade=cascade, items={"q1": _item(path)}, evidence=source)
    )
    assert _audits(run)[0]["claims"][0]["label"] == "ungrounded"


# ------------------------------------------------------------------------------ judge mode
def test_judge_request_is_identical_for_every_trace_apart_from_the_trace(tmp_path, image) -> None:
    backend = JudgeBackend()
    judge = Judge(backend)
    items = {"q1": _item(image)}
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    _write_run(ours, [_row("q1", "A", 1.0, path="FULLPIPE")], {"q1": _ledgermind_traj("q1")})
    _write_run(
        theirs, [_row("q1", "B", 0.0)], {"q1": _baseline_traj("q1", "It is Apollo 13.\nAnswer: B", [])}
    )
    for run in (ours, theirs):
        asyncio.run(
            srfa_run(load_run(run), SrfaSettings(SrfaMode.JUDGE), cascade=None, items=items, judge=judge)
        )
    a, b = backend.requests
    ta, tb = a.last_user_text(), b.last_user_text()
    trace_a = ta.split("<<<TRACE\n")[1].split("\nTRACE>>>")[0]
    trace_b = tb.split("<<<TRACE\n")[1].split("\nTRACE>>>")[0]
    assert trace_a != trace_b and ta.replace(trace_a, "") == tb.replace(trace_b, "")
    assert [m.role for m in a.messages] == [m.role for m in b.messages] and a.messages[0].content == [
        JUDGE_SYSTEM
    ]
    assert a.messages[1].images() == b.messages[1].images() == [image]  # the item's own image, both sides
    assert (a.temperature, a.max_tokens, a.seed, a.json_schema) == (
        b.temperature,
        b.max_tokens,
        b.seed,
        b.json_schema,
    )
    recorded = json.loads((theirs / "srfa_metrics.json").read_text())["judge_protocol"]
    assert recorded["prompt_hash"] == prompt_hash() and recorded["decoding"]["temperature"] == 0.0


def test_judge_garbage_is_a_per_item_error_and_a_rerun_retries_it(tmp_path, image) -> None:
    backend = JudgeBackend()
    items = {"q1": _item(image, "q1"), "q2": _item(image, "q2")}
    rows = [_row("q1", "A", 1.0), _row("q2", "A", 1.0)]
    trajs = {
        "q1": _baseline_traj("q1", "The plaque reads Apollo 11.\nAnswer: A", []),
        "q2": _baseline_traj("q2", "GARBAGE\nAnswer: A", []),
    }
    run = _write_run(tmp_path / "run", rows, trajs)
    m = asyncio.run(
        srfa_run(load_run(run), SrfaSettings(SrfaMode.JUDGE), cascade=None, items=items, judge=Judge(backend))
    )
    assert m["judge"]["audit_errors"] == 1 and m["judge"]["n"] == 1
    err = next(a for a in _audits(run) if a["id"] == "q2")
    assert err["error"].startswith("judge reply has no JSON") and err["claims"] == []
    # the judge recovers: rerunning redoes q2 only
    trajs["q2"].transcript[1]["text"] = "The plaque reads Apollo 11.\nAnswer: A"
    trajectory_path(run, "q2").write_text(json.dumps(trajs["q2"].to_dict()))
    n_before = len(backend.requests)
    m2 = asyncio.run(
        srfa_run(load_run(run), SrfaSettings(SrfaMode.JUDGE), cascade=None, items=items, judge=Judge(backend))
    )
    assert (
        len(backend.requests) == n_before + 1 and m2["judge"]["audit_errors"] == 0 and m2["judge"]["n"] == 2
    )


def test_srfa_check_reads_the_audit_and_refuses_a_missing_or_damaged_one(
    tmp_path, image, cascade, capsys
) -> None:
    from ledgermind.cli.srfa_check import main as srfa_check_main

    traj = _baseline_traj("q1", "The plaque reads Apollo 11 plaque.\nAnswer: A", ["Apollo 11 plaque"])
    run = _write_run(tmp_path / "run", [_row("q1", "A", 1.0)], {"q1": traj})
    assert srfa_check_main([str(run)]) == 2
    assert capsys.readouterr().err.startswith("error: no srfa.jsonl in")
    _audit(tmp_path, [], {}, {"q1": _item(image)}, cascade)
    assert srfa_check_main([str(run)]) == 0
    assert json.loads(capsys.readouterr().out)["correctness"]["n"] == 1
    (run / "srfa_metrics.json").write_text("{torn")
    assert srfa_check_main([str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith(
        "srfa_metrics.json: not valid JSON (Expecting property name enclosed in double quotes)"
    )


def test_an_audit_line_of_another_shape_is_skipped_not_a_crash(tmp_path, image, cascade) -> None:
    from ledgermind.srfa.run import SRFA_FILE, read_run_records

    traj = _baseline_traj("q1", "The plaque reads Apollo 11 plaque.\nAnswer: A", ["Apollo 11 plaque"])
    _, run = _audit(tmp_path, [_row("q1", "A", 1.0)], {"q1": traj}, {"q1": _item(image)}, cascade)
    good = read_run_records(run)
    assert [r.item_id for r in good] == ["q1"]
    with (run / SRFA_FILE).open("a") as f:
        f.write(json.dumps({"id": "q1", "mode": 7}) + "\n" + json.dumps(["not", "a", "record"]) + "\n")
    assert read_run_records(run) == good


def test_a_trajectory_of_another_shape_is_an_audit_error_not_a_crash(tmp_path, image, cascade) -> None:
    run = _write_run(tmp_path / "run", [_row("q1", "A", 1.0)], {})
    trajectory_path(run, "q1").write_text(json.dumps({"item_id": "q1", "ledger": 5}))
    metrics, _ = _audit(tmp_path, [], {}, {"q1": _item(image)}, cascade)
    (audit,) = _audits(run)
    assert audit["error"] == "no readable trajectory recorded" and metrics["ledger"]["audit_errors"] == 1


def test_both_mode_reports_per_claim_agreement(tmp_path, image, cascade) -> None:
    t = _baseline_traj(
        "q1", "The plaque reads Apollo 11 plaque.\nIt mentions Jim Lovell.\nAnswer: A", ["Apollo 11 plaque"]
    )
    metrics, _ = _audit(
        tmp_path,
        [_row("q1", "A", 1.0)],
        {"q1": t},
        {"q1": _item(image)},
        cascade,
        mode=SrfaMode.BOTH,
        judge=Judge(JudgeBackend()),
    )
    ag = metrics["agreement"]
    # ledger: [grounded, ungrounded, grounded(DC: option "Apollo 11" in evidence)];
    # judge (fake): grounded iff the claim text says "Apollo 11": [grounded, ungrounded, ungrounded ("Answer: A")]
    assert ag["n"] == 3 and ag["confusion"] == {
        "both_grounded": 1,
        "both_ungrounded": 1,
        "ledger_only": 1,
        "judge_only": 0,
    }
    assert ag["kappa"] == pytest.approx(
        (2 / 3 - (2 / 3 * 1 / 3 + 1 / 3 * 2 / 3)) / (1 - (2 / 3 * 1 / 3 + 1 / 3 * 2 / 3))
    )


class DownFirstJudgeBackend(JudgeBackend):
    """The same judge, unreachable for its first reply (a reply that is not JSON)."""

    async def generate(self, request: GenerationRequest) -> Reply:
        if not self.requests:
            self.requests.append(request)
            return Reply("503 Service Unavailable")
        return await super().generate(request)


def test_both_mode_retry_of_the_judge_alone_labels_the_splitters_claims(tmp_path, image, cascade) -> None:
    t = _baseline_traj(
        "q1", "The plaque reads Apollo 11 plaque.\nIt mentions Jim Lovell.\nAnswer: A", ["Apollo 11 plaque"]
    )
    judge = Judge(DownFirstJudgeBackend())
    args = ([_row("q1", "A", 1.0)], {"q1": t}, {"q1": _item(image)}, cascade)
    first, run = _audit(tmp_path, *args, mode=SrfaMode.BOTH, judge=judge)
    assert first["judge"]["audit_errors"] == 1 and first["agreement"]["n"] == 0
    # the rerun redoes the judge record only; it must still label the claims the ledger mode labelled,
    # or the two modes' claims differ and the item drops out of the agreement
    again, _ = _audit(tmp_path, *args, mode=SrfaMode.BOTH, judge=judge)
    assert "split into these claims" in judge.backend.requests[-1].last_user_text()
    assert again["agreement"]["n"] == 3 and again["agreement"]["confusion"]["ledger_only"] == 1
    assert [a["mode"] for a in _audits(run)] == ["ledger", "judge", "judge"]


def test_cohen_kappa_known_values() -> None:
    assert cohen_kappa([True, False], [True, False])["kappa"] == 1.0
    assert cohen_kappa([True, True, False, False], [True, False, True, False])["kappa"] == 0.0


def test_metrics_from_scripted_labels_are_the_run_formulas() -> None:
    def audit(i, labels, score, diff):
        claims = [AtomicClaim("SC", f"s{j}", g) for j, g in enumerate(labels[:-1])] + [
            AtomicClaim("DC", "d", labels[-1])
        ]
        return SrfaRecord(f"q{i}", "ledger", claims=claims, score=score, difficulty=diff)

    audits = [
        audit(1, [True, True, True], 1.0, "Easy"),
        audit(2, [False, True, False], 1.0, "Hard"),
        audit(3, [True, True], 0.0, "Hard"),
        SrfaRecord("q4", "ledger", error="judge failed"),
    ]
    m = srfa_metrics(audits, gamma=0.5)
    # UCR: mean(0/3, 2/3, 0/2) = 2/9; GDR: mean(1, 0, 1) = 2/3; R4R: correct q1 (1>.5), q2 (0) → 1/2; WDG: q3 → 1
    assert m["srfa.UCR_reason"] == pytest.approx(2 / 9) and m["srfa.GDR"] == pytest.approx(2 / 3)
    assert m["srfa.R4R"] == 0.5 and m["srfa.WDG"] == 1.0 and m["Acc"] == pytest.approx(2 / 3)
    assert (
        m["all_claims"]["srfa.GDR"] == pytest.approx(2 / 3) and m["coverage"]["claims"] == 1.0
    )  # no text labels
    assert m["audit_errors"] == 1 and m["n"] == 3 and m["by_difficulty"]["Hard"]["n"] == 2


# ------------------------------------------------------------------------------ compare
def _audited_run(root: Path, name: str, ids: list[str], acc: float) -> Path:
    run = _write_run(root / name, [_row(i, "A", 1.0) for i in ids], {})
    m = {
        "ledger": {
            "Acc": acc,
            "srfa.GDR": 0.8,
            "srfa.R4R": 0.7,
            "srfa.UCR_reason": 0.25,
            "srfa.WDG": 0.1,
            "coverage": {"claims": 0.4},
        }
    }
    (run / "srfa_metrics.json").write_text(json.dumps(m))
    return run


def test_compare_prints_axes_draws_radar_and_refuses_different_items(tmp_path) -> None:
    a = _audited_run(tmp_path, "a", ["q1", "q2"], 0.5)
    b = _audited_run(tmp_path, "b", ["q2", "q1"], 0.75)
    rows = compare([a, b])
    assert rows[1].values == {"Acc": 0.75, "GDR": 0.8, "R4R": 0.7, "1-UCR": 0.75, "1-WDG": 0.9}
    assert rows[1].coverage == 0.4 and "srfa.GDR" in format_table(rows).splitlines()[0]
    fig = radar_figure(rows)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [
        "Acc",
        "srfa.GDR",
        "srfa.R4R",
        "srfa.1-UCR",
        "srfa.1-WDG",
    ]
    png = radar_png(rows, tmp_path / "radar.png")
    with Image.open(png) as im:
        lo, hi = im.convert("L").getextrema()
        assert im.size[0] > 100 and hi - lo > 100  # something was drawn
    c = _audited_run(tmp_path, "c", ["q1", "q3"], 0.5)
    with pytest.raises(UserError, match="different items"):
        compare([a, c])


def test_compare_cli_exits_2_on_mismatched_items(tmp_path, capsys) -> None:
    from ledgermind.cli.compare import main as compare_main

    a = _audited_run(tmp_path, "a", ["q1"], 0.5)
    c = _audited_run(tmp_path, "c", ["q9"], 0.5)
    assert compare_main([str(a), str(c), "--out", str(tmp_path / "r.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: runs cover different items") and len(err.strip().splitlines()) == 1


def test_options_rendered_in_the_image_are_not_evidence(cascade) -> None:
    from ledgermind.srfa.protocol import label_ledger_mode, without_options

    page_ocr = [
        "Which mission is commemorated?",
        "A. Apollo 11",
        "(B) Apollo 13",
        "C) Gemini 4",
        "Vostok",
        "July 1969",
    ]
    assert without_options(page_ocr, OPTIONS) == ["Which mission is commemorated?", "July 1969"]
    [dc] = label_ledger_mode([AtomicClaim("DC", "Answer: B", answer="B")], page_ocr, cascade, OPTIONS)
    assert dc.grounded is False  # picking an option is not supported by seeing the option list


def test_judge_prompts_match_their_snapshots() -> None:
    """Judge prompt drift changes every audit label: review tests/srfa/snapshots/ like code."""
    from ledgermind.srfa.judge import JUDGE_DECOMPOSE, JUDGE_LABEL

    snaps = Path(__file__).parent / "snapshots"
    fields = {
        "question": "Which mission? <image 1>",
        "options": "Options:\nA. Apollo 11\nB. Apollo 13\n",
        "trace": "The plaque reads Apollo 11.\nAnswer: A",
        "max_claims": 10,
    }
    claims = "1. [SC] The plaque reads Apollo 11.\n2. [DC] Answer: A"
    assert (
        snaps / "judge_decompose.txt"
    ).read_text() == JUDGE_SYSTEM + "\n---\n" + JUDGE_DECOMPOSE.substitute(fields)
    assert (snaps / "judge_label.txt").read_text() == JUDGE_SYSTEM + "\n---\n" + JUDGE_LABEL.substitute(
        fields, claims=claims
    )


@pytest.mark.parametrize(
    ("override", "message"), [("srfa.gamma=abc", "a number"), ("srfa.max_claims=x", "an integer")]
)
def test_a_setting_of_the_wrong_type_is_one_line_exit_2(tmp_path, capsys, override, message) -> None:
    from ledgermind.cli.srfa import main as srfa_main

    run = _write_run(tmp_path / "run", [_row("q1", "A", 1.0)], {})
    assert srfa_main([str(run), override, "logger=none"]) == 2
    key, value = override.split("=")
    assert capsys.readouterr().err == f"error: {key} must be {message}, got '{value}'\n"
