"""scripts/run.py's command line: Hydra's help over conf/, other harnesses' flags, Hydra's refusal of a
misspelt key or option in one line with the closest one (exit 2)."""

from __future__ import annotations

import pytest

from ledgermind.cli import run_args as cli_help
from ledgermind.errors import ConfigError
from tests.experiment.conftest import REPO, run_script


def test_help_is_hydras_over_conf_listing_every_option_and_key(run_py_help) -> None:
    helped = run_py_help
    assert helped.returncode == 0, helped.stderr[-2000:]
    for group in (p.name for p in (REPO / "conf").iterdir() if p.is_dir() and p.name != "hydra"):
        names = cli_help.options(group)
        assert f"{group}: {', '.join(names)}" in helped.stdout.replace("_loader, ", "").replace(
            ", ledgermind_schema", ""
        )
    for key in ("limit:", "item_ids:", "max_oc:", "beta:", "Exit codes: 0"):
        assert key in helped.stdout  # the composed config, the pipeline's schema under it, the footer


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--limit", "2"], ["limit=2"]),
        (["--limit=5", "logger=none"], ["limit=5", "logger=none"]),
        (["--output_path", "/tmp/x"], ["hydra.run.dir=/tmp/x"]),
        (["-m", "+ablation=full,no_ecc", "--seed", "3"], ["-m", "+ablation=full,no_ecc", "seed=3"]),
        (["--cfg", "job", "model=qwen3_vl_8b"], ["--cfg", "job", "model=qwen3_vl_8b"]),
        (["limt=2", "hydra.job.chdir=true", "seed=-1"], ["limt=2", "hydra.job.chdir=true", "seed=-1"]),
        (
            ["--config-path", "/run/.hydra", "--config-name", "config", "backend.default=B"],
            ["--config-path", "/run/.hydra", "--config-name", "config", "backend.default=B"],
        ),  # keys are Hydra's to check, against the config it composes
    ],
)
def test_foreign_flags_become_keys_and_the_rest_passes_to_hydra(argv: list[str], expected: list[str]) -> None:
    assert cli_help.preprocess(argv) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tasks", "mmmu_pro"], "benchmark=NAME (" + " | ".join(cli_help.options("benchmark"))),
        (["--limit"], "--limit needs a value: limit=VALUE"),
        (["--bogus"], "unknown flag --bogus"),
    ],
)
def test_foreign_flag_mistakes_are_one_line_naming_the_key_to_use(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        cli_help.preprocess(argv)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["limt=2"], "error: unknown key 'limt': did you mean limit?"),
        (
            ["model=internvl3_8b", "model.vllm_args.mm_processor_kwargs.max_patch=3"],
            "error: unknown key 'model.vllm_args.mm_processor_kwargs.max_patch': "
            "did you mean model.vllm_args.mm_processor_kwargs.max_patches?",
        ),
        (["pipeline.max_0c=3"], "error: unknown key 'pipeline.max_0c': did you mean pipeline.max_oc?"),
        (
            ["+ablation=no_ecc", "+ablation.ecc_nccc=false"],
            "error: unknown key 'ablation.ecc_nccc': did you mean ablation.ecc_ncc?",
        ),
        (
            ["pipeline.grounding.bta=3"],
            "error: unknown key 'pipeline.grounding.bta': did you mean pipeline.grounding.beta?",
        ),
        (
            ["+pipeline.zom=8"],
            "error: unknown key 'pipeline.zom': python scripts/run.py --help lists the keys",
        ),
        (
            ["pipeline.max_oc=abc"],
            "error: Value 'abc' of type 'str' could not be converted to Integer (config key: pipeline.max_oc)",
        ),
        (
            ["+ablaton=no_ecc"],
            "error: unknown key 'ablaton' (a + key nothing reads): did you mean +ablation=no_ecc?",
        ),
        (["+limt=2"], "error: unknown key 'limt' (a + key nothing reads): did you mean limit=2?"),
        (
            ["ablation=no_ecc"],
            "error: Could not override 'ablation'. No match in the defaults list: add it with +ablation=no_ecc",
        ),
        (
            ["-m", "++experment=table3_sim"],
            "error: unknown key 'experment' (a + key nothing reads): did you mean +experiment=table3_sim?",
        ),
        (
            ["-m", "+ablation=full,no_eccc"],
            "error: unknown ablation option 'no_eccc': did you mean no_ecc? (options: "
            + " | ".join(cli_help.options("ablation"))
            + ")",
        ),
    ],
)
def test_hydras_refusal_is_one_line_with_the_closest_key_exit_2(
    argv: list[str], line: str, tmp_path, capsys
) -> None:
    from ledgermind.cli import run

    out = tmp_path / "run"
    with pytest.raises(SystemExit) as e:
        run.main([*argv, "logger=none", f"hydra.run.dir={out}", f"hydra.sweep.dir={out}"])
    assert e.value.code == 2 and capsys.readouterr().err.strip().splitlines() == [line]
    # refused before any run folder was written (a sweep's own multirun.yaml is Hydra's, written first)
    assert [p.name for p in out.rglob("*")] in ([], ["multirun.yaml"])


def test_run_py_exits_2_with_one_line_on_a_misspelt_key() -> None:
    bad = run_script("run.py", "limt=2", "logger=none")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: unknown key 'limt': did you mean limit?"
    ]
    tasks = run_script("run.py", "--tasks", "mmmu")
    assert (
        tasks.returncode == 2 and len(tasks.stderr.strip().splitlines()) == 1 and "benchmark=" in tasks.stderr
    )


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


def test_the_bar_shows_the_accuracy_with_the_item_just_finished(monkeypatch) -> None:
    import io

    from ledgermind.experiment import progress
    from ledgermind.runs.results import ItemResult

    out = io.StringIO()
    monkeypatch.setattr(progress.sys, "stderr", out)
    bar = progress.Progress(2, [], desc="full")
    bar._bar.mininterval = 0  # draw on every update
    bar.update(ItemResult("a", "A", "A", 1.0, True, "DIRECT", None))
    assert out.getvalue().rstrip().endswith("acc=100.0%]")  # not the 0.0 % of before it finished
    bar.update(ItemResult("b", "B", "A", 0.0, True, "DIRECT", None))
    assert out.getvalue().rstrip().endswith("acc=50.0%]")
    bar.close()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["logger=none", "-m", "seed=0,1"], ["-m", "logger=none", "seed=0,1"]),  # Hydra wants its flags first
        (["logger=none", "--cfg", "job", "limit=1"], ["--cfg", "job", "logger=none", "limit=1"]),
        (
            ["benchmark=gauges", "+ablation=full,no_ecc", "seed=-1"],
            ["benchmark=gauges", "+ablation=full,no_ecc", "seed=-1"],
        ),
    ],
)
def test_flags_move_before_the_overrides(argv: list[str], expected: list[str]) -> None:
    assert cli_help.preprocess(argv) == expected


def test_run_py_one_line_exit_2_for_a_group_typo_and_for_a_7b_model_on_the_cpu_backend() -> None:
    typo = run_script("run.py", "benchmark=mmmu_pro_standrd10", "logger=none")
    assert typo.returncode == 2 and typo.stderr.strip().splitlines() == [
        "error: unknown benchmark option 'mmmu_pro_standrd10': did you mean mmmu_pro_standard10? (options: "
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


def test_weights_that_are_neither_cached_nor_downloadable_stop_the_run_before_any_item(tmp_path) -> None:
    out = tmp_path / "run"
    proc = run_script(
        "run.py",
        "model=smolvlm",
        "limit=4",
        "logger=none",
        f"hydra.run.dir={out}",
        HF_HUB_OFFLINE="1",
        HF_HOME=str(tmp_path / "hf"),  # an empty local cache
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr[-2000:]
    assert lines[0] == (
        "error: model HuggingFaceTB/SmolVLM-256M-Instruct: its weights are not in the local Hugging Face cache and "
        "HF_HUB_OFFLINE is set; download them where the hub is reachable (huggingface-cli download "
        "HuggingFaceTB/SmolVLM-256M-Instruct) and copy the cache here, or give model.path=/local/checkpoint"
    )
    assert "retry" not in proc.stderr and not (out / "results.jsonl").exists()


def test_cached_weights_pass_the_preflight_without_the_network(tmp_path, monkeypatch) -> None:
    from ledgermind.experiment.model_preflight import refuse_unreachable_weights, weights_problem

    repo = tmp_path / "hub" / "models--ORG--Some-VL-2B"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "config.json").write_text("{}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert weights_problem("ORG/Some-VL-2B") is None
    assert "HF_HUB_OFFLINE is set" in (weights_problem("ORG/Other-VL-2B") or "")
    transformers = {"_target_": "ledgermind.backends.transformers_local.TransformersBackend"}
    refuse_unreachable_weights({"hub_id": "ORG/Some-VL-2B"}, transformers)
    # a server holds its own weights, and a local path or the self-built tiny model need no hub
    refuse_unreachable_weights({"hub_id": "ORG/Other-VL-2B"}, {"_target_": "x.VLLMServerBackend"})
    (ckpt := tmp_path / "ckpt").mkdir()
    (ckpt / "config.json").write_text("{}")
    refuse_unreachable_weights({"hub_id": "ORG/Other-VL-2B", "path": str(ckpt)}, transformers)
    with pytest.raises(
        ConfigError, match="model ORG/Other-VL-2B: its weights are not in the local Hugging Face cache"
    ):
        refuse_unreachable_weights({"hub_id": "ORG/Other-VL-2B"}, transformers)
    with pytest.raises(ConfigError, match="not in the local Hugging Face cache"):  # the vLLM engine too
        refuse_unreachable_weights(
            {"hub_id": "ORG/Other-VL-2B"},
            {"_target_": "ledgermind.backends.vllm_inprocess.VLLMInProcessBackend"},
        )


def test_any_hub_model_is_one_override_and_the_size_preflight_reads_its_id() -> None:
    big = run_script("run.py", "model=hf", "model.hub_id=ORG/Some-VL-7B", "backend.device=cpu", "logger=none")
    lines = big.stderr.strip().splitlines()
    assert big.returncode == 2 and len(lines) == 1, big.stderr[-2000:]
    assert lines[0].startswith("error: model=ORG/Some-VL-7B (7B parameters) would run on the CPU")


def test_a_hub_id_is_a_model_option_too() -> None:
    assert cli_help.preprocess(["model=Qwen/Qwen2.5-VL-3B-Instruct", "limit=2"]) == [
        "model=hf",
        "model.hub_id=Qwen/Qwen2.5-VL-3B-Instruct",
        "limit=2",
    ]
    assert cli_help.preprocess(["model=smolvlm"]) == ["model=smolvlm"]  # a config name stays one
    assert cli_help.preprocess(["-m", "model=smolvlm,tiny_qwen2_vl"]) == ["-m", "model=smolvlm,tiny_qwen2_vl"]
    big = run_script("run.py", "model=Qwen/Qwen2.5-VL-7B-Instruct", "backend.device=cpu", "logger=none")
    assert big.returncode == 2 and big.stderr.strip().splitlines() == [
        "error: model=Qwen/Qwen2.5-VL-7B-Instruct (7B parameters) would run on the CPU with the in-process "
        "transformers backend; serve it on a GPU (python scripts/serve.py model=Qwen/Qwen2.5-VL-7B-Instruct "
        "--launch) and add backend=vllm_server backend.base_urls=[http://HOST:8000/v1]"
    ]


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        ("w/o_ECC", "did you mean no_ecc? (Table 3 shows it as 'w/o ECC/NCC') "),
        ("w/o Dual-Read", "did you mean no_dual_read? (Table 3 shows it as 'w/o Dual-Read') "),
    ],
)
def test_a_variants_display_name_names_its_option(typed: str, hint: str) -> None:
    proc = run_script("run.py", f"+ablation={typed}", "logger=none")
    options = "baseline | free_form_repair | full | no_dispatcher | no_dual_read | no_ecc | no_ledger"
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"error: unknown ablation option {typed!r}: {hint}(options: {options})"
    ]


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


@pytest.mark.parametrize("below", [False, True])
def test_a_run_folder_that_is_a_file_is_one_line_exit_2(below: bool, tmp_path, capsys) -> None:
    """``hydra.run.dir`` naming a file (or a folder under one): Hydra's own mkdir fails before the
    run starts; one line naming the folder, never a traceback."""
    from ledgermind.cli import run

    (blocker := tmp_path / "notes.txt").write_text("mine\n")
    out = blocker / "run" if below else blocker
    with pytest.raises(SystemExit) as e:
        run.main(["limit=1", "backend=simulated", "logger=none", f"hydra.run.dir={out}"])
    assert e.value.code == 2
    why = "Not a directory" if below else "File exists"
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: the run folder {out} cannot be made ({why}: {out}): a file is in its way; "
        "choose another hydra.run.dir"
    ]
    assert blocker.read_text() == "mine\n"


@pytest.mark.parametrize(
    ("model", "line"),
    [
        (
            {"hub_id": "ORG/Some-VL-2B", "path": "/no/such/ckpt"},
            "model.path /no/such/ckpt: no such folder; a local checkpoint is a folder with the model's "
            "config.json and weights",
        ),
        (
            {"hub_id": "ORG/Some-VL-2B", "path": "{tmp}"},
            "model.path {tmp}: not a checkpoint folder (no config.json); a local checkpoint is a folder "
            "with the model's config.json and weights",
        ),
        (
            {"hub_id": "/data/my ckpt"},
            "model /data/my ckpt: not a Hugging Face hub id (ORG/NAME); a local checkpoint is "
            "model=hf model.hub_id=NAME model.path=/data/my ckpt",
        ),
    ],
)
def test_a_local_path_or_malformed_hub_id_stops_the_run_in_one_line(
    model: dict, line: str, tmp_path, monkeypatch
) -> None:
    """A checkpoint folder that is not there (or holds no model) failed every item, exit 3, with a
    retry command no retry could help; a path typed as ``model=/dir`` crashed in the hub client."""
    from ledgermind.experiment.model_preflight import refuse_unreachable_weights

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    transformers = {"_target_": "ledgermind.backends.transformers_local.TransformersBackend"}
    model = {k: v.replace("{tmp}", str(tmp_path)) for k, v in model.items()}
    with pytest.raises(ConfigError) as e:
        refuse_unreachable_weights(model, transformers)
    assert str(e.value) == line.replace("{tmp}", str(tmp_path))


def test_run_py_names_a_local_directory_given_as_the_model_in_one_line(tmp_path) -> None:
    proc = run_script(
        "run.py", f"model={tmp_path}", "limit=1", "logger=none", f"hydra.run.dir={tmp_path / 'r'}"
    )
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"error: model {tmp_path}: not a Hugging Face hub id (ORG/NAME); a local checkpoint is "
        f"model=hf model.hub_id=NAME model.path={tmp_path}"
    ], proc.stderr[-2000:]


@pytest.mark.parametrize(
    "arg",
    [
        "backend.base_urls=[http://user:sk-in-url@127.0.0.1:8000/v1]",
        "backend.base_urls=[http://127.0.0.1:8000/v1,https://sk-in-url@api.example.com/v1]",
        "+backend.base_urls=[http://u:sk-in-url@h/v1]",
    ],
)
def test_a_url_with_credentials_is_one_line_that_does_not_repeat_them(arg: str) -> None:
    # the run would record the URL in .hydra/*.yaml, the trajectories, the response cache and W&B
    with pytest.raises(ConfigError) as err:
        cli_help.preprocess([arg, "limit=1"])
    assert "sk-in-url" not in str(err.value)
    assert "backend.base_urls=" in str(err.value) and "backend.api_key_env" in str(err.value)


def test_a_url_without_credentials_and_an_at_sign_elsewhere_pass() -> None:
    argv = ["backend.base_urls=[http://127.0.0.1:8000/v1]", "+extra.note=mail me@example.com"]
    assert cli_help.preprocess(argv) == argv
