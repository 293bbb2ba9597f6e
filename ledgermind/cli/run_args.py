"""The run command's line (``ledgermind run``, ``scripts/run.py``) as researchers type it: help
generated from ``conf/``, the anchor flags of other harnesses mapped to our keys, and a misspelt key
answered with the closest one.

Why: ``run.py`` is a Hydra app. ``--limit 2`` or ``--output_path`` (lmms-eval, VLMEvalKit habits) got
an argparse usage block, a typo such as ``limt=2`` got Hydra's advice to write ``+limt=2`` — which
then runs with the key silently ignored — and a hand-written ``--help`` went stale as configs were
added. Everything here reads ``conf/`` itself, so a new model or benchmark shows up without an edit.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ledgermind.confutil import CONF_DIR, container, option_node
from ledgermind.errors import ConfigError

# Config groups a run selects, in the order the help lists them (``ablation`` is added with ``+``).
GROUPS = ("model", "backend", "benchmark", "pipeline", "ablation", "perception", "logger")
# Hydra's own flags: passed through untouched.
HYDRA_FLAGS = frozenset(
    {
        "-m",
        "--multirun",
        "--cfg",
        "-c",
        "--resolve",
        "--package",
        "-p",
        "--info",
        "-i",
        "--hydra-help",
        "--version",
        "--config-path",
        "-cp",
        "--config-name",
        "-cn",
        "--config-dir",
        "-cd",
        "--run",
        "-r",
        "--shell-completion",
        "-sc",
        "--experimental-rerun",
    }
)


# Flags that compose from another primary config than conf/config.yaml (README's rerun recipe).
OTHER_CONFIG = frozenset({"--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd"})


@dataclass(frozen=True)
class FlagRule:
    """A foreign flag: the key it becomes (``{}`` is its value), or the one line that says what to use."""

    key: str | None = None
    advice: str | None = None


FLAGS: dict[str, FlagRule] = {
    "--limit": FlagRule("limit={}"),
    "--output_path": FlagRule("hydra.run.dir={}"),
    "--output-path": FlagRule("hydra.run.dir={}"),
    "--output_dir": FlagRule("hydra.run.dir={}"),
    "--output-dir": FlagRule("hydra.run.dir={}"),
    "--seed": FlagRule("seed={}"),
    "--tasks": FlagRule(advice="choose the benchmark with benchmark=NAME ({benchmarks})"),
    "--task": FlagRule(advice="choose the benchmark with benchmark=NAME ({benchmarks})"),
    "--data": FlagRule(advice="choose the benchmark with benchmark=NAME ({benchmarks})"),
    "--model": FlagRule(advice="choose the model with model=NAME ({models}); the backend with backend=NAME"),
    "--model_args": FlagRule(
        advice="model settings are keys: model=NAME model.vllm_args.max_model_len=N ..."
    ),
    "--batch_size": FlagRule(
        advice="items in flight: concurrency=N (the server client: backend.concurrency=N)"
    ),
    "--log_samples": FlagRule(
        advice="samples are always logged: <output_dir>/trajectories/<id>.json (prompts and replies)"
    ),
}


def options(group: str, conf_dir: Path = CONF_DIR) -> list[str]:
    return sorted(
        p.stem for p in (conf_dir / group).glob("*.yaml") if not p.stem.startswith("_")
    )  # _x.yaml: a shared base


def first_comment(path: Path) -> str:
    """The first comment line of a config file: what the option is (the help and ``ledgermind ls`` show it)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
        if line.strip():
            break
    return ""


def top_level_keys(conf_dir: Path = CONF_DIR) -> dict[str, str]:
    """``key -> its comment`` for the plain keys of ``config.yaml`` (seed, limit, ...)."""
    out: dict[str, str] = {}
    above = ""  # a comment block right above a key describes it when the key has no comment of its own
    for line in (conf_dir / "config.yaml").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([a-z_]+):(.*)$", line)
        if m and m.group(1) not in ("defaults", "hydra"):
            out[m.group(1)] = m.group(2).partition("#")[2].strip() or above
        above = (above or line.lstrip("# ").strip()) if line.startswith("#") else ""
    return out


def help_text(conf_dir: Path = CONF_DIR) -> str:
    lines = [
        "LedgerMind run: python scripts/run.py [key=value ...] [+ablation=NAME]",
        "",
        "Config groups (from conf/; `--cfg job` prints the composed config, `--hydra-help` Hydra's own help):",
    ]
    for group in GROUPS:
        prefix = "+" if group == "ablation" else ""
        lines.append(f"  {prefix}{group}=NAME")
        for name in options(group, conf_dir):
            lines.append(f"      {name:<22} {_clip(first_comment(conf_dir / group / f'{name}.yaml'), 86)}")
    lines += ["", "Keys (key=value; nested ones as model.vllm_args.max_model_len=16384):"]
    nested = _nested_keys(conf_dir)
    for key, comment in top_level_keys(conf_dir).items():
        lines.append(f"  {key:<24} {_clip(comment, 88)}")
        if key in nested:
            lines.append(f"  {'':<24} {nested[key]}")
    lines += [
        "  hydra.run.dir=DIR        output directory; an existing one resumes (errored items are retried)",
        "",
        "Flags from other harnesses: --limit N -> limit=N, --output_path DIR -> hydra.run.dir=DIR, --seed N -> seed=N;",
        "--tasks / --model name the key to use instead.",
        "",
        "Examples:",
        "  python scripts/run.py                                   # tiny offline CPU smoke run",
        "  python scripts/serve.py model=qwen2_5_vl_7b --launch    # then, in another shell:",
        "  python scripts/run.py model=qwen2_5_vl_7b backend=vllm_server benchmark=mmmu_pro_standard10 +ablation=no_ecc",
        "  python scripts/run.py backend=simulated benchmark=gauges limit=8   # the simulated test instrument",
        "  python scripts/run.py pipeline=official pipeline.prompt=cot benchmark=mmmu_pro_vision \\",
        "      backend=replay backend.path=../shared/data/mmmu_pro_subset/gpt4o_outputs/vision_cot.jsonl",
        "  python scripts/run.py -m +experiment=table3 backend.base_urls=[http://localhost:8000/v1]   # Table 3 (conf/ablation × 3 seeds)",
        "  python scripts/run.py -m seed=0,1,2 +ablation=full,no_ecc   # several seeds: scripts/table3.py pools them",
        "",
        "Exit codes: 0 all items scored, 3 some items failed (the exit line prints the command that retries them), 2 config/data/preflight error, 1 bug.",
    ]
    return "\n".join(lines)


def _nested_keys(conf_dir: Path) -> dict[str, str]:
    """``cache -> "cache.mode, cache.path"`` for the mapping keys of ``config.yaml`` (their comments sit inside)."""
    from omegaconf import OmegaConf

    cfg = container(OmegaConf.load(conf_dir / "config.yaml"), resolve=False)  # ${hydra:...} needs a run
    return {
        k: " ".join(f"{k}.{sub}={_yaml_scalar(v)}" for sub, v in node.items())
        for k, node in cfg.items()
        if k != "hydra" and isinstance(node, dict)
    }


def _yaml_scalar(value: object) -> str:
    return "null" if value is None else str(value)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: text.rfind(" ", 0, width - 1)] + " …"


# ------------------------------------------------------------------------------ argv
def translate_argv(argv: Sequence[str], conf_dir: Path = CONF_DIR) -> list[str]:
    """Foreign flags → overrides (or a one-line ``ConfigError``); then every plain override's key
    is checked so a misspelt one is answered with the closest known key."""
    out: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if arg.startswith("--") and name in FLAGS:
            rule = FLAGS[name]
            if rule.advice is not None:
                raise ConfigError(
                    f"{name} is not a flag here: "
                    + rule.advice.format(
                        benchmarks=" | ".join(options("benchmark", conf_dir)),
                        models=" | ".join(options("model", conf_dir)),
                    )
                )
            if eq:
                value = inline
            elif i + 1 < len(args):
                value, i = args[i + 1], i + 1
            else:
                raise ConfigError(f"{name} needs a value: {rule.key.format('VALUE')}")  # type: ignore[union-attr]
            out.append(rule.key.format(value))  # type: ignore[union-attr]
        elif arg.startswith("-") and name not in HYDRA_FLAGS and not _follows_flag_with_value(args, i):
            raise ConfigError(
                f"unknown flag {name}: this is a Hydra app, settings are key=value "
                "(python scripts/run.py --help lists them)"
            )
        else:
            out.append(arg)
        i += 1
    out = flags_first(out)
    if any(a.partition("=")[0] in OTHER_CONFIG for a in out):
        return out  # another primary config (a recorded run's .hydra/): conf/ does not describe its keys
    selected = selection(out)
    searchpath = any(a.lstrip("+").startswith("hydra.searchpath") for a in out)  # other dirs add options
    for arg in out:
        check_key(arg, conf_dir, selected)
        if not searchpath:
            check_group_option(arg, conf_dir)
    return out


# Hydra flags that take a value as the next argument (``--cfg job``, ``-cn name``).
VALUE_FLAGS = frozenset(
    {
        "-cp",
        "--config-path",
        "-cn",
        "--config-name",
        "-cd",
        "--config-dir",
        "-p",
        "--package",
        "-c",
        "--cfg",
        "-i",
        "--info",
        "-sc",
        "--shell-completion",
    }
)


def flags_first(argv: Sequence[str]) -> list[str]:
    """Hydra's flags (with their values) before the overrides: ``logger=none -m seed=0,1`` is what people
    type, and Hydra's argparse takes overrides only as one trailing run ("unrecognized arguments")."""
    flags: list[str] = []
    rest: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and not re.fullmatch(r"-\d+(\.\d+)?", a):
            flags.append(a)
            if (
                a in VALUE_FLAGS
                and i + 1 < len(args)
                and not args[i + 1].startswith("-")
                and "=" not in args[i + 1]
            ):
                flags.append(args[i + 1])
                i += 1
        else:
            rest.append(a)
        i += 1
    return flags + rest


def check_group_option(arg: str, conf_dir: Path = CONF_DIR) -> None:
    """``benchmark=mmmu_pro_standrd10`` or ``+ablation=no_eccc`` → one line with the closest option
    (Hydra's own message is 15–20 lines and lists internal files such as ``benchmark/_loader``).
    Each value of a comma sweep is checked; sweep functions (``choice(...)``) and paths are left to Hydra."""
    key, eq, value = arg.partition("=")
    group = key.lstrip("+")
    if not eq or group not in GROUPS or arg.startswith("-") or any(c in value for c in "()[]${}/"):
        return
    known = options(group, conf_dir)
    for v in (x.strip() for x in value.split(",")):
        if v and v != "null" and v not in known:
            close = difflib.get_close_matches(v.lstrip("_"), known, n=1, cutoff=0.6)
            hint = f"did you mean {key}={close[0]}? " if close else ""
            raise ConfigError(f"unknown {group} option {v!r}: {hint}(options: {' | '.join(known)})")


def _follows_flag_with_value(args: list[str], i: int) -> bool:
    """A negative number or a value given to a Hydra flag (``--config-name x``, ``-cp path``)."""
    prev = args[i - 1] if i else ""
    return bool(re.fullmatch(r"-\d+(\.\d+)?", args[i])) or prev in {
        "-cp",
        "--config-path",
        "-cn",
        "--config-name",
        "-cd",
        "--config-dir",
        "-p",
        "--package",
        "-c",
        "--cfg",
        "-i",
        "--info",
        "-sc",
        "--shell-completion",
    }


def check_key(arg: str, conf_dir: Path = CONF_DIR, selected: Mapping[str, str] | None = None) -> None:
    """A plain ``key=value`` whose key is unknown → one line with the closest known key.

    Only plain overrides are checked (``+key`` adds, ``~key`` deletes, ``hydra.*`` is Hydra's): a
    top-level key against ``config.yaml`` and the groups, a group's nested key against the option
    the command line (or the default) selects.
    """
    key, eq, _ = arg.partition("=")
    if not eq or key.startswith(("+", "~", "hydra")) or arg.startswith("-") or "/" in key or not key:
        return
    top, _, rest = key.partition(".")
    known = [*top_level_keys(conf_dir), *GROUPS, "hydra"]
    if top not in known:
        raise ConfigError(_unknown(key, top, known))
    if rest and top in GROUPS:
        _check_nested(top, rest, conf_dir, (selected or {}).get(top))


def _check_nested(group: str, rest: str, conf_dir: Path, option: str | None) -> None:
    """``model.vllm_args.max_model_lne`` → the closest key in the selected model's yaml."""
    from omegaconf import DictConfig

    option = option or _default_option(group, conf_dir)
    path = conf_dir / group / f"{option}.yaml"
    if option is None or not path.exists():
        return
    node = option_node(group, option, conf_dir)  # with its bases (benchmark/_loader): the keys Hydra composes
    walked = group
    for part in rest.split("."):
        if not isinstance(node, DictConfig):
            return
        if part not in node.keys():  # not `in node`: a mandatory ``???`` value is "not in" a DictConfig
            raise ConfigError(_unknown(f"{group}.{rest}", part, list(node.keys()), f"{walked}."))
        node, walked = node._get_node(part), f"{walked}.{part}"


def _unknown(key: str, part: str, known: Sequence[object], prefix: str = "") -> str:
    close = difflib.get_close_matches(part, [str(k) for k in known], n=1, cutoff=0.6)
    hint = f"did you mean {prefix}{close[0]}?" if close else "python scripts/run.py --help lists the keys"
    return f"unknown key {key!r}: {hint} (to add a new key on purpose, write +{key}=...)"


def _default_option(group: str, conf_dir: Path) -> str | None:
    for line in (conf_dir / "config.yaml").read_text(encoding="utf-8").splitlines():
        m = re.match(rf"^\s*-\s*{group}:\s*(\S+)", line)
        if m:
            return m.group(1)
    return None


def selection(argv: Sequence[str]) -> dict[str, str]:
    """The group options the command line selects (``model=qwen3_vl_8b``), for nested key checks."""
    out = {}
    for arg in argv:
        key, eq, value = arg.lstrip("+").partition("=")
        if eq and key in GROUPS and "," not in value:
            out[key] = value
    return out


def preprocess(argv: Sequence[str], conf_dir: Path = CONF_DIR) -> list[str]:
    """What ``scripts/run.py`` hands to Hydra; raises ``ConfigError`` (one line, exit 2) on a user mistake."""
    from ledgermind.pipeline.config import renamed_override_error

    if moved := renamed_override_error(argv):  # Hydra's own error would not say where the key went
        raise ConfigError(moved)
    return translate_argv(argv, conf_dir)


def sweep_jobs(argv: Sequence[str], conf_dir: Path | None = None) -> int | None:
    """How many jobs a ``-m`` command line sweeps: the product of its sweep overrides and of the
    ``hydra.sweeper.params`` of the ``+experiment=`` it names (the command line wins per key, as in
    Hydra's basic sweeper); a ``glob(...)`` sweep counts the matching options of its config group.
    None when not a sweep or when a line does not parse (Hydra then says why in its own words)."""
    if not any(a in ("-m", "--multirun") for a in argv):
        return None
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    line = [a for a in argv if "=" in a and not a.startswith("-")]
    parser = OverridesParser.create()
    try:
        overrides = parser.parse_overrides(line)
        given = {o.get_key_element().lstrip("+~") for o in overrides}
        params = [
            f"{k}={v}"
            for k, v in _experiment_sweep(overrides, conf_dir).items()
            if k.lstrip("+~") not in given
        ]
        overrides = [*overrides, *parser.parse_overrides(params)]
    except HydraException:
        return None
    jobs = 1
    for o in overrides:
        if o.is_sweep_override() and not o.is_hydra_override():
            jobs *= _sweep_size(o, conf_dir)
    return jobs


def _experiment_sweep(overrides: Sequence[Any], conf_dir: Path | None) -> dict[str, str]:
    """The ``hydra.sweeper.params`` of the experiment a command line selects, read as plain YAML."""
    for o in overrides:
        if o.get_key_element().lstrip("+") == "experiment" and not o.is_sweep_override():
            path = Path(conf_dir or CONF_DIR) / "experiment" / f"{o.value()}.yaml"
            node = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
            node = node if isinstance(node, dict) else {}  # a missing or odd file: Hydra reports it
            params = ((node.get("hydra") or {}).get("sweeper") or {}).get("params") or {}
            return {str(k): str(v) for k, v in params.items()}
    return {}


def _sweep_size(o: Any, conf_dir: Path | None) -> int:
    from hydra.core.override_parser.types import Glob

    value = o.value()
    if isinstance(value, Glob):
        group = Path(conf_dir or CONF_DIR) / o.get_key_element().lstrip("+~")
        return len(value.filter(sorted(p.stem for p in group.glob("*.yaml"))))
    return len(list(o.sweep_string_iterator()))
