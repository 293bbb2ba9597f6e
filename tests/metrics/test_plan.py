"""The planner: its sample sizes against a simulation of the exact McNemar test, its cost projection
against a synthetic pilot."""

from __future__ import annotations

import json

import pytest

from ledgermind.cli.plan import main
from ledgermind.errors import DataError
from ledgermind.experiment.plan import (
    Pilot,
    PilotRun,
    PlanRequest,
    discordance,
    item_costs,
    make_plan,
    render,
)
from ledgermind.metrics.plan import (
    Cost,
    mcnemar_power,
    mcnemar_sample_size,
    simulated_power,
    smallest_detectable_delta,
)
from ledgermind.metrics.stats import mcnemar_exact
from ledgermind.runs.trajectories import trajectory_path


@pytest.mark.parametrize(
    ("psi", "delta"), [(0.15, 0.05), (0.35, 0.05), (0.30, 0.10), (0.10, 0.02), (0.25, 0.02)]
)
def test_planned_n_gives_80_percent_power_in_simulation(psi, delta):
    """Draw paired outcomes with the pilot's discordance at the planned n; run the exact test."""
    n = mcnemar_sample_size(psi, delta)
    p_full, p_variant = (psi - delta) / 2, (psi + delta) / 2
    power = simulated_power(n, p_full, p_variant, trials=2000, seed=1)
    assert 0.75 <= power <= 0.85, (n, power)
    assert (
        simulated_power(n // 2, p_full, p_variant, trials=2000, seed=2) < 0.70
    )  # half the items: clearly less


def test_smallest_detectable_delta_is_detected_with_80_percent_in_simulation():
    n, psi = 136, 0.15
    d = smallest_detectable_delta(n, psi)
    assert mcnemar_power(n, psi, d) == pytest.approx(0.8, abs=1e-6)
    power = simulated_power(n, max(0.0, (psi - d) / 2), (max(psi, d) + d) / 2, trials=2000, seed=3)
    assert 0.75 <= power <= 0.85, (d, power)


def test_vectorised_exact_test_agrees_with_the_tables_mcnemar():
    import numpy as np

    from ledgermind.metrics.plan import exact_rejects

    b, c = np.array([0, 3, 10, 2, 17, 40]), np.array([0, 9, 2, 2, 30, 20])
    assert exact_rejects(b, c).tolist() == [mcnemar_exact(x, y) < 0.05 for x, y in zip(b, c, strict=True)]


def test_sample_size_grows_as_the_effect_shrinks_and_discordance_grows():
    assert mcnemar_sample_size(0.2, 0.01) > mcnemar_sample_size(0.2, 0.02) > mcnemar_sample_size(0.2, 0.05)
    assert mcnemar_sample_size(0.4, 0.05) > mcnemar_sample_size(0.1, 0.05)
    assert mcnemar_sample_size(0.2, 0.0) is None
    assert smallest_detectable_delta(10, 0.2) > smallest_detectable_delta(1000, 0.2)


# ----------------------------------------------------------------------------- cost projection
def _call(key, prompt=100, completion=10, cached=0):
    return {
        "request_key": key,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "latency_s": 1.0,
        "meta": {"cached_tokens": cached} if cached else {},
        "cached": False,
    }


def _pilot():
    full_calls = {"a": [_call("plan-a"), _call("x-a", cached=40)], "b": [_call("plan-b"), _call("x-b")]}
    no_ecc_calls = {"a": [_call("plan-a"), _call("y-a")], "b": [_call("plan-b"), _call("y-b")]}
    full = PilotRun("full", 0, {"a": 1.0, "b": 0.0}, full_calls, 10.0)
    no_ecc = PilotRun("no_ecc", 0, {"a": 0.0, "b": 1.0}, no_ecc_calls, 10.0)
    return Pilot([no_ecc, full])  # listed out of order: the sweep order is the table's


def test_shared_cache_sends_each_distinct_request_once_and_full_carries_the_shared_ones():
    costs = {v: sum(per.values(), Cost()) for v, per in item_costs(_pilot()).items()}
    assert (costs["full"].made, costs["full"].sent, costs["no_ecc"].made, costs["no_ecc"].sent) == (
        4,
        4,
        4,
        2,
    )
    assert costs["full"].cached_prompt_tokens == 40 and costs["full"].uncached_prompt_tokens == 360


def test_plan_scales_per_item_costs_and_reads_discordance():
    plan = make_plan(
        _pilot(), PlanRequest(items=20, seeds=3, variants=("full", "no_ecc"), tokens_per_s=100.0)
    )
    # per (item, seed): full sends 2, no_ecc 1 → 20 items × 3 seeds
    assert plan["costs"]["full"]["sent"] == 120 and plan["costs"]["no_ecc"]["sent"] == 60
    assert plan["total"]["made"] == 240 and plan["total"]["completion_tokens"] == 1800
    assert plan["total"]["gpu_hours"] == pytest.approx((180 * 100 - 40 * 30 + 1800) / 100 / 3600)
    d = discordance(_pilot(), "no_ecc")
    assert (d.p_full, d.p_variant, d.pairs) == (0.5, 0.5, 2)
    assert plan["sample_size"]["no_ecc"]["items_needed"]["5.0"] == mcnemar_sample_size(1.0, 0.05)


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main([str(tmp_path), "--items", "10"]) == 2
    assert main([str(tmp_path), "--items", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") for line in err)


def test_plan_reads_a_real_pilot_folder(tmp_path, capsys):
    run = tmp_path / "ablation=full"
    (run / "trajectories").mkdir(parents=True)
    (run / "metrics.json").write_text(
        json.dumps({"identity": {"variant": "full", "seed": 0}, "wall_time_total_s": 2.0})
    )
    (run / "results.jsonl").write_text(json.dumps({"id": "q1", "score": 1.0, "error": None}) + "\n")
    trajectory_path(run, "q1").write_text(
        json.dumps({"item_id": "q1", "model_calls": [_call("k1"), _call("k1")]})
    )
    assert main([str(tmp_path), "--items", "10", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (
        plan["total"]["made"] == 20
        and plan["total"]["sent"] == 10
        and plan["rate_tokens_per_s"] == pytest.approx(55.0)
    )


def test_projection_states_the_standard_error_of_the_pilots_mean():
    from ledgermind.experiment.plan import projection
    from ledgermind.metrics.plan import Cost

    per_item = [
        Cost(made=2, sent=2, prompt_tokens=100),
        Cost(made=4, sent=2, prompt_tokens=300),
        Cost(made=6, sent=2, prompt_tokens=200),
    ]
    total, se = projection(per_item, 30)
    assert (total.made, total.sent, total.prompt_tokens) == (120, 60, 6000)
    assert se.sent == 0  # every item sends the same: no uncertainty
    assert se.made == pytest.approx(30 * 2.0 / 3**0.5) and se.prompt_tokens == pytest.approx(
        30 * 100.0 / 3**0.5
    )
    assert projection(per_item[:1], 30)[1] == Cost()  # one unit: no spread to estimate


def _pilot_dir(root, limit_order, limit=1):
    run = root / "ablation=full"
    (run / "trajectories").mkdir(parents=True)
    (run / ".hydra").mkdir()
    (run / ".hydra" / "config.yaml").write_text(
        f"limit: {limit}\nlimit_order: {limit_order}\nbenchmark:\n  limit: null\n"
    )
    (run / "metrics.json").write_text(
        json.dumps({"identity": {"variant": "full", "seed": 0}, "wall_time_total_s": 2.0})
    )
    (run / "results.jsonl").write_text(json.dumps({"id": "q1", "score": 1.0, "error": None}) + "\n")
    trajectory_path(run, "q1").write_text(json.dumps({"item_id": "q1", "model_calls": [_call("k1")]}))
    return root


@pytest.mark.parametrize(("order", "warned"), [("first", True), ("shuffle", False), ("stratified", False)])
def test_a_first_n_pilot_is_flagged_as_no_sample_of_the_set(tmp_path, capsys, order, warned):
    assert main([str(_pilot_dir(tmp_path, order)), "--items", "10"]) == 0
    out = capsys.readouterr().out
    assert ("warning: the pilot took the benchmark's first N items" in out) == warned
    assert ("pilot items: first N" in out) == warned


def test_plan_runs_from_a_run_folder_alone_with_the_pilots_item_count(tmp_path, capsys):
    assert main([str(_pilot_dir(tmp_path, "shuffle"))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("plan: 1 items × 1 seed(s)")


def test_a_tiny_model_pilot_labels_its_rate_as_no_gpus(tmp_path, capsys):
    root = _pilot_dir(tmp_path, "shuffle")
    metrics = root / "ablation=full" / "metrics.json"
    ident = {"variant": "full", "seed": 0, "model": "tiny-qwen2-vl", "backend": "TransformersBackend"}
    metrics.write_text(json.dumps({"identity": ident, "wall_time_total_s": 2.0}))
    assert main([str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("TINY MODEL")
    assert "TINY MODEL: not a GPU's rate" in next(x for x in lines if x.startswith("GPU rate"))


def _discordant_pilot(k: int, n: int = 40) -> Pilot:
    """``full`` and ``no_ecc`` on n items, disagreeing on the first k."""
    full = {f"q{i}": 1.0 if i < k else 0.0 for i in range(n)}
    var = {f"q{i}": 0.0 for i in range(n)}
    calls = {f"q{i}": [_call(f"k{i}")] for i in range(n)}
    return Pilot([PilotRun("full", 0, full, calls, 1.0), PilotRun("no_ecc", 0, var, calls, 1.0)])


@pytest.mark.parametrize(("k", "warned"), [(3, True), (9, True), (10, False), (25, False)])
def test_a_small_pilots_discordance_is_flagged(k, warned):
    plan = make_plan(_discordant_pilot(k), PlanRequest(items=100, seeds=1, variants=("full", "no_ecc")))
    assert plan["sample_size"]["no_ecc"]["discordant"] == k
    text = render(plan)
    assert ("warning: small pilot: no_ecc (" in text) == warned


def test_a_variant_that_sends_nothing_is_explained():
    # no_ecc's only request repeats full's: the sweep-shared cache answers all of it
    plan = make_plan(_discordant_pilot(12), PlanRequest(items=10, seeds=1, variants=("full", "no_ecc")))
    assert plan["costs"]["no_ecc"]["sent"] == 0 and plan["costs"]["no_ecc"]["made"] > 0
    text = render(plan)
    assert "no_ecc: 0 requests sent: every request it makes is made first by a variant before it" in text
    assert "full: 0 requests sent" not in text


def test_an_errored_pilot_result_is_left_out_of_the_projection():
    pilot = _pilot()
    clean = make_plan(pilot, PlanRequest(items=20, seeds=1, variants=("full", "no_ecc")))
    # no_ecc's item b failed after sending a costly request: a rerun will cost what a scored b costs
    pilot.runs[0].scores["b"] = None
    pilot.runs[0].calls["b"].append(_call("failed-b", prompt=10_000))
    plan = make_plan(pilot, PlanRequest(items=20, seeds=1, variants=("full", "no_ecc")))
    assert plan["pilot"]["errored"] == 1 and clean["pilot"]["errored"] == 0
    assert plan["costs"]["no_ecc"]["prompt_tokens"] == 20 * 100  # a's one unshared request, × 20 items
    assert plan["total"]["prompt_tokens"] == 20 * 300  # over the units both variants scored (a)
    assert "pilot errors: 1 results, left out of the projection" in render(plan)
    for run in pilot.runs:
        run.scores.update(dict.fromkeys(run.scores))
    with pytest.raises(DataError, match="scored no item"):
        make_plan(pilot, PlanRequest(items=20, seeds=1, variants=("full", "no_ecc")))


def test_a_pilot_of_two_models_or_benchmarks_is_refused(tmp_path, capsys):
    one, other = _pilot_dir(tmp_path / "a", "shuffle"), _pilot_dir(tmp_path / "b", "shuffle")
    metrics = other / "ablation=full" / "metrics.json"
    metrics.write_text(
        metrics.read_text().replace('"seed": 0', '"seed": 0, "model": "m2", "benchmark": "gauges"')
    )
    assert main([str(one), str(other)]) == 2
    err = capsys.readouterr().err
    assert (
        err == "error: refusing to plan from runs of different models or benchmarks: ? on ?; m2 on gauges\n"
    )
    assert main([str(one)]) == 0
