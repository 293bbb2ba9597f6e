"""Perception cache on disk: a real (counting) OCR engine on a tiny real image, as the agent calls it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from PIL import Image

from ledgermind.errors import ConfigError
from ledgermind.ledger import Ledger
from ledgermind.testing.counting_ocr import CountingRapidOCREngine
from perception.cache import CachedTool, PerceptionCache, with_cache
from perception.tools import build_tools

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
QUESTION = "What is the reading in the top left?"


def perception_cfg(**ocr: object) -> dict:
    cfg = OmegaConf.to_container(OmegaConf.load(REPO / "conf/perception/cpu.yaml"))
    cfg["ocr"] = {
        **cfg["ocr"],
        "_target_": "ledgermind.testing.counting_ocr.CountingRapidOCREngine",
        "threads": 1,
        **ocr,
    }
    return cfg


@pytest.fixture
def image_file(render, tmp_path) -> Path:
    drawn = render({"42 kPa": (10, 10, 28), "LOT 7781": (120, 70, 22)}, canvas=(260, 120))
    path = tmp_path / "gauge.png"
    drawn.image.save(path)
    return path


def variant_calls(tools, image: Path) -> list:
    """The perception calls one FULLPIPE item makes: full OCR, zone crop-zoom, OCR of the crop region."""

    async def go():
        ocr = await tools["ocr"].ainvoke(image=image)
        crop = await tools["crop_zoom"].ainvoke(image=image, question=QUESTION)
        zoomed = await tools["ocr"].ainvoke(image=image, region=crop.observations[0].bbox.as_list())
        return [ocr, crop, zoomed]

    return asyncio.run(go())


def test_seven_variants_ocr_each_image_once_and_a_rerun_recomputes_none(image_file, tmp_path):
    CountingRapidOCREngine.reset()
    cache_dir = tmp_path / "pcache"
    first = variant_calls(with_cache(build_tools(perception_cfg()), cache_dir), image_file)
    once = CountingRapidOCREngine.calls
    assert once >= 2  # at least the full image (shared by OCR and crop proposals) and the zoomed region
    assert any("42" in o.text for o in first[0].observations)
    for _ in range(6):  # the other six Table 3 variants: fresh tools and engine, as in a multirun
        again = variant_calls(with_cache(build_tools(perception_cfg()), cache_dir), image_file)
        for a, b in zip(first, again):
            assert a.observations == b.observations and a.tool == b.tool and a.kind is b.kind
            assert a.call_id != b.call_id  # a new tool call, sealed by Tool.ainvoke
    assert CountingRapidOCREngine.calls == once
    crop_miss, crop_hit = first[1].artifacts["image"], again[1].artifacts["image"]
    assert crop_hit.size == crop_miss.size and crop_hit.tobytes() == crop_miss.tobytes()

    CountingRapidOCREngine.reset()  # "a rerun of the same command": new process state, same directory
    variant_calls(with_cache(build_tools(perception_cfg()), cache_dir), image_file)
    assert CountingRapidOCREngine.calls == 0


def test_hit_enters_the_ledger_exactly_like_the_computed_output(image_file, tmp_path):
    tools = with_cache(build_tools(perception_cfg()), tmp_path)
    miss, hit = (tools["ocr"].invoke(image=image_file) for _ in range(2))
    assert tools["ocr"].cache.hits == 1 and tools["ocr"].cache.misses == 1
    a, b = Ledger(), Ledger()
    ea, eb = a.record(miss), b.record(hit)
    assert [(e.fact, e.bbox, e.sigma, e.kappa, e.src) for e in ea] == [
        (e.fact, e.bbox, e.sigma, e.kappa, e.src) for e in eb
    ]
    assert hit.latency_s < miss.latency_s  # the hit's own latency is recorded, not the stored one
    stored = [json.loads(p.read_text()) for p in tmp_path.rglob("*.json")]
    assert stored and all("call_id" not in s and "_seal" not in s for s in stored)  # payload only


def test_key_follows_pixels_inputs_and_engine_settings(render, image_file, tmp_path):
    CountingRapidOCREngine.reset()
    base = with_cache(build_tools(perception_cfg()), tmp_path)["ocr"]
    other = tmp_path / "other.png"
    render({"SALE 50%": (10, 10, 28)}, canvas=(260, 120)).image.save(other)
    keys = {
        base.key({"image": image_file}),
        base.key({"image": str(image_file)}),  # a str path is the same file
        base.key({"image": Image.open(image_file).convert("RGB")}),  # pixels, not the file
        base.key({"image": other}),
        base.key({"image": image_file, "region": [0, 0, 100, 50]}),
        with_cache(build_tools(perception_cfg(min_confidence=0.6)), tmp_path)["ocr"].key(
            {"image": image_file}
        ),
        with_cache(build_tools(perception_cfg(det_box_thresh=0.4)), tmp_path)["ocr"].key(
            {"image": image_file}
        ),
    }
    assert len(keys) == 6  # only the str path coincides with the Path
    same = with_cache(build_tools(perception_cfg(threads=2)), tmp_path)["ocr"].key({"image": image_file})
    assert same == base.key({"image": image_file})  # the thread count does not change what OCR reads
    strict = with_cache(build_tools(perception_cfg()), tmp_path)["ocr"].invoke(image=image_file)
    loose = with_cache(build_tools(perception_cfg(min_confidence=0.3)), tmp_path)["ocr"].invoke(
        image=image_file
    )
    assert strict.ok and loose.ok and CountingRapidOCREngine.calls == 2  # a settings change recomputes


def test_off_wraps_nothing_and_failures_are_never_stored(image_file, tmp_path):
    tools = build_tools(perception_cfg())
    assert with_cache(tools, "off") == tools
    cached = with_cache(tools, tmp_path / "c")
    assert isinstance(cached["ocr"], CachedTool) and cached["ocr"].name == "ocr"
    assert cached["crop_zoom"].config.zoom == 2.5  # attribute reads reach the wrapped tool
    for _ in range(2):
        out = cached["ocr"].invoke(image=tmp_path / "missing.png")
        assert not out.ok and "image not found" in out.error
    bad = cached["crop_zoom"].invoke(image=image_file)  # neither question nor bbox: a user error
    assert bad.error and "needs a question" in bad.error
    assert not list((tmp_path / "c").rglob("*.json"))


def test_default_and_bad_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGERMIND_CACHE", str(tmp_path))
    assert PerceptionCache.from_setting("default").directory == tmp_path / "perception"
    assert PerceptionCache.from_setting(None).directory == tmp_path / "perception"
    assert PerceptionCache.from_setting("OFF") is None
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="must be a directory"):
        PerceptionCache.from_setting(tmp_path / "f")


def test_corrupt_entry_is_a_miss_and_is_rewritten(image_file, tmp_path):
    tool = with_cache(build_tools(perception_cfg()), tmp_path)["ocr"]
    first = tool.invoke(image=image_file)
    [entry] = list(tmp_path.rglob("*.json"))
    entry.write_text("{not json")
    again = tool.invoke(image=image_file)
    assert again.observations == first.observations and tool.cache.misses == 2
    assert json.loads(entry.read_text())["observations"]


def test_a_cache_that_cannot_be_written_skips_the_write_and_warns_once(tmp_path, capsys) -> None:
    """A read-only or full cache directory never fails the tool; the first refusal is one line."""
    from ledgermind.tools.base import Observation
    from perception.cache import PerceptionCache

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = PerceptionCache(blocker / "cache")
    obs = [Observation("42 PSI")]
    assert cache.put("ab" * 32, obs, {}) is False
    assert cache.put("cd" * 32, obs, {}) is False
    # a second reader of the same directory in this process (the simulated backbone's eyes share the
    # agent's cache) says nothing new
    assert PerceptionCache(blocker / "cache").put("cd" * 32, obs, {}) is False
    assert cache.get("ab" * 32) is None  # a miss, not an error
    warnings = [
        ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning: perception cache")
    ]
    assert len(warnings) == 1
    ok = PerceptionCache(tmp_path / "good")
    assert ok.put("ef" * 32, obs, {}) is True and ok.get("ef" * 32)[0] == obs


def test_a_hit_keeps_the_best_confidence_of_discarded_text(image_file, tmp_path):
    """OCR that keeps no line reports the engine's best confidence (the verifier raises T4 on it,
    T1 without it): a cache hit must report the same, or the trajectory depends on the cache state."""
    tools = with_cache(build_tools(perception_cfg(min_confidence=1.0)), tmp_path)  # every line discarded
    miss, hit = (tools["ocr"].invoke(image=image_file) for _ in range(2))
    assert tools["ocr"].cache.hits == 1 and not miss.observations and not hit.observations
    assert 0 < miss.artifacts["best_confidence"] < 1.0 and miss.artifacts["discarded_lines"] >= 1
    assert hit.artifacts["best_confidence"] == miss.artifacts["best_confidence"]
    assert hit.artifacts["discarded_lines"] == miss.artifacts["discarded_lines"]
