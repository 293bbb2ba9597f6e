"""Region proposals: classical OpenCV boxes, OCR boxes, and OWLv2 wiring with a tiny random model."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from perception.detect import (
    ClassicalProposer,
    OwlV2Detector,
    ProposalSource,
    proposals_from_ocr,
    spectral_residual_saliency,
)
from perception.ocr import make_line


def test_classical_proposals_find_a_drawn_object():
    img = Image.new("RGB", (640, 480), (235, 235, 235))
    ImageDraw.Draw(img).rectangle((400, 300, 480, 360), fill=(20, 20, 20))
    props = ClassicalProposer().propose(img)
    assert props and all(p.source is ProposalSource.CLASSICAL for p in props)
    best = props[0].bbox
    assert (
        best.x0 <= 402 and best.y0 <= 302 and best.x1 >= 478 and best.y1 >= 358 and best.area < 640 * 480 / 4
    )


def test_classical_proposals_on_blank_and_tiny_images():
    assert ClassicalProposer().propose(Image.new("RGB", (300, 200), "white")) == []
    assert isinstance(ClassicalProposer().propose(Image.new("RGB", (9, 9), "black")), list)


def test_saliency_highlights_the_odd_spot():
    grey = np.full((128, 128), 128, np.uint8)
    grey[90:100, 20:30] = 0
    sal = spectral_residual_saliency(grey)
    assert sal.shape == grey.shape and sal[95, 25] > np.median(sal)


def test_ocr_proposals_carry_text_and_confidence():
    (p,) = proposals_from_ocr([make_line("12.5", [(1, 2), (9, 2), (9, 6), (1, 6)], 0.93)])
    assert p.label == "12.5" and p.score == 0.93 and p.source is ProposalSource.TEXT


@pytest.mark.hf
def test_owlv2_wiring_with_tiny_random_model():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = {}
    for c in letters:
        vocab[c] = len(vocab)
        vocab[c + "</w>"] = len(vocab)
    vocab["<|startoftext|>"] = len(vocab)  # OWL treats a query whose first id is 0 as padding
    vocab["<|endoftext|>"] = len(vocab)
    tokenizer = transformers.CLIPTokenizer(vocab=vocab, merges=[])
    torch.manual_seed(0)
    config = transformers.Owlv2Config(
        text_config=dict(
            vocab_size=len(vocab),
            hidden_size=32,
            intermediate_size=37,
            num_hidden_layers=1,
            num_attention_heads=4,
            max_position_embeddings=16,
            bos_token_id=len(vocab) - 2,
            eos_token_id=len(vocab) - 1,
            pad_token_id=len(vocab) - 1,
        ),
        vision_config=dict(
            hidden_size=32,
            intermediate_size=37,
            num_hidden_layers=1,
            num_attention_heads=4,
            image_size=64,
            patch_size=16,
        ),
        projection_dim=32,
    )
    model = transformers.Owlv2ForObjectDetection(config).eval()
    processor = transformers.Owlv2Processor(
        image_processor=transformers.Owlv2ImageProcessor(size={"height": 64, "width": 64}),
        tokenizer=tokenizer,
    )
    detector = OwlV2Detector(device="cpu", threshold=0.0, model=model, processor=processor)
    props = detector.detect(Image.new("RGB", (120, 80), "white"), ["gauge", "needle"])
    assert len(props) == (64 // 16) ** 2  # one box per patch at threshold 0
    assert {p.label for p in props} <= {"gauge", "needle"}
    assert all(
        p.source is ProposalSource.DETECTOR and 0 <= p.bbox.x1 <= 120 and p.bbox.y1 <= 80 for p in props
    )
    assert [p.score for p in props] == sorted((p.score for p in props), reverse=True)
    assert detector.detect(Image.new("RGB", (120, 80)), ["  "]) == []


def test_unread_text_keeps_only_boxes_no_legible_line_covers():
    from ledgermind.tools.base import BBox
    from perception.detect import Proposal, unread_text

    det = [
        Proposal(BBox(10, 10, 50, 20), ProposalSource.UNREAD_TEXT, 0.6),
        Proposal(BBox(100, 100, 140, 110), ProposalSource.UNREAD_TEXT, 0.4),
    ]
    legible = [make_line("PSI", [(8, 8), (52, 8), (52, 22), (8, 22)], 0.95)]
    assert unread_text(det, legible) == [det[1]]
    assert unread_text(det, []) == det


def test_text_detector_settings_are_validated():
    from ledgermind.errors import ConfigError
    from perception.detect import TextDetector

    with pytest.raises(ConfigError):
        TextDetector(thresh=0.0)
    d = TextDetector(thresh=0.25, box_thresh=0.35)
    assert (d.thresh, d.box_thresh, d.limit_side_len) == (
        0.25,
        0.35,
        736,
    )  # plain attributes: hashable settings


@pytest.mark.slow
def test_real_text_detector_finds_faint_small_print_that_ocr_cannot_read(render):
    """PP-OCRv5 det (shipped weights) at a low threshold boxes the text; boxes land on the print."""
    from perception.detect import TextDetector

    drawn = render({"MAX 250": (40, 40, 28), "psi": (420, 380, 11)})
    boxes = TextDetector().detect(drawn.image)
    assert boxes and all(p.source is ProposalSource.UNREAD_TEXT and 0 < p.score <= 1 for p in boxes)
    for text, where in drawn.boxes.items():
        assert any(
            b.bbox.iou(where) > 0.3
            or (b.bbox.x0 <= where.center[0] <= b.bbox.x1 and b.bbox.y0 <= where.center[1] <= b.bbox.y1)
            for b in boxes
        ), text
    assert TextDetector().detect(Image.new("RGB", (200, 200), "white")) == []
