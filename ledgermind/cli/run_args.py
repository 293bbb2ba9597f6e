"""The run command's line (``ledgermind run``, ``scripts/run.py``) before and after Hydra reads it:
the anchor flags of other harnesses mapped to our keys, and Hydra's own composition errors (struct
mode, missing options) said in one line with the closest key or option.

Why: ``run.py`` is a Hydra app. ``--limit 2`` or ``--output_path`` (lmms-eval, VLMEvalKit habits) got
an argparse usage block, and Hydra's answer to a misspelt key is five lines that never say which key
was meant. The help is Hydra's (``conf/hydra/help/ledgermind.yaml``), the key checks are Hydra's
struct mode over the composed config and the pipeline's schema, Hydra's own flags are read from
Hydra's argument parser; only the wording is ours.
"""

from __future__ import annotations

import difflib
import itertools
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from hydra._internal.utils import get_args_parser
from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from ledgermind.confutil import CONF_DIR
from ledgermind.errors import ConfigError, first_line
from ledgermind.experiment.sweep_dirs import sweep_overrides

# Hydra's own flags (``-m``, ``--cfg``, ``-cn`` ...): passed through, with their value when they take one.
HYDRA_FLAGS = get_args_parser()._option_string_actions
NUMBER = re.compile(r"-\d+(\.\d+)?")  # ``seed=-1`` is a value, not a flag

# A foreign flag that is one of our keys (``{}`` is its value) ...
FLAG_KEYS = {
    "--limit": "limit={}",
    "--seed": "seed={}",
    **dict.fromkeys(("--output_path", "--output-path", "--output_dir", "--output-dir"), "hydra.run.dir={}"),
}
# ... or the one line that says what to use instead.
FLAG_ADVICE = {
    **dict.fromkeys(
        ("--tasks", "--task", "--data"), "choose the benchmark with benchmark=NAME ({benchmarks})"
    ),
    "--model": "choose the model with model=NAME ({models}); the backend with backend=NAME",
    "--model_args": "model settings are keys: model=NAME model.vllm_args.max_model_len=N ...",
    "--batch_size": "items in flight: concurrency=N (the server client: backend.concurrency=N)",
    "--log_samples": "samples are always logged: <output_dir>/trajectories/<id>.json (prompts and replies)",
}


def options(group: str, conf_dir: Path = CONF_DIR) -> list[str]:
    # _x.yaml: a shared base, not an option
    return sorted(p.stem for p in (conf_dir / group).glob("*.yaml") if not p.stem.startswith("_"))


def first_comment(path: Path) -> str:
    """What the option is: the sentence its leading comment opens with, whole even when the comment
    wraps it onto the next lines (the help and ``ledgermind ls`` show it)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    block = [line.lstrip("# ").strip() for line in itertools.takewhile(lambda x: x.startswith("#"), lines)]
    if not block or re.search(r"[.!?]$", block[0]):
        return block[0] if block else ""
    rest = " ".join(block[1:])
    end = re.search(r"[.!?](\s|$)", rest)
    return f"{block[0]} {rest[: end.end() if end else len(rest)].strip()}".strip()


# ------------------------------------------------------------------------------ argv
def preprocess(argv: Sequence[str]) -> list[str]:
    """What ``scripts/run.py`` hands to Hydra: foreign flags become overrides (or a one-line
    ``ConfigError``, exit 2), and Hydra's flags with their values come first: ``logger=none -m
    seed=0,1`` is what people type, and Hydra's argparse takes overrides only as one trailing run."""
    flags: list[str] = []
    rest: list[str] = []
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, eq, value = arg.partition("=")
        if name in FLAG_ADVICE:
            benchmarks, models = (" | ".join(options(g)) for g in ("benchmark", "model"))
            advice = FLAG_ADVICE[name].format(benchmarks=benchmarks, models=models)
            raise ConfigError(f"{name} is not a flag here: {advice}")
        if name in FLAG_KEYS:
            if not (eq or args):
                raise ConfigError(f"{name} needs a value: {FLAG_KEYS[name].format('VALUE')}")
            rest.append(FLAG_KEYS[name].format(value if eq else args.pop(0)))
        elif name in HYDRA_FLAGS:
            flags.append(arg)
            takes_value = not eq and HYDRA_FLAGS[name].nargs != 0
            if takes_value and args and not args[0].startswith("-") and "=" not in args[0]:
                flags.append(args.pop(0))
        elif arg.startswith("-") and not NUMBER.fullmatch(arg):
            raise ConfigError(
                f"unknown flag {name}: this is a Hydra app, settings are key=value "
                "(python scripts/run.py --help lists them)"
            )
        else:
            refuse_near_miss_addition(arg)
            refuse_credentials_in_url(arg)
            rest.extend(hub_model(arg))
    return flags + rest


# ``scheme://user:password@host`` (or a token as the user name): the part before ``@``
URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s@,\[\]]+)@")


def refuse_credentials_in_url(arg: str) -> None:
    """``backend.base_urls=[http://user:KEY@host/v1]``: a key in a URL is a value of the config,
    so the run would record it in ``.hydra/*.yaml``, every trajectory, the response cache and W&B.
    Keys come only from the environment (``backend.api_key_env``): one ``ConfigError`` that names
    the key and shows the URL with its credentials masked, before Hydra writes anything."""
    key, eq, value = arg.partition("=")
    if eq and URL_CREDENTIALS.search(value):
        masked = URL_CREDENTIALS.sub(r"\1***@", value)
        raise ConfigError(
            f"{key.lstrip('+~')}={masked}: a URL with credentials would be recorded in the run folder; "
            "give the URL without them and put the key in an environment variable named by "
            "backend.api_key_env=VAR (sent as the bearer token)"
        )


def _top_level_names(conf_dir: Path = CONF_DIR) -> dict[str, str]:
    """Every top-level name a command line can set, with how it is set: the primary config's keys
    (``limit=``), the groups it composes by default (``benchmark=``) and those added with ``+``
    (``+ablation=``, ``+experiment=``), read from ``conf/`` as plain YAML."""
    primary: dict[str, Any] = yaml.safe_load((conf_dir / "config.yaml").read_text(encoding="utf-8"))
    defaults = {
        str(key).removeprefix("override ")
        for entry in primary.get("defaults", [])
        if isinstance(entry, dict)
        for key in entry
    }
    names = {str(k): "" for k in primary if k != "defaults"}
    for group in sorted(p.name for p in conf_dir.iterdir() if p.is_dir() and p.name != "hydra"):
        names[group] = "" if group in defaults else "+"
    return names


def refuse_near_miss_addition(arg: str) -> None:
    """``+ablaton=no_ecc``: ``+`` adds a key Hydra does not know, so a misspelt group or key added
    with it ran the experiment without it (here: the full method, recorded as a run of the variant
    the user meant). A ``+`` key close to a known top-level name is one ``ConfigError`` naming it; a
    new key far from every name (``+extra.note=...``) is still Hydra's to add."""
    key, eq, value = arg.partition("=")
    if not eq or not key.startswith("+"):
        return
    top = key.lstrip("+").partition(".")[0]
    names = _top_level_names()
    if top in names or not (close := difflib.get_close_matches(top, list(names), n=1, cutoff=0.75)):
        return
    name = close[0]
    rest = key.lstrip("+")[len(top) :]
    raise ConfigError(
        f"unknown key {top!r} (a + key nothing reads): did you mean {names[name]}{name}{rest}={value}?"
    )


GENERIC_MODEL = "hf"  # conf/model/hf.yaml: any hub id, model=hf model.hub_id=ORG/NAME


def hub_model(arg: str) -> list[str]:
    """``model=ORG/NAME`` (a hub id, as lmms-eval's ``pretrained=`` takes one) is the generic model
    config with that hub id; a ``model=`` naming a config, and every other argument, pass unchanged."""
    key, eq, value = arg.partition("=")
    if (
        key != "model"
        or not eq
        or "/" not in value
        or "," in value
        or (CONF_DIR / "model" / f"{value}.yaml").exists()
    ):
        return [arg]
    return [f"model={GENERIC_MODEL}", f"model.hub_id={value}"]


def composition_error(e: BaseException) -> str | None:
    """Hydra's (or OmegaConf's) refusal of a config as one line naming the closest key or option;
    None for anything else (a bug, also one Hydra's ``instantiate`` wraps, keeps its traceback)."""
    if isinstance(e, MissingConfigException) and e.options is not None:  # benchmark=mmmu_pro_standrd10
        group, option = _group_and_option(str(e.missing_cfg_file))
        known = [o for o in e.options if not o.startswith("_")]  # _loader: a base, not an option
        hint = closest(option, known) or (_display_hint(str(option)) if group.endswith("ablation") else "")
        return f"unknown {group} option {option!r}: {hint}(options: {' | '.join(known)})"
    cause = e.__cause__ if isinstance(e.__cause__, OmegaConfBaseException) else e
    if not isinstance(cause, ConfigCompositionException | OverrideParseException | OmegaConfBaseException):
        return None
    key, parent = getattr(cause, "full_key", None), getattr(cause, "parent_node", None)
    if "not in" in str(cause) and key and parent is not None:  # struct mode: limt=2, pipeline.zom=8
        prefix, _, leaf = key.rpartition(".")
        below = [f"{k}.{s!s}" for k in parent if isinstance(n := parent._get_node(k), DictConfig) for s in n]
        hint = closest(leaf, [*map(str, parent), *below], f"{prefix}." if prefix else "")  # pipeline.beta
        return f"unknown key {key!r}: {hint or 'python scripts/run.py --help lists the keys'}".rstrip()
    if missing := re.search(r"Missing mandatory value: (\S+)", str(cause)):  # model=hf without its hub id
        return f"{missing[1]} is required: add {missing[1]}=... to the command line"
    first = first_line(cause)
    if append := re.search(r"To append to your default list use (\S+)", str(cause)):  # ablation=no_ecc
        return f"{first.rstrip('.')}: add it with {append[1]}"
    return f"{first} (config key: {key})" if key and key not in first else first


def _group_and_option(missing: str) -> tuple[str, str]:
    """``ablation/w/o_ECC`` → (``ablation``, ``w/o_ECC``): the group is the longest prefix that is a
    config folder (groups nest: ``hydra/launcher``), the rest the option as typed, slashes and all."""
    parts = missing.split("/")
    for k in range(len(parts) - 1, 0, -1):
        if (CONF_DIR / "/".join(parts[:k])).is_dir():
            return "/".join(parts[:k]), "/".join(parts[k:])
    return missing.rpartition("/")[0], missing.rpartition("/")[2]


def _display_hint(option: str) -> str:
    """``+ablation=w/o_ECC``: Table 3's row name typed for the option; the option whose display name it is."""
    from ledgermind.experiment.variants import load_variants

    def fold(text: str) -> str:
        return re.sub(r"[^a-z0-9]+", "", text.lower())

    shown = {fold(v.display): v for v in load_variants()}
    close = difflib.get_close_matches(fold(option), list(shown), n=1, cutoff=0.6)
    if not close:
        return ""
    v = shown[close[0]]
    return f"did you mean {v.name}? (Table 3 shows it as {v.display!r}) "


def closest(name: str, known: Sequence[str], prefix: str = "", cutoff: float = 0.6) -> str:
    """``did you mean …? `` for the known name (a sibling before a nested one) whose last part is
    closest: the one wording of every "did you mean" of the command line (``ledgermind ls`` too)."""
    leaves = {k.rpartition(".")[2]: k for k in reversed(known)}
    close = difflib.get_close_matches(name, list(leaves), n=1, cutoff=cutoff)
    return f"did you mean {prefix}{leaves[close[0]]}? " if close else ""


def sweep_jobs(argv: Sequence[str]) -> int | None:
    """How many jobs a ``-m`` command line sweeps: the product of its sweep overrides and of the
    ``hydra.sweeper.params`` of the ``+experiment=`` it names (``sweep_dirs.sweep_overrides``); a
    ``glob(...)`` sweep counts the matching options of its config group. None when not a sweep or
    when the line does not parse."""
    if not {"-m", "--multirun"} & set(argv):
        return None
    from hydra.core.override_parser.types import Glob

    last = sweep_overrides(argv, _experiment_sweep(argv))
    if last is None:
        return None
    sizes = [
        len(o.value().filter(options(key)))
        if isinstance(o.value(), Glob)
        else len(list(o.sweep_string_iterator()))
        for key, o in last.items()
        if o.is_sweep_override() and not o.is_hydra_override()
    ]
    return math.prod(sizes)


def _experiment_sweep(argv: Sequence[str]) -> dict[str, Any]:
    """The ``hydra.sweeper.params`` of the experiment a command line selects, read as plain YAML."""
    for arg in reversed(argv):
        key, _, name = arg.partition("=")
        path = CONF_DIR / "experiment" / f"{name}.yaml"
        if key.lstrip("+") == "experiment" and path.is_file():  # a missing file: Hydra reports it
            return dict(OmegaConf.select(OmegaConf.load(path), "hydra.sweeper.params") or {})
    return {}
