"""The simulator's vision disk cache: written once through unique temporary names, never
rewritten on a hit, a damaged entry is a miss, and a cache directory that cannot be written costs
one warning, never a failed call."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from ledgermind.simulator.vision import Vision
from perception.ocr import OCRLine, RapidOCREngine, make_line


class CountingEngine(RapidOCREngine):
    """The real engine class and settings; recognition stubbed and counted."""

    calls = 0

    def _recognize(self, image: Image.Image) -> list[OCRLine]:
        type(self).calls += 1
        return [make_line("GAUGE 42 PSI", [(0, 0), (60, 0), (60, 12), (0, 12)], 0.99)]


def _image() -> Image.Image:
    return Image.new("RGB", (64, 48), (200, 210, 220))


def test_a_hit_is_never_rewritten_and_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    CountingEngine.calls = 0
    assert Vision(CountingEngine(), tmp_path).lines(_image()) == ("GAUGE 42 PSI",)
    (entry,) = tmp_path.glob("*.json")
    stamp = entry.stat().st_mtime_ns
    assert Vision(CountingEngine(), tmp_path).lines(_image()) == (
        "GAUGE 42 PSI",
    )  # a fresh process: disk hit
    assert CountingEngine.calls == 1 and entry.stat().st_mtime_ns == stamp  # read, not rewritten
    assert not list(tmp_path.glob(".*tmp"))  # no temporary left behind

    entry.write_text(json.dumps([1, 2]))  # a foreign or damaged entry
    assert Vision(CountingEngine(), tmp_path).lines(_image()) == ("GAUGE 42 PSI",)
    assert CountingEngine.calls == 2


def test_an_unwritable_cache_dir_warns_once_and_never_fails_a_call(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")  # every write raises an OSError
    vision = Vision(CountingEngine(), blocker / "cache")
    assert vision.lines(_image()) == ("GAUGE 42 PSI",)
    assert vision.lines(Image.new("RGB", (64, 48), (10, 20, 30))) == ("GAUGE 42 PSI",)
    warnings = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "simulator vision cache" in warnings[0]
