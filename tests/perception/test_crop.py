"""Nine-zone selection, crop/zoom geometry and RETRY's bbox perturbation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from ledgermind.errors import ConfigError
from ledgermind.tools.base import BBox
from perception.crop import (
    CropConfig,
    QuestionCues,
    crop_zoom,
    expand,
    format_metadata,
    parse_numbers,
    perturb_bbox,
    rank_zones,
    score_zones,
    select_zone_crop,
    text_gain,
    zone_boxes,
)
from perception.detect import ClassicalProposer, Proposal, ProposalSource
from perception.ocr import make_line


def text(box, label, conf=0.95):
    return Proposal(BBox(*box), ProposalSource.TEXT, conf, label)


def test_zone_boxes_tile_the_image_row_major():
    zones = zone_boxes(300, 90)
    assert len(zones) == 9
    assert zones[0].as_list() == [0, 0, 100, 30] and zones[4].as_list() == [100, 30, 200, 60]
    assert zones[8].as_list() == [200, 60, 300, 90]
    assert sum(z.area for z in zones) == 300 * 90


def test_question_cues():
    cues = QuestionCues.from_question("What is the pressure reading near 40 psi on the gauge?")
    assert {"pressure", "reading", "psi", "gauge"} <= cues.keywords and "the" not in cues.keywords
    assert cues.numbers == (40.0,) and cues.wants_number
    assert not QuestionCues.from_question("Who painted this portrait?").wants_number
    assert parse_numbers("range -0,5 to .25 and 1.5") == (-0.5, 0.25, 1.5)


def test_zone_with_the_question_target_wins_over_busier_zones():
    proposals = [
        text((10, 10, 60, 30), "ACME"),
        text((20, 40, 80, 60), "Model"),  # zone 0: two lines
        text((410, 420, 460, 440), "psi"),  # zone 8: the question's keyword
    ]
    cues = QuestionCues.from_question("Which unit is printed, psi or bar?")
    scores = score_zones((480, 480), proposals, cues)
    assert rank_zones(scores)[0] == 8
    assert scores[8] > scores[0] > 0 and scores[4] == 0


def test_number_in_question_beats_keywords():
    proposals = [text((10, 10, 60, 30), "gauge"), text((330, 170, 380, 190), "42.5")]
    scores = score_zones((480, 480), proposals, QuestionCues.from_question("Is the gauge at 42.5?"))
    assert rank_zones(scores)[0] == 5


def test_unreadable_text_weighs_more_than_legible_text():
    proposals = [text((10, 10, 60, 30), "80", conf=0.95), text((330, 330, 380, 350), "8O", conf=0.6)]
    scores = score_zones((480, 480), proposals, QuestionCues.from_question("What is the reading?"))
    assert rank_zones(scores)[0] == 8
    below = [text((10, 10, 60, 30), "80", conf=0.3)]
    assert sum(score_zones((480, 480), below, QuestionCues())) == 0


def test_proposal_spanning_two_zones_is_split_by_area():
    scores = score_zones((300, 300), [text((50, 10, 150, 30), "word")], QuestionCues())
    assert scores[0] == pytest.approx(scores[1]) and scores[0] > 0 and sum(scores[2:]) == 0


def test_no_evidence_and_ties_fall_back_to_the_centre():
    assert rank_zones([0.0] * 9)[0] == 4
    assert rank_zones([1.0, 0, 0, 0, 0, 0, 0, 0, 1.0])[0] == 0
    assert rank_zones([0, 1.0, 0, 0, 1.0, 0, 0, 0, 0])[0] == 4


def test_crop_zoom_scale_margin_and_mapping():
    img = Image.new("RGB", (300, 300), "white")
    region = expand(zone_boxes(300, 300)[4], 0.15, img.size)
    assert region.as_list() == [85, 85, 215, 215]  # 100-px zone + 15 px each side
    crop = crop_zoom(img, region)
    assert crop.image.size == (325, 325) and crop.scale == pytest.approx(2.5)
    assert crop.region.as_list() == [85, 85, 215, 215]
    corner = expand(zone_boxes(300, 300)[0], 0.15, img.size)
    assert corner.as_list() == [0, 0, 115, 115]  # margin clipped at the image border


def test_crop_zoom_caps_the_output_side():
    crop = crop_zoom(Image.new("RGB", (2000, 1000)), BBox(0, 0, 2000, 1000), CropConfig(max_output_side=1000))
    assert crop.image.size == (1000, 500) and crop.scale == pytest.approx(0.5)


def test_crop_zoom_outside_the_image_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        crop_zoom(Image.new("RGB", (100, 100)), BBox(200, 200, 300, 300))


def test_zoom_content_is_the_zone_content():
    img = Image.new("RGB", (300, 300), "white")
    img.paste((255, 0, 0), (100, 200, 200, 300))  # zone 7 is red
    crop = select_zone_crop(img, "what is red?", [text((120, 230, 180, 260), "red")], CropConfig(margin=0))
    assert crop.zone == 7 and crop.region.as_list() == [100, 200, 200, 300]
    assert crop.image.getpixel((crop.image.width // 2, crop.image.height // 2)) == (255, 0, 0)


def test_selection_is_deterministic_with_classical_proposals(render):
    drawn = render({"READ ME 12": (450, 380, 36), "x": (30, 30, 20)})
    props = ClassicalProposer().propose(drawn.image)
    a = select_zone_crop(drawn.image, "What is the reading?", props)
    b = select_zone_crop(drawn.image, "What is the reading?", ClassicalProposer().propose(drawn.image))
    assert a.zone == b.zone == 8 and a.region == b.region and a.image.tobytes() == b.image.tobytes()


def test_metadata_text():
    assert (
        format_metadata(4, BBox(10.2, 20, 30.7, 40), 2.5) == "crop zone 4 region [10, 20, 31, 40] scale 2.5"
    )
    assert format_metadata(None, BBox(0, 0, 5, 5), 2.5).startswith("crop bbox region [0, 0, 5, 5]")


def test_bad_crop_config():
    with pytest.raises(ConfigError):
        CropConfig(zoom=0)
    with pytest.raises(ConfigError):
        CropConfig(perturb_min_px=50, perturb_max_px=40)


boxes = st.tuples(st.integers(0, 600), st.integers(0, 400), st.integers(1, 300), st.integers(1, 300)).map(
    lambda t: BBox(t[0], t[1], min(t[0] + t[2], 640), min(t[1] + t[3], 480))
)


@settings(max_examples=200, deadline=None)
@given(box=boxes.filter(lambda b: b.width >= 1 and b.height >= 1), seed=st.integers(0, 10_000))
def test_perturbation_stays_inside_and_moves_edges_within_range(box, seed):
    out = perturb_bbox(box, (640, 480), seed)
    assert 0 <= out.x0 < out.x1 <= 640 and 0 <= out.y0 < out.y1 <= 480
    assert out == perturb_bbox(box, (640, 480), seed)  # deterministic
    for before, after, limit in zip(box.as_list(), out.as_list(), (640, 480, 640, 480)):
        # each edge moved by 15-40 px (±1 px from snapping to whole pixels) or stopped at the border
        assert after in (0, limit) or 14 <= abs(after - before) <= 41, (box, out)


def test_perturbation_differs_across_seeds_and_rescues_tiny_boxes():
    box = BBox(300, 200, 340, 230)
    assert len({perturb_bbox(box, (640, 480), s) for s in range(10)}) == 10
    tiny = BBox(0, 0, 3, 3)
    for s in range(20):
        out = perturb_bbox(tiny, (640, 480), s)
        assert out.width >= 2 and out.height >= 2


# ----------------------------------------------------------------------------- read check


def test_text_gain_counts_only_new_question_relevant_tokens():
    cues = QuestionCues.from_question("What is the reading of the gauge in psi?")
    cfg = CropConfig()
    assert text_gain(["40", "60 psi"], ["40"], cues, cfg) == pytest.approx((1 + 1.0) + (1 + 2.0))
    assert text_gain(["40"], ["40.0", "-40"], cues, cfg) == 0  # same number, sign-insensitive
    assert text_gain(["ACME"], [], QuestionCues(), cfg) == 1
    assert text_gain(["7"], [], QuestionCues.from_question("Is it 7?"), cfg) == 1 + cfg.number_bonus


class _PixelReader:
    """Reads a 'line' for each coloured square it sees: red → '40', blue → 'ACME' (driven by pixels only)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, image):
        self.calls += 1
        colours = {c for _, c in image.convert("RGB").getcolors(1 << 16) or []}
        square = [(0, 0), (10, 0), (10, 10), (0, 10)]
        return [
            make_line(t, square, 0.95)
            for c, t in (((255, 0, 0), "40"), ((0, 0, 255), "ACME"))
            if c in colours
        ]


def _two_marks():
    img = Image.new("RGB", (300, 300), "white")
    img.paste((0, 0, 255), (20, 20, 60, 40))  # zone 0: a word
    img.paste((255, 0, 0), (230, 230, 260, 250))  # zone 8: a number
    return img


def test_read_check_prefers_the_zone_whose_zoom_adds_a_number_on_reading_questions():
    img, reader = _two_marks(), _PixelReader()
    proposals = [text((20, 20, 60, 40), "ACME", conf=0.95)]  # proposals alone point at zone 0
    crop = select_zone_crop(img, "What is the reading?", proposals, CropConfig(margin=0), reader)
    assert crop.zone == 8 and reader.calls == 9 and dict(crop.zone_gains)[8] == 2.0
    assert select_zone_crop(img, "What is the reading?", proposals, CropConfig(margin=0)).zone == 0
    known = select_zone_crop(img, "What is the reading?", proposals, CropConfig(margin=0), reader, ["40"])
    assert known.zone == 0  # "40" was already read on the full image: zooming zone 8 adds nothing new


def test_read_check_reads_only_the_top_k_zones_and_keeps_proposal_order_on_ties():
    img, reader = _two_marks(), _PixelReader()
    proposals = [text((20, 20, 60, 40), "ACME", conf=0.95)]
    crop = select_zone_crop(
        img, "What is the reading?", proposals, CropConfig(margin=0, verify_top_k=2), reader
    )
    assert reader.calls == 2 and [z for z, _ in crop.zone_gains] == [0, 4]  # best by score, then the centre
    assert crop.zone == 0
    blank = Image.new("RGB", (300, 300), "white")
    assert select_zone_crop(blank, "What is the reading?", [], CropConfig(), _PixelReader()).zone == 4


def test_verify_top_k_is_validated():
    with pytest.raises(ConfigError):
        CropConfig(verify_top_k=10)
    with pytest.raises(ConfigError):
        CropConfig(verify_top_k=-1)


def test_unread_text_proposals_weigh_like_uncertain_text():
    unread = Proposal(BBox(330, 330, 380, 350), ProposalSource.UNREAD_TEXT, 0.4)
    scores = score_zones((480, 480), [text((10, 10, 60, 30), "ACME", conf=0.95), unread], QuestionCues())
    assert rank_zones(scores)[0] == 8 and scores[8] == pytest.approx(CropConfig().unread_text_weight)
    assert rank_zones(scores)[:2] == [8, 0]


def test_gain_per_area_lets_a_corner_zone_beat_an_equal_centre_gain():
    # one red square inside the centre zone's crop only, one inside the corner zone 8's crop only:
    # both zooms read one new number; the corner crop is smaller (the border cuts its margin)
    img = Image.new("RGB", (300, 300), "white")
    img.paste((255, 0, 0), (140, 140, 160, 160))
    img.paste((255, 0, 0), (265, 265, 285, 285))
    question = "What is the reading?"
    raw = select_zone_crop(img, question, [], CropConfig(margin=0.15), _PixelReader())
    per_area = select_zone_crop(
        img, question, [], CropConfig(margin=0.15, gain_per_area=True), _PixelReader()
    )
    assert raw.zone == 4 and dict(raw.zone_gains)[4] == dict(raw.zone_gains)[8]  # tie -> centre
    assert per_area.zone == 8 and dict(per_area.zone_gains)[8] > dict(per_area.zone_gains)[4]
