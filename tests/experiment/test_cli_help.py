"""scripts/run.py's command line: help from conf/, other harnesses' flags, misspelt keys (one line, exit 2)."""

from __future__ import annotations

import pytest

from ledgermind import cli_help
from ledgermind.errors import ConfigError
from tests.experiment.conftest import REPO, run_script


def test_help_lists_every_config_of_every_group() -> None:
    text = cli_help.help_text()
    for group in cli_help.GROUPS:
        for path in (REPO / "conf" / group).glob("*.yaml"):
            listed = f"      {path.stem} " in text
            assert listed != path.stem.startswith("_"), (group, path.stem)  # _flags.yaml: a base, not an option
    for name in ("qwen3_vl_8b_thinking", "mmmu", "mmstar", "emma", "vstar", "sample", "limit", "item_ids"):
        assert name in text


@pytest.mark.parametrize(("argv", "expected"), [
    (["--limit", "2"], ["limit=2"]),
    (["--limit=5", "logger=none"], ["limit=5", "logger=none"]),
    (["--output_path", "/tmp/x"], ["hydra.run.dir=/tmp/x"]),
    (["-m", "+ablation=full,no_ecc", "--seed", "3"], ["-m", "+ablation=full,no_ecc", "seed=3"]),
    (["--cfg", "job", "model=qwen3_vl_8b"], ["--cfg", "job", "model=qwen3_vl_8b"]),
    (["model=qwen3_vl_8b", "model.vllm_args.mm_processor_kwargs.size.longest_edge=9"],
     ["model=qwen3_vl_8b", "model.vllm_args.mm_processor_kwargs.size.longest_edge=9"]),
    (["+limt=2", "hydra.job.chdir=true", "seed=-1"], ["+limt=2", "hydra.job.chdir=true", "seed=-1"]),
    (["--config-path", "/run/.hydra", "--config-name", "config", "backend.default=B"],
     ["--config-path", "/run/.hydra", "--config-name", "config", "backend.default=B"]),  # a recorded config's keys
    (["backend.path=/r.jsonl", "backend=replay"], ["backend.path=/r.jsonl", "backend=replay"]),  # a ??? key exists
    (["benchmark=mmmu_pro_standard10", "benchmark.path=/d"], ["benchmark=mmmu_pro_standard10", "benchmark.path=/d"]),
])  # fmt: skip
def test_foreign_flags_become_keys_and_known_keys_pass(argv: list[str], expected: list[str]) -> None:
    assert cli_help.preprocess(argv) == expected


@pytest.mark.parametrize(("argv", "message"), [
    (["limt=2"], "unknown key 'limt': did you mean limit?"),
    (["model.vllm_args.max_model_lne=3"], "did you mean model.vllm_args.max_model_len?"),
    (["model=internvl3_8b", "model.vllm_args.mm_processor_kwargs.max_patch=3"],
     "did you mean model.vllm_args.mm_processor_kwargs.max_patches?"),
    (["--tasks", "mmmu_pro"], "benchmark=NAME (ai2d | emma | gauges"),
    (["--limit"], "--limit needs a value: limit=VALUE"),
    (["--bogus"], "unknown flag --bogus"),
])  # fmt: skip
def test_user_mistakes_are_one_line_naming_the_key_to_use(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        cli_help.preprocess(argv)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_run_py_exits_2_with_one_line_on_a_misspelt_key_and_prints_generated_help() -> None:
    bad = run_script("run.py", "limt=2", "logger=none")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: unknown key 'limt': did you mean limit? (to add a new key on purpose, write +limt=...)"]
    tasks = run_script("run.py", "--tasks", "mmmu")
    assert tasks.returncode == 2 and len(tasks.stderr.strip().splitlines()) == 1 and "benchmark=" in tasks.stderr
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
    from ledgermind.experiment.results import ItemResult

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
