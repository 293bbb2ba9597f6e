"""The README is a researcher's first five minutes: short, every link resolving, the quick Table 3
near the top, and its statements consistent with the code (the Holm verdict, the make targets)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_is_read_in_five_minutes() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    quick = next(i for i, ln in enumerate(lines) if "make table3-quick" in ln)
    assert quick < 80  # the two-minute Table 3 is documented near the top


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text):
        assert (page.parent / target).exists(), f"{page.name} links to {target}"


def test_not_distinguishable_is_the_holm_verdict_everywhere() -> None:
    from ledgermind.experiment.table3 import NOT_DISTINGUISHABLE

    for page in PAGES:
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert "interval contains 0 is marked" not in text, page.name
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert f'"{NOT_DISTINGUISHABLE}" means (the Holm-adjusted p of Δ vs full is ≥ 0.05' in readme


def test_the_make_targets_the_readme_names_exist() -> None:
    targets = set(re.findall(r"^([a-z0-9-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))
    named = set(re.findall(r"\bmake ([a-z0-9-]+)", README.read_text(encoding="utf-8")))
    assert named and named <= targets, named - targets
