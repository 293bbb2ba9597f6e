"""Scripted scenarios written to disk exactly as ``scripts/run.py`` writes a run.

The real agent (``LedgerMindAgent``) runs with the scripted backend (replies chosen by the prompt
text, never by stage name), deterministic OCR/crop tools with the real tool signatures and real
spaCy NER, through the real runner (``run_items``), so the report reads genuine trajectories,
``results.jsonl`` and ``metrics.json``. One reply and one OCR line are malicious HTML.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from ledgermind.backends.scripted import Rule, ScriptedBackend
from ledgermind.experiment.runner import RunOptions, identity_for, run_items
from ledgermind.grounding import GroundingCascade
from ledgermind.metrics import summarize
from ledgermind.pipeline import AblationFlags, LedgerMindAgent, PipelineConfig
from ledgermind.pipeline.agent import grounding_config
from ledgermind.scoring import score
from ledgermind.tools.base import BBox, Observation, Tool, ToolKind

IMAGE_SIZE = (400, 300)
MALICIOUS_REPLY = (
    "Answer: <img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"
    "<script>document.body.setAttribute('data-pwned','script')</script>"
)
MALICIOUS_OCR = "<b id=injected>EXIT</b><script>document.title='pwned'</script>"
OCR_LINES: Sequence[tuple[str, list[float], float]] = (
    ("Apollo 11 Plaque", [40, 30, 262, 70], 0.95),
    ("1969", [40, 100, 140, 140], 0.95),
    (MALICIOUS_OCR, [200, 180, 380, 280], 0.9),
)
RULES = [
    {"pattern": "^You plan how", "reply": "1. Observation targets: plaque text"},
    {"pattern": "Inspect the image", "reply": "[OC-1] TEXT | Apollo 11 Plaque\n[OC-2] NUMBER | 1969"},
    {
        "pattern": "in three stages",
        "reply": "[SC-1][E] The plaque reads Apollo 11 | Based on: [OC-2]\n"
        "[SC-2][J] It is the Apollo 13 plaque from 1969 | Based on: [OC-2], [OC-3]",
    },
    {
        "pattern": "Treat the hypothesis as something to falsify",
        "reply": "1. none\n2. the text says Apollo 11\n3. Conclusion: Revise: Apollo 11 plaque from 1969",
    },
    {"pattern": "Decide the final answer", "reply": "Answer: Apollo 11 | Based on: [SC-3]"},
    {"pattern": "Reply with one line: Answer: <answer>", "reply": MALICIOUS_REPLY},
]
ITEMS = [
    {
        "id": "apollo",
        "question": "Identify the artifact in <image 1> and verify the year on it.",
        "images": ["img/plaque.png"],
        "answer": "Apollo 11",
        "difficulty": "Hard",
    },
    {
        "id": "sign <x>",
        "question": "What does the sign in <image 1> say? <i>bold</i>",
        "images": ["img/plaque.png"],
        "options": ["EXIT", "<script>alert(1)</script>", "ENTRY"],
        "answer": "A",
        "difficulty": "Easy",
    },
]


class ScriptedOCR(Tool):
    """OCR-kind tool returning preset lines (same inputs as ``perception.tools.OCRTool``)."""

    name, kind = "ocr", ToolKind.OCR

    def _run(self, image: Any, region: Any = None) -> list[Observation]:
        if region is not None:
            return []
        return [Observation(t, BBox.from_list(b), score=s) for t, b, s in OCR_LINES]


class ScriptedCrop(Tool):
    """Crop-zoom tool with ``perception.tools.CropZoomTool``'s inputs: one fixed region."""

    name, kind = "crop_zoom", ToolKind.CROP

    def _run(
        self, image: Any, question: str | None = None, bbox: Any = None, perturb_seed: int | str | None = None
    ):
        region = BBox(20, 20, 260, 160)
        return [Observation("crop zone 1 region [20, 20, 260, 160] scale 2.5", region, meta={"zone": 1})], {
            "image": Image.new("RGB", (100, 100), "white")
        }


def write_dataset(root: Path) -> Path:
    data = root / "data"
    (data / "img").mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", IMAGE_SIZE, "white")
    d = ImageDraw.Draw(im)
    d.rectangle([10, 10, 390, 290], outline="#8a6d3b", width=6, fill="#f3e9d2")  # a plaque
    for text, (x0, y0, _x1, y1), _ in OCR_LINES:
        shown = "EXIT" if text == MALICIOUS_OCR else text
        d.text((x0 + 6, y0 + 6), shown, fill="black", font_size=min(28, int(y1 - y0) - 10))
    im.save(data / "img" / "plaque.png")
    (data / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in ITEMS), encoding="utf-8")
    return data


def run_variant(run_dir: Path, data: Path, variant: str, flags: AblationFlags, ner: Any) -> dict[str, Any]:
    """One run of the scripted scenario into ``run_dir`` (results, trajectories, metrics, .hydra)."""
    from ledgermind.benchmarks import load_benchmark

    node = {
        "name": "jsonl",
        "path": str(data),
        "setting": None,
        "split": None,
        "limit": None,
        "cache_dir": None,
    }
    items = load_benchmark("jsonl", dict(node))
    (run_dir / ".hydra").mkdir(parents=True, exist_ok=True)
    (run_dir / ".hydra" / "config.yaml").write_text(
        json.dumps({"benchmark": node}), encoding="utf-8"
    )  # JSON is YAML
    backend = ScriptedBackend({"name": "scripted"}, [Rule(**r) for r in RULES], default="Answer: unknown")
    cfg = PipelineConfig()
    agent = LedgerMindAgent(
        backend,
        {"ocr": ScriptedOCR(), "crop_zoom": ScriptedCrop()},
        GroundingCascade(grounding_config(cfg, flags), ner=ner),
        cfg,
        flags,
    )
    identity = identity_for(
        items, model="scripted", backend="ScriptedBackend", benchmark="jsonl", variant=variant, seed=0
    )
    opts = RunOptions(run_dir, concurrency=1, progress=False)
    return asyncio.run(
        run_items(items, agent, identity=identity, options=opts, scorer=score, summarize=summarize)
    )


def build_multirun(root: Path, ner: Any) -> Path:
    """``root/multi/{0_full,1_no_ecc,2_no_ledger}``: a three-variant multirun of the scenario."""
    data = write_dataset(root)
    multi = root / "multi"
    run_variant(multi / "0_full", data, "full", AblationFlags(), ner)
    run_variant(multi / "1_no_ecc", data, "no_ecc", AblationFlags(ecc_ncc=False), ner)
    run_variant(multi / "2_no_ledger", data, "no_ledger", AblationFlags(use_ledger=False), ner)
    return multi
