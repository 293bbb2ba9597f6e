"""scripts/run.py's command line: help from conf/, other harnesses' flags, misspelt keys (one line, exit 2)."""

from __future__ import annotations

import pytest

from ledgermind.cli import run_args as cli_help
from ledgermind.errors import ConfigError
from tests.experiment.conftest import REPO, run_script


def test_help_lists_every_config_of_every_group() -> None:
    text = cli_help.help_text()
    for group in cli_help.GROUPS:
        for path in (REPO / "conf" / group).glob("*.yaml"):
            listed = f"      {path.stem} " in text
            assert listed != path.stem.startswith("_"), (
                group,
                path.stem,
            )  # _loader.yaml: a base, not an option
    for name in ("qwen3_vl_8b_thinking", "mmmu", "mmstar", "emma", "vstar", "sample", "limit", "item_ids"):
        assert name in text


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--limit", "2"], ["limit=2"]),
        (["--limit=5", "logger=none"], ["limit=5", "logger=none"]),
        (["--output_path", "/tmp/x"], ["hydra.run.dir=/tmp/x"]),
        (["-m", "+ablation=full,no_ecc", "--seed", "3"], ["-m", "+ablation=full,no_ecc", "seed=3"]),
        (["--cfg", "job", "model=qwen3_vl_8b"], ["--cfg", "job", "model=qwen3_vl_8b"]),
        (
            ["model=qwen3_vl_8b", "model.vllm_args.mm_processor_kwargs.size.longest_edge=9"],
            ["model=qwen3_vl_8b", "model.vllm_args.mm_processor_kwargs.size.longest_edge=9"],
        ),
        (["+limt=2", "hydra.job.chdir=true", "seed=-1"], ["+limt=2", "hydra.job.chdir=true", "seed=-1"]),
        (
            ["--config-path", "/run/.hydra", "--config-name", "config", "backend.default=B"],
            ["--config-path", "/run/.hydra", "--config-name", "config", "backend.default=B"],
        ),  # a recorded config's keys
        (
            ["backend.path=/r.jsonl", "backend=replay"],
            ["backend.path=/r.jsonl", "backend=replay"],
        ),  # a ??? key exists
        (
            ["benchmark=mmmu_pro_standard10", "benchmark.path=/d"],
            ["benchmark=mmmu_pro_standard10", "benchmark.path=/d"],
        ),
    ],
)
def test_foreign_flags_become_keys_and_known_keys_pass(argv: list[str], expected: list[str]) -> None:
    assert cli_help.preprocess(argv) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["limt=2"], "unknown key 'limt': did you mean limit?"),
        (["model.vllm_args.max_model_lne=3"], "did you mean model.vllm_args.max_model_len?"),
        (
            ["model=internvl3_8b", "model.vllm_args.mm_processor_kwargs.max_patch=3"],
            "did you mean model.vllm_args.mm_processor_kwargs.max_patches?",
        ),
        (["--tasks", "mmmu_pro"], "benchmark=NAME (" + " | ".join(cli_help.options("benchmark"))),
        (["--limit"], "--limit needs a value: limit=VALUE"),
        (["--bogus"], "unknown flag --bogus"),
    ],
)
def test_user_mistakes_are_one_line_naming_the_key_to_use(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        cli_help.preprocess(argv)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_run_py_exits_2_with_one_line_on_a_misspelt_key_and_prints_generated_help() -> None:
    bad = run_script("run.py", "limt=2", "logger=none")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: unknown key 'limt': did you mean limit? (to add a new key on purpose, write +limt=...)"
    ]
    tasks = run_script("run.py", "--tasks", "mmmu")
    assert (
        tasks.returncode == 2 and len(tasks.stderr.strip().splitlines()) == 1 and "benchmark=" in tasks.stderr
    )
    helped = run_script("run.py", "--help")
    assert helped.returncode == 0 and helped.stdout.strip() == cli_help.help_text()


def test_sim_report_help_works() -> None:
    proc = run_script("sim_report.py", "--help")
    assert proc.returncode == 0 and "usage:" in proc.stdout and "TEST INSTRUMENT" in proc.stdout


def test_sweep_jobs_is_the_product_of_the_sweep_overrides() -> None:
    assert cli_help.sweep_jobs(["-m", "+ablation=full,no_ecc,baseline", "seed=1,2", "hydra.sweep.dir=x"]) == 6
    assert cli_help.sweep_jobs(["+ablation=full,no_ecc"]) is None  # no -m: not a sweep


def test_one_bar_over_the_sweep_counts_jobs_times_items(monkeypatch) -> None:
    from ledgermind.experiment import progress
    from ledgermind.runs.results import ItemResult

    progress.start_sweep(3)
    try:
        done = ItemResult("a", "A", "A", 1.0, True, "DIRECT", None)
        first = progress.Progress(4, [done], desc="full")  # one item resumed
        bar = first._bar
        assert bar.total == 12 and bar.n == 1
        for _ in range(3):
            first.update(done)
        first.close()
        second = progress.Progress(4, [], desc="no_ecc")
        assert second._bar is bar and bar.n == 4 and not bar.disable
        second.close()
        third = progress.Progress(2, [], desc="baseline")  # a smaller job re-estimates the total
        assert bar.total == 10
        third.close()
    finally:
        progress.start_sweep(None)
    assert progress.Progress(5, [], enabled=False)._sweep is None


# ------------------------------------------------------------------------------ help that says what a key does
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["logger=none", "-m", "seed=0,1"], ["-m", "logger=none", "seed=0,1"]),  # Hydra wants its flags first
        (["logger=none", "--cfg", "job", "limit=1"], ["--cfg", "job", "logger=none", "limit=1"]),
        (
            ["benchmark=gauges", "+ablation=full,no_ecc", "seed=-1"],
            ["benchmark=gauges", "+ablation=full,no_ecc", "seed=-1"],
        ),
        (
            ["hydra.searchpath=[file:///tests/conf]", "benchmark=fake"],
            ["hydra.searchpath=[file:///tests/conf]", "benchmark=fake"],
        ),
    ],
)
def test_flags_move_before_the_overrides_and_known_options_pass(argv: list[str], expected: list[str]) -> None:
    assert cli_help.preprocess(argv) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["benchmark=mmmu_pro_standrd10"],
            "unknown benchmark option 'mmmu_pro_standrd10': did you mean benchmark=mmmu_pro_standard10?",
        ),
        (["+ablation=no_eccc"], "unknown ablation option 'no_eccc': did you mean +ablation=no_ecc?"),
        (["-m", "+ablation=full,no_eccc"], "did you mean +ablation=no_ecc?"),
        (["+ablation=_flags"], "unknown ablation option '_flags'"),
    ],
)
def test_a_group_option_typo_is_one_line_with_the_closest_option(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        cli_help.preprocess(argv)
    assert (
        message in str(e.value)
        and "\n" not in str(e.value)
        and "_flags" not in str(e.value).split("(options:")[1]
    )


def test_run_py_one_line_exit_2_for_a_group_typo_and_for_a_7b_model_on_the_cpu_backend() -> None:
    typo = run_script("run.py", "benchmark=mmmu_pro_standrd10", "logger=none")
    assert typo.returncode == 2 and typo.stderr.strip().splitlines() == [
        "error: unknown benchmark option 'mmmu_pro_standrd10': did you mean benchmark=mmmu_pro_standard10? (options: "
        + " | ".join(cli_help.options("benchmark"))
        + ")"
    ]
    big = run_script("run.py", "model=qwen2_5_vl_7b", "backend.device=cpu", "logger=none", "limit=1")
    lines = big.stderr.strip().splitlines()
    assert big.returncode == 2 and len(lines) == 1 and "backend=vllm_server" in lines[0], big.stderr[-2000:]
    assert lines[0].startswith("error: model=qwen2_5_vl_7b (7B parameters) would run on the CPU")


def test_large_model_preflight_rule() -> None:
    from ledgermind.experiment.model_preflight import billions, refuse_large_model_on_cpu

    assert (
        billions({"name": "qwen2_5_vl_7b"}) == 7
        and billions({"name": "x", "hub_id": "Qwen/Qwen2.5-VL-3B-Instruct"}) == 3
    )
    assert billions({"name": "smolvlm", "hub_id": "HuggingFaceTB/SmolVLM-256M-Instruct"}) is None
    cpu = {"_target_": "ledgermind.backends.transformers_local.TransformersBackend", "device": "auto"}
    refuse_large_model_on_cpu({"name": "qwen2_5_vl_7b"}, cpu, cuda_available=True)  # a GPU: fine
    refuse_large_model_on_cpu({"name": "qwen2_5_vl_3b"}, cpu, cuda_available=False)  # small enough
    refuse_large_model_on_cpu(
        {"name": "qwen2_5_vl_7b"}, {"_target_": "x.VLLMServerBackend"}, cuda_available=False
    )
    with pytest.raises(ConfigError, match="backend=vllm_server"):
        refuse_large_model_on_cpu({"name": "internvl3_8b"}, cpu, cuda_available=False)


def test_sweep_jobs_counts_the_experiment_sweep_and_its_glob() -> None:
    """`+experiment=table3_sim` sweeps seeds × every conf/ablation variant (a glob): one bar over all
    of them, with a command-line value winning over the experiment's for its key."""
    from ledgermind.experiment.variants import load_variants

    n = len(load_variants())
    assert n >= 7  # the paper's seven rows, and any variant a user added
    assert cli_help.sweep_jobs(["-m", "+experiment=table3_sim", "hydra.sweep.dir=x"]) == 3 * n
    assert cli_help.sweep_jobs(["-m", "+experiment=table3_sim", "seed=0"]) == n
    assert cli_help.sweep_jobs(["-m", "+experiment=table3_sim", "+ablation=full,no_ecc"]) == 6
    assert cli_help.sweep_jobs(["-m", "+experiment=no_such_experiment", "seed=0,1"]) == 2
