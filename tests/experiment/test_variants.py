"""conf/ablation is the one list of Table 3 variants: rows, names, flags and structural census keys
come from the variant files, a run is found by its recorded name, and the ``table`` node never
enters a run's identity."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir

from ledgermind.cli.run_args import options
from ledgermind.confutil import container as plain_config
from ledgermind.errors import ConfigError
from ledgermind.experiment import table3, variants
from ledgermind.experiment.app import check_schemas
from ledgermind.pipeline.config import AblationFlags
from ledgermind.report.census_table import structural_zeros
from ledgermind.runs.provenance import config_hash
from tests.experiment.conftest import REPO

CONF = REPO / "conf"


def _conf_copy(tmp_path: Path) -> Path:
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    return conf


def _edit(conf: Path, name: str, **table: object) -> None:
    path = conf / "ablation" / f"{name}.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw["table"] |= table
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")


def test_every_ablation_option_is_a_variant_in_the_papers_row_order() -> None:
    assert set(variants.names()) == set(options("ablation"))
    # the paper's rows in the paper's order (a variant a user adds may sit anywhere between them)
    paper_rows = list(table3.load_paper_table3()["rows"])
    assert [n for n in variants.names() if n in paper_rows] == paper_rows
    assert paper_rows[:6] == [
        "full",
        "no_ledger",
        "free_form_repair",
        "no_ecc",
        "no_dual_read",
        "no_dispatcher",
    ]
    assert variants.names()[-1] == "baseline"  # the native-CoT baseline closes the table
    assert variants.display_name("no_dual_read") == "w/o Dual-Read"
    assert variants.display_name("official_cot") == "official_cot"  # not a listed variant: its own name
    no_ecc = variants.variant("no_ecc")
    assert no_ecc is not None and no_ecc.flags == AblationFlags(ecc_ncc=False)
    assert variants.variant("official_cot") is None


def test_a_new_variant_file_is_a_new_row_of_table3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = _conf_copy(tmp_path)
    (conf / "ablation" / "no_hv.yaml").write_text(
        "name: no_hv\ndispatcher: false\nbaseline: true\n"
        "table:\n  display: w/o HV\n  row: 2.5\n  structural: [hypothesis_verification]\n",
        encoding="utf-8",
    )
    _edit(conf, "full", display="Ours")
    monkeypatch.setattr(variants, "CONF_DIR", conf)
    assert variants.names()[3:5] == ("no_hv", "no_ecc") and variants.display_name("full") == "Ours"
    runs = [_Run("no_ecc"), _Run("zzz"), _Run("no_hv"), _Run("full")]
    assert [r.variant for r in table3.in_variant_order(runs)] == ["full", "no_hv", "no_ecc", "zzz"]  # type: ignore[arg-type]


class _Run:
    def __init__(self, variant: str) -> None:
        self.variant, self.seed = variant, 0


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"row": 0}, "full and no_ledger have the same row"),
        ({"display": "LedgerMind (full)"}, "the same display name"),
    ],
)
def test_two_variants_on_one_row_or_name_are_refused(tmp_path: Path, edit: dict, message: str) -> None:
    conf = _conf_copy(tmp_path)
    _edit(conf, "no_ledger", **edit)
    with pytest.raises(ConfigError, match=message):
        variants.load_variants(conf)


def test_a_variant_without_its_table_node_is_a_one_line_error(tmp_path: Path) -> None:
    conf = _conf_copy(tmp_path)
    path = conf / "ablation" / "no_ecc.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    del raw["table"]
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"no_ecc.yaml: needs a 'table:' node"):
        variants.load_variants(conf)


def _hash(conf: Path, variant: str) -> str:
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        cfg = compose("config", overrides=[f"+ablation={variant}", "output_dir=unused"])
    check_schemas(cfg)
    assert "table" not in cfg.ablation and cfg.ablation.name == variant
    return config_hash(plain_config(cfg))


def test_the_table_node_is_not_part_of_a_runs_config(tmp_path: Path) -> None:
    """Renaming a row or moving it must not change a run's identity (a resume would be refused)."""
    conf = _conf_copy(tmp_path)
    _edit(conf, "no_ecc", display="renamed", row=9, structural=[])
    assert _hash(conf, "no_ecc") == _hash(CONF, "no_ecc")
    assert _hash(conf, "no_ecc") != _hash(CONF, "no_dual_read")  # the flags are


def _run_dir(tmp_path: Path, variant: str | None) -> Path:
    run = tmp_path / str(variant)
    (run / ".hydra").mkdir(parents=True)
    overrides = [f"+ablation={variant}"] if variant else []
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=[*overrides, "output_dir=unused"])
    check_schemas(cfg)
    (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(plain_config(cfg)), encoding="utf-8")
    return run


def test_structural_zeros_come_from_the_variant_file_the_run_names(tmp_path: Path) -> None:
    full = structural_zeros(_run_dir(tmp_path, "full"), "full")
    assert full == {"paths.BASELINE", "paths.NO_LEDGER", "paths.OFFICIAL", "reflections"}
    assert structural_zeros(_run_dir(tmp_path, None), "full") == full  # no +ablation: the full method
    dual = structural_zeros(_run_dir(tmp_path, "no_dual_read"), "no_dual_read")
    assert dual == full | {"dual_read"}
    assert structural_zeros(_run_dir(tmp_path, "free_form_repair"), "free_form_repair") == full - {
        "reflections"
    }
    ecc = structural_zeros(_run_dir(tmp_path, "no_ecc"), "no_ecc")
    assert ecc == full | {"demotions.ecc", "demotions.ncc"}
    assert "paths.DIRECT" in structural_zeros(_run_dir(tmp_path, "no_dispatcher"), "no_dispatcher")
    ledger = structural_zeros(tmp_path / "no folder", "no_ledger")  # the name suffices, no config is read
    assert {"paths.DIRECT", "paths.FULLPIPE", "triggers.T5", "hypothesis_verification"} <= ledger
    assert (
        not {"triggers.T1", "operators.RETRY", "paths.NO_LEDGER"} & ledger
    )  # a crashed tool is still retried
    custom = tmp_path / "custom"  # a variant no file lists: its recorded flags give the paths
    (custom / ".hydra").mkdir(parents=True)
    (custom / ".hydra" / "config.yaml").write_text(yaml.safe_dump({"ablation": {"dispatcher": False}}))
    assert structural_zeros(custom, "custom") == {
        "paths.DIRECT",
        "paths.BASELINE",
        "paths.NO_LEDGER",
        "paths.OFFICIAL",
    }


def _sweep(experiment: str, *argv: str) -> list[list[str]]:
    """The jobs Hydra's basic sweeper makes of an experiment's sweeper params and the command line."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=[f"+experiment={experiment}", *argv], return_hydra_config=True)
    parser = OverridesParser.create()
    options = sorted(p.stem for p in (CONF / "ablation").glob("*.yaml"))
    params = []
    for key, value in cfg.hydra.sweeper.params.items():
        if str(value).startswith("glob("):  # Hydra expands a glob over the group's files (its config loader)
            value = ",".join(parser.parse_override(f"{key}={value}").value().filter(options))
        params.append(f"{key}={value}")
    return BasicSweeper.split_arguments(parser.parse_overrides([*params, *argv]), None)[0]


def test_the_table3_experiments_sweep_every_variant_of_the_list_over_three_seeds() -> None:
    jobs = _sweep("table3_sim")
    assert len(jobs) == 3 * len(variants.names()) and {j[0] for j in jobs} == {"seed=0", "seed=1", "seed=2"}
    assert {j[1] for j in jobs} == {f"+ablation={v}" for v in variants.names()}
    one_seed = _sweep("table3_sim", "seed=0")  # the command line wins: make digest's one seed
    assert [j[0] for j in one_seed] == ["seed=0"] * len(variants.names())
    paper = {j[1] for j in _sweep("table3", "backend.base_urls=[x]")}
    assert paper == {f"+ablation={v}" for v in variants.names() if v != "baseline"}  # the paper's six rows


def test_job_folders_are_named_from_the_keys_the_experiment_or_the_command_line_sweeps() -> None:
    from ledgermind.experiment.sweep_dirs import sweep_subdir

    params = {"seed": "0,1,2", "+ablation": "glob(*,exclude=_*)"}
    job = ["seed=1", "+ablation=no_ecc", "+experiment=table3_sim", "benchmark=gauges"]
    assert (
        sweep_subdir(job, ["-m", "+experiment=table3_sim", "benchmark=gauges"], params)
        == "ablation=no_ecc,seed=1"
    )
    job0 = ["seed=0", "+ablation=no_ecc", "+experiment=table3_sim", "benchmark.limit=15"]
    argv = ["-m", "+experiment=table3_sim", "seed=0", "benchmark.limit=15"]
    assert sweep_subdir(job0, argv, params) == "ablation=no_ecc"  # seed=0 on the command line: not swept
    assert (
        sweep_subdir(["seed=0", "+ablation=full"], ["-m", "seed=0", "+ablation=full,no_ecc"])
        == "ablation=full"
    )
