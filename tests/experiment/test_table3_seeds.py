"""Table 3 over several seeds, read from run directories whose names say nothing (or lie): the variant
and seed come from each run's metrics.json identity. Every number below is worked out by hand."""

from __future__ import annotations

import asyncio
import csv
import io
from dataclasses import replace
from pathlib import Path

import pytest

from ledgermind.benchmarks.item import Item
from ledgermind.experiment import table3, table3_protocol, table3_render
from ledgermind.experiment.runner import RunOptions, identity_for, run_items
from ledgermind.metrics.stats import BootstrapConfig
from ledgermind.runs.files import RunFileError
from ledgermind.runs.reader import find_runs
from ledgermind.trajectory import PathKind, Trajectory
from tests.experiment.fakes import fake_items, fake_score

BOOT = BootstrapConfig(resamples=4000, seed=3)


class ListAgent:
    """Answers A (the gold) except on ``wrong`` ids; raises on ``fail`` ids (an errored item)."""

    def __init__(self, wrong: set[str], fail: set[str]) -> None:
        self.wrong, self.fail = wrong, fail

    async def solve(self, item: Item) -> Trajectory:
        if item.id in self.fail:
            raise RuntimeError(f"server down on {item.id}")
        answer = "B" if item.id in self.wrong else "A"
        return Trajectory(
            item_id=item.id, question=item.question, path=PathKind.FULLPIPE, raw_answer=answer, answer=answer
        )


def _run(out: Path, variant: str, seed: int, wrong: set[str], fail: set[str] = frozenset()) -> Path:  # type: ignore[assignment]
    items = fake_items(4)  # q0 Easy, q1 Medium, q2 Hard, q3 Easy
    ident = identity_for(
        items,
        model="m",
        backend="b",
        benchmark="fake",
        variant=variant,
        seed=seed,
        provenance={"decoding": {"temperature": 0.0, "seed": seed}},
    )
    asyncio.run(
        run_items(
            items,
            ListAgent(wrong, set(fail)),
            identity=ident,
            options=RunOptions(out, progress=False),
            scorer=fake_score,
            summarize=None,
        )
    )
    return out


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    root = tmp_path / "multirun"
    # directory names that contradict the runs they hold: only the identity may be trusted
    _run(root / "0_no_ecc", "full", 0, wrong={"q3"})
    _run(root / "1_full", "full", 1, wrong=set())
    _run(root / "seed0" / "full", "no_ecc", 0, wrong={"q0", "q3"})
    _run(root / "x", "no_ecc", 1, wrong={"q1"}, fail={"q2"})
    return root


def _rows(root: Path) -> tuple[list[table3.RunScores], list[table3.Row]]:
    runs = [table3.load_run(d) for d in find_runs([root])]
    return runs, table3.build_rows(runs, bootstrap=BOOT)


def test_rows_pool_items_and_seeds_from_identities(sweep: Path) -> None:
    runs, rows = _rows(sweep)
    full, no_ecc = rows
    assert (full.variant, no_ecc.variant) == ("full", "no_ecc") and full.seeds == (0, 1)
    # full: 3/4 then 4/4 → 7/8. no_ecc: 2/4, then 2/3 scored (q2 errored) → 4/7.
    assert full.scores["Overall"] == pytest.approx(87.5) and no_ecc.scores["Overall"] == pytest.approx(
        400 / 7
    )
    assert no_ecc.overall_by_seed == pytest.approx((50.0, 200 / 3)) and no_ecc.errors == 1
    # Paired (item, seed) differences, q2/seed 1 excluded: q0 (−1, 0), q1 (0, −1), q2 (0), q3 (0, 0) → −2/7.
    assert no_ecc.delta == pytest.approx(-200 / 7) and no_ecc.delta_by_seed == pytest.approx(
        (-25.0, -100 / 3)
    )
    # Resampling 4 items jointly with their seeds: all from {q0, q1} (P = 1/16 > 2.5 %) gives −50; none of them
    # (P = 1/16) gives 0. So the 95 % interval is [−50, 0]: it contains 0.
    assert (no_ecc.delta_ci.low, no_ecc.delta_ci.high) == pytest.approx((-50.0, 0.0))
    assert no_ecc.verdict == table3.NOT_DISTINGUISHABLE and full.verdict is None
    # full's accuracy: k draws of q3 ~ Bin(4, 1/4); P(k ≥ 3) = 5.1 %, P(k = 4) = 0.4 %: lower bound (8 − 3)/8.
    assert (full.overall.low, full.overall.high) == pytest.approx((62.5, 100.0))
    # McNemar per seed: one discordant item each (only full right) → p = 1.
    assert no_ecc.mcnemar_p == (1.0, 1.0)


def test_outputs_show_intervals_and_the_seed_dimension(sweep: Path, tmp_path: Path) -> None:
    runs, rows = _rows(sweep)
    outs = table3_render.write_outputs(rows, runs, tmp_path / "out", with_paper=False, bootstrap=BOOT)
    md = outs.markdown.read_text()
    assert "| w/o ECC/NCC | 50.0 | 50.0 | 100.0 | 57.14 | [" in md  # Hard: q2 right in seed 0, errored in 1
    # p: P*(Δ ≥ 0) = P(no q0 or q1 among 4 draws) = 1/16, P*(Δ ≤ 0) = 1, so p = 2/16 = 0.125 (± resampling);
    # one comparison, so Holm changes nothing. Column headers carry each split's n (distinct items).
    assert "| −28.57 | [−50.00, 0.00] | 0.126 | 0.126 | 1 / 1 | not distinguishable |" in md
    assert "| Easy (n=2) | Medium (n=1) | Hard (n=1) | Overall (n=4) | 95% CI |" in md
    assert "dual_read_escalate: not recorded" in table3_protocol.protocol_footer(runs)
    assert "2 seeds 0, 1 (each item resampled with all its seeds)" in md and "no_ecc 1" in md
    rows_csv = list(csv.DictReader(io.StringIO(outs.csv.read_text())))
    assert (
        rows_csv[1]["seeds"] == "0;1"
        and rows_csv[1]["errors"] == "1"
        and rows_csv[1]["verdict"] == "not distinguishable"
    )
    assert "2 seeds" in table3.caption_for(runs)
    assert "Seeds: 0, 1" in table3_protocol.protocol_footer(runs)
    census = outs.census.read_text()
    assert "full (seed 0)" in census and "no_ecc (seed 1)" in census
    assert outs.chart.read_bytes()[:4] == b"\x89PNG"


def test_a_variant_missing_a_seed_or_a_duplicated_seed_is_refused(sweep: Path) -> None:
    runs = [table3.load_run(d) for d in find_runs([sweep])]
    partial = [r for r in runs if not (r.variant == "no_ecc" and r.seed == 1)]
    with pytest.raises(table3.Table3Error, match="variant 'no_ecc' has no run for seed 1"):
        table3.build_rows(partial)
    twice = [*runs, next(r for r in runs if r.variant == "full" and r.seed == 0)]
    with pytest.raises(table3.Table3Error, match=r"variant 'full' appears twice \(seed 0\)"):
        table3.build_rows(twice)


def test_html_report_table3_has_the_intervals_and_names_each_seed(sweep: Path) -> None:
    from ledgermind.report import build_report

    html = build_report(sweep).read_text()
    table = html[html.index('id="table3"') : html.index('id="runs"')]
    assert "[−50.00, 0.00]" in table and "not distinguishable" in table and "1 / 1" in table
    assert "percentile bootstrap over items" in table
    side = html[html.index('id="compare-index"') :]
    assert "no_ecc (seed 1)" in side and "full (seed 0)" in side


def test_an_edited_dataset_with_the_same_ids_is_another_item_set_and_is_not_pooled(tmp_path: Path) -> None:
    """The identity hashes item content (question, options, gold, image bytes), not
    ids; a run over an edited copy of the data (one option changed) is refused by Table 3."""
    items = fake_items(4)
    edited = [items[0], replace(items[1], options=["right", "wrong", "also wrong", "changed"]), *items[2:]]
    assert [i.id for i in edited] == [i.id for i in items]

    def run(out: Path, variant: str, its: list[Item]) -> Path:
        ident = identity_for(
            its,
            model="m",
            backend="b",
            benchmark="fake",
            variant=variant,
            seed=0,
            provenance={"decoding": {"temperature": 0.0, "seed": 0}},
        )
        asyncio.run(
            run_items(
                its,
                ListAgent(set(), set()),
                identity=ident,
                options=RunOptions(out, progress=False),
                scorer=fake_score,
                summarize=None,
            )
        )
        return out

    a = table3.load_run(run(tmp_path / "full", "full", items))
    b = table3.load_run(run(tmp_path / "no_ecc", "no_ecc", edited))
    assert a.identity.items_sha256 != b.identity.items_sha256
    with pytest.raises(table3.Table3Error, match="different item sets"):
        table3.build_rows([a, b])
    same = table3.load_run(run(tmp_path / "no_ecc_same", "no_ecc", items))
    assert len(table3.build_rows([a, same])) == 2  # the unedited copy pools


@pytest.mark.parametrize("identity", [None, {"variant": "full"}])
def test_a_metrics_file_without_a_usable_identity_is_one_error_naming_it(tmp_path: Path, identity) -> None:
    import json

    run = _run(tmp_path / "r", "full", 0, wrong=set())
    metrics = json.loads((run / "metrics.json").read_text())
    metrics.pop("identity")
    if identity is not None:
        metrics["identity"] = identity
    (run / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(RunFileError, match=r"metrics.json: no usable run identity \(RunIdentity: "):
        table3.load_run(run)


def test_a_variant_whose_items_all_errored_has_no_mcnemar_p(tmp_path: Path) -> None:
    """No (item, seed) was scored by both the variant and full: there is no test, so no p (a p of 1
    would read as "tested, no difference"); a seed with pairs keeps its p beside a seed without."""
    root = tmp_path / "multirun"
    every = {"q0", "q1", "q2", "q3"}
    _run(root / "f0", "full", 0, wrong={"q3"})
    _run(root / "f1", "full", 1, wrong=set())
    _run(root / "e0", "no_ecc", 0, wrong=set(), fail=every)
    _run(root / "e1", "no_ecc", 1, wrong=set(), fail=every)
    _run(root / "d0", "no_dual_read", 0, wrong=set(), fail=every)
    _run(root / "d1", "no_dual_read", 1, wrong={"q0"})
    runs, rows = _rows(root)
    by = {r.variant: r for r in rows}
    assert by["no_ecc"].mcnemar_p == (None, None) and by["no_ecc"].delta_ci is None
    assert by["no_dual_read"].mcnemar_p == (None, 1.0)  # seed 1: q0 only full right → b=1, c=0
    md = table3_render.to_markdown(rows)
    assert "| w/o ECC/NCC | – | – | – | – | – | – | – | – | – | – | – |" in md
    assert "| – / 1 |" in md
    values = {r["variant"]: r for r in csv.DictReader(io.StringIO(table3_render.to_csv(rows)))}
    assert values["no_ecc"]["mcnemar_p"] == ";" and values["no_dual_read"]["mcnemar_p"] == ";1.0"


def test_the_heading_counts_the_items_of_every_run_whatever_their_order() -> None:
    """Runs over other item sets (--allow-mixed): the caption and chart title count the distinct items
    of all runs, as the Overall column does, not the items of the run named first."""
    from ledgermind.runs.summary import RunIdentity

    def run(variant: str, ids: list[str]) -> table3.RunScores:
        ident = RunIdentity("m", "b", "fake", variant, f"h{len(ids)}", len(ids))
        return table3.RunScores(Path(variant), ident, {}, dict.fromkeys(ids, 1.0), dict.fromkeys(ids, "Easy"))

    small, large = run("full", ["a", "b"]), run("no_ecc", ["a", "b", "c"])
    for runs in ([small, large], [large, small]):
        assert table3.context_of(runs).n["Overall"] == 3
        assert table3.heading_for(runs) == "Table 3 — fake (3 items), m"


def test_census_rows_count_and_divide_by_the_scored_items_the_census_sums() -> None:
    """metrics.json's census sums the scored items' trajectories: an errored item is neither counted
    in a row's items nor in the denominator of its calls per item."""
    from ledgermind.runs.summary import RunIdentity

    ident = RunIdentity("m", "b", "fake", "full", "h", 4)
    scores = {"a": 1.0, "b": 0.0, "c": 1.0, "d": None}  # d errored: its calls are not in the census
    run = table3.RunScores(
        Path("r"), ident, {"tool_calls": 6, "repair_tool_calls": 3, "model_calls": 9}, scores
    )
    row = table3_render.census_markdown([run]).splitlines()[-1]
    assert row.startswith("| full | 3 |") and row.endswith("| 2.00 | 1.00 | 3.00 |"), row
