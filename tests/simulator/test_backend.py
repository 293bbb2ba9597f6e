"""The simulated backbone: beliefs, vision, structured output, determinism, configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from ledgermind.errors import ConfigError
from ledgermind.prompts import schemas
from ledgermind.prompts.templates import DECIDE, DIRECT, DUAL_READ, LEDGER_TITLE, OBSERVE, REASON
from ledgermind.simulator.faults import FaultRates, rates_from_config
from tests.simulator.conftest import FakeOCR, replies, request

Q = "Which mission does the plaque in <image 1> commemorate?"
OPTS = (
    "Options:\nA. Apollo 13\nB. Apollo 11\nC. Gemini 4\nD. Vostok 1\nAnswer with the option letter (A/B/C/D)."
)


def direct(question: str = Q) -> str:
    return DIRECT.substitute(question=question, options=OPTS, granularity="one letter", ocr="- Apollo")


def reason_prompt(ledger: str = "OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque", warning: str = "") -> str:
    return REASON.substitute(
        method="m",
        granularity="g",
        warning=warning,
        evidence_title=LEDGER_TITLE,
        question=Q + "\n" + OPTS,
        ledger=ledger,
    )


def test_perfect_model_answers_gold_from_question_text(make_backend):
    sim = make_backend(faults="off")
    reply = sim.generate_sync(request(direct()))
    assert reply.text == "Answer: B"
    meta = reply.meta["simulator"]
    assert (meta["task"], meta["item"], meta["belief"], meta["faults"]) == ("answer", "mcq1", "key", [])


def test_belief_is_the_recorded_answers_not_the_key(make_backend):
    """mcq1's "real model" said A three times and B once (gold B): over seeds the first answer is A
    about (3 + 0.5/4) / 4.5 = 69 % of the time, B 25 %, and the item index holds no gold."""
    quiet = {
        "phantom_rate": 0.0,
        "relation_rate": 0.0,
        "format_error_rate": 0.0,
        "empty_rate": 0.0,
        "evidence_pull": 0.0,
    }
    answers = [make_backend(seed=s, **quiet).generate_sync(request(direct())).text for s in range(300)]
    share = {x: answers.count(f"Answer: {x}") / len(answers) for x in "ABCD"}
    assert abs(share["A"] - 3.125 / 4.5) < 0.08 and abs(share["B"] - 1.125 / 4.5) < 0.08
    sim = make_backend()
    assert all(e.key_gold is None for e in sim.index.entries) and sim.belief_source == "recorded"
    assert sim.belief(sim.index.entries[1]).source == "recorded:4"


def test_an_item_without_recorded_answers_is_uninformed_not_keyed(make_backend):
    sim = make_backend(recorded={})
    assert sim.belief(sim.index.entries[0]).source == "uniform"
    answers = {make_backend(seed=s, recorded={}).generate_sync(request(direct())).text for s in range(40)}
    assert len(answers) >= 3  # spread over the options, gold not favoured by construction


def test_unknown_question_gets_a_generic_answer(make_backend):
    reply = make_backend(faults="off").generate_sync(request(direct("What colour is the sky on Mars?")))
    assert reply.meta["simulator"]["item"] is None and "Answer: " not in reply.text


def test_image_decides_between_items_with_the_same_question(make_backend, key_items):
    """Gauges share a question text; the attached image file identifies the item."""
    sim = make_backend(faults="off")
    text = DIRECT.substitute(
        question=key_items[2].question, options="", granularity="a number", ocr="(nothing)"
    )
    assert sim.generate_sync(request(text, [key_items[2].images[0]])).text == "Answer: 36.5"
    assert sim.index.lookup("no question here", [key_items[2].images[0]]).item_id == "gauge1"
    assert (
        sim.index.lookup("no question here", [key_items[0].images[0]]) is None
    )  # two items share that image


def test_vision_sees_only_attached_images_and_caches_by_pixels(make_backend, key_items, tmp_path):
    ocr = FakeOCR(["Apollo 11 Plaque", "1969"])
    sim = make_backend(faults="off", ocr=ocr, cache=tmp_path / "vis")
    obs = OBSERVE.substitute(max_oc=5, question=Q, plan="p", categories="TEXT: t\nNUMBER: n\nOBJECT: o")
    blind = sim.generate_sync(request(obs))
    assert "Apollo 11 Plaque" not in blind.text and ocr.runs == 0
    seen = sim.generate_sync(request(obs, [key_items[0].images[0]]))
    assert "[OC-1] TEXT | Apollo 11 Plaque" in seen.text and "[OC-2] NUMBER | 1969" in seen.text
    assert "OBJECT" not in seen.text  # only what OCR reads: no answer enters evidence
    same_pixels = Image.open(key_items[0].images[0]).convert("RGB")
    sim.generate_sync(request(obs + " ", [same_pixels]))
    assert ocr.runs == 1  # a PIL copy with the same pixels hits the cache
    other = make_backend(faults="off", ocr=(ocr2 := FakeOCR()), cache=tmp_path / "vis")
    other.generate_sync(request(obs, [key_items[0].images[0]]))
    assert ocr2.runs == 0  # disk cache across backends


def test_structured_output_follows_the_schema(make_backend):
    sim = make_backend(faults="off")
    claims = json.loads(sim.generate_sync(request(reason_prompt(), schema=schemas.CLAIMS)).text)
    assert [c["stage"] for c in claims["claims"]] == ["E", "I", "J"]
    assert claims["claims"][0]["cites"] == ["OC-1"] and "B. Apollo 11" in claims["claims"][2]["text"]
    decide = DECIDE.substitute(
        question=Q,
        options=OPTS,
        granularity="g",
        evidence_title=LEDGER_TITLE,
        ledger="OC-1 | PERCEPTION TEXT | 0.92 | x",
        claims="(none)",
    )
    assert json.loads(sim.generate_sync(request(decide, schema=schemas.DECISION)).text)["answer"] == "B"


def test_format_fault_breaks_the_schema_and_is_recorded(make_backend):
    sim = make_backend(faults="on", format_error_rate=1.0, empty_rate=0.0)
    reply = sim.generate_sync(request(reason_prompt(), schema=schemas.CLAIMS))
    with pytest.raises(json.JSONDecodeError):
        json.loads(reply.text)
    assert reply.meta["simulator"]["faults"] == [{"kind": "format"}]
    empty = make_backend(faults="on", empty_rate=1.0).generate_sync(request(direct()))
    assert empty.text == "" and empty.meta["simulator"]["faults"] == [{"kind": "empty"}]


def _decide_text(sigma: float, i: int) -> str:
    claims = (
        f"[SC-3][J] According to X, the answer is C. Gemini 4 | Based on: [OC-1] | confidence {sigma:.2f}"
    )
    return DECIDE.substitute(
        question=Q,
        options=OPTS,
        granularity="g",
        evidence_title=LEDGER_TITLE,
        ledger=f"OC-1 | PERCEPTION TEXT | 0.92 | x {i}",
        claims=claims,
    )


def follow_share(sim, sigma: float, n: int = 300) -> float:
    answered = replies(sim, (request(_decide_text(sigma, i)) for i in range(n)))
    return sum(r.text.startswith("Answer: C") for r in answered) / n


def test_decision_follows_a_shown_judgment_at_one_rate_whatever_its_printed_confidence(make_backend):
    """The decision echoes the latest shown judgment with ``follow_rate``: the same at σ 0.10 as at
    0.95 (a printed, demoted σ is not a signal the simulated model reads), else its own belief (A)."""
    quiet = {"phantom_rate": 0.0, "relation_rate": 0.0, "format_error_rate": 0.0, "empty_rate": 0.0}
    sim = make_backend(follow_rate=0.6, rephrase_sensitivity=1.0, **quiet)
    low, high = follow_share(sim, 0.10), follow_share(sim, 0.95)
    assert abs(low - high) < 0.1
    # own belief gives C with weight 0.125/4.5; following adds 0.6 of the rest
    expected = 0.6 + 0.4 * (0.125 / 4.5)
    assert abs(low - expected) < 0.1 and abs(high - expected) < 0.1
    assert (
        follow_share(make_backend(seed=2, follow_rate=0.0, **quiet), 0.95, n=60) < 0.15
    )  # seed 2 believes A


def _gauge_crop(key_items):
    src = Image.open(key_items[2].images[0]).convert("RGB")
    crop = src.crop((20, 15, 140, 115))
    return crop.resize((crop.width * 5 // 2, crop.height * 5 // 2))


@pytest.mark.slow
def test_a_gauge_crop_is_read_through_the_noise_of_what_it_shows(make_backend, key_items):
    """The needle is perceived, not looked up: with no noise the reading is the scene's value; with
    scale labels legible in the crop the error is a few graduations (Laplace, both signs, some
    just inside and some just outside any tolerance); with none legible it spreads over the dial."""
    exact = make_backend(faults="off", ocr=FakeOCR(["20", "40"]))
    assert exact.generate_sync(request(DUAL_READ.substitute(), [_gauge_crop(key_items)])).text == "36.5"

    def errors(lines: list[str]) -> list[float]:
        out = []
        for seed in range(200):
            sim = make_backend(
                seed=seed, ocr=FakeOCR(lines), gross_error_rate=0.0, empty_rate=0.0, format_error_rate=0.0
            )
            out.append(
                float(sim.generate_sync(request(DUAL_READ.substitute(), [_gauge_crop(key_items)])).text)
                - 36.5
            )
        return out

    anchored, loose = errors(["20", "40 psi"]), errors(["psi"])
    mad = lambda xs: sorted(abs(x) for x in xs)[len(xs) // 2]  # noqa: E731
    assert 0.3 < mad(anchored) < 2.0  # read_noise 0.6 graduations of 2: median |error| ≈ 0.83
    assert mad(loose) > 5 * mad(anchored)  # unanchored: 0.15 of the span of 100
    assert min(anchored) < 0 < max(anchored)  # both signs
    near = [abs(x) / 36.5 for x in anchored]
    assert any(0.10 < r <= 0.15 for r in near + [abs(x) / 36.5 for x in loose])  # some just inside δ_read ...
    assert any(0.15 < r < 0.25 for r in [abs(x) / 36.5 for x in loose])  # ... and some just outside


def test_an_unknown_crop_is_read_from_what_is_legible(make_backend):
    sim = make_backend(faults="off", ocr=FakeOCR(["12.5 bar"]))
    noise = Image.effect_noise((240, 200), 80).convert("RGB")
    assert sim.generate_sync(request(DUAL_READ.substitute(), [noise])).text == "12.5"  # reads what is written


def test_stage_label_is_never_used(make_backend):
    a = make_backend(seed=3).generate_sync(request(reason_prompt(), stage="reason"))
    b = make_backend(seed=3).generate_sync(request(reason_prompt(), stage="something_else"))
    assert a.text == b.text and a.meta == b.meta


def test_determinism_for_a_seed_and_other_draws_for_another(make_backend):
    prompts = [reason_prompt(f"OC-{i} | PERCEPTION TEXT | 0.92 | fact {i}") for i in range(1, 60)]

    def run(seed: int) -> list[str]:
        return [r.text for r in replies(make_backend(seed=seed), (request(p) for p in prompts))]

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_greedy_determinism_an_identical_request_gets_the_identical_reply(make_backend, key_items):
    """At temperature 0 the reply is a function of the request: two readings of the same crop with
    the same prompt agree, whatever the stage. Only a changed request (or, when sampling, a
    different sampling seed) draws anew."""
    from ledgermind.backends.base import GenerationRequest, Message

    sim = make_backend(
        read_noise=2.0, empty_rate=0.0, format_error_rate=0.0, phantom_rate=0.5, relation_rate=0.3
    )
    img = key_items[2].images[0]
    for i in range(30):
        twice = [
            sim.generate_sync(request(DUAL_READ.substitute() + " " * i, [img], stage=f"dual_read_{k}"))
            for k in (0, 1)
        ]
        assert twice[0].text == twice[1].text and twice[0].meta == twice[1].meta
        r = request(reason_prompt(f"OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque {i}"))
        assert sim.generate_sync(r).text == sim.generate_sync(r).text
    readings = {sim.generate_sync(request(DUAL_READ.substitute() + " " * i, [img])).text for i in range(30)}
    assert len(readings) > 1  # a changed request is a new draw

    def sampled(temperature: float, seed: int) -> list[str]:
        msgs = [Message("user", [img, DUAL_READ.substitute()])]
        return [
            sim.generate_sync(
                GenerationRequest(msgs, temperature=temperature, seed=seed, max_tokens=64 + i)
            ).text
            for i in range(20)
        ]

    assert sampled(0.0, 1) == sampled(0.0, 2)  # greedy decoding ignores the sampling seed
    assert sampled(0.7, 1) == sampled(0.7, 1) and sampled(0.7, 1) != sampled(0.7, 2)


def test_faults_off_is_a_perfect_model():
    from ledgermind.simulator.faults import FAULT_RATES

    r = rates_from_config("off", p_correct=0.3, phantom_rate=0.9, read_noise=3.0)
    assert r.p_correct == 1.0 and r.phantom_rate == 0 and r.read_noise == 0 and r.empty_rate == 0
    assert all(getattr(r, name) == 0 for name in FAULT_RATES)
    assert rates_from_config(False) == FaultRates().off()  # YAML may read `off` as a boolean


@pytest.mark.parametrize(
    "kwargs",
    [
        {"faults": "maybe"},
        {"faults": "on", "phantom_rate": 1.5},
        {"faults": "on", "speed": 1.0},
        {"faults": "on", "zoom_precision": 0.0},
        {"faults": "on", "read_noise": -1.0},
        {"faults": "on", "fault_coupling": 2.0},
    ],
)
def test_bad_configuration_is_one_clear_error(kwargs):
    with pytest.raises(ConfigError):
        rates_from_config(**kwargs)


def test_an_unknown_belief_source_is_one_clear_error(make_backend):
    with pytest.raises(ConfigError, match="belief_source"):
        make_backend(belief_source="oracle")


def _compose(*overrides: str):
    from pathlib import Path

    from hydra import compose, initialize_config_dir

    conf = Path(__file__).resolve().parents[2] / "conf"
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        return compose(
            "config", overrides=["backend=simulated", "benchmark=sample", "output_dir=/tmp/x", *overrides]
        )


@pytest.mark.parametrize("faults", ["on", "off"])
def test_config_group_option_instantiates(faults, tmp_path):
    """conf/backend/simulated.yaml through Hydra: answer key from the run's benchmark, seed from the run."""
    from ledgermind.backends.build import build_backend
    from ledgermind.simulator.backend import SimulatedBackend

    cfg = _compose(
        f"backend.faults={faults}", "seed=11", "backend.banner=false", f"backend.vision_cache_dir={tmp_path}"
    )
    sim = build_backend(cfg.backend, cfg.model)
    while not isinstance(sim, SimulatedBackend) and hasattr(sim, "inner"):  # the image-budget wrapper
        sim = sim.inner
    assert isinstance(sim, SimulatedBackend) and sim.seed == 11 and len(sim.index) > 0
    assert (sim.rates.p_correct == 1.0 and sim.rates.phantom_rate == 0.0) is (faults == "off")
    assert sim.rates.phantom_rate == (0.0 if faults == "off" else cfg.backend.phantom_rate)


def test_vision_reuses_the_agents_ocr_from_the_perception_cache(key_items, tmp_path):
    """The agent OCRs an item's images first; the simulator's eyes read them from the same cache."""
    from ledgermind.simulator.vision import Vision
    from perception.cache import with_cache
    from perception.image_io import ImagePolicy
    from perception.ocr import OCRLine, RapidOCREngine, make_line
    from perception.tools import OCRTool

    calls: list[int] = []

    class Engine(RapidOCREngine):  # real engine class and settings, recognition stubbed and counted
        def _recognize(self, image) -> list[OCRLine]:
            calls.append(1)
            return [make_line("Apollo 11 Plaque", [(0, 0), (50, 0), (50, 15), (0, 15)], 0.99)]

    agent_ocr = with_cache({"ocr": OCRTool(Engine(), ImagePolicy())}, str(tmp_path / "perc"))["ocr"]
    assert agent_ocr.invoke(image=key_items[0].images[0]).observations[0].text == "Apollo 11 Plaque"
    vision = Vision(Engine(), shared_cache=str(tmp_path / "perc"))
    assert vision.lines(key_items[0].images[0]) == ("Apollo 11 Plaque",)
    assert len(calls) == 1  # the simulator did not OCR the image again


def test_reflection_keeps_the_answer_it_holds_at_the_follow_rate(make_backend):
    """Free-form reflection is an ordinary request for an "Answer:" line: it echoes the answer its
    prompt holds at the one ``follow_rate`` (no rates of its own), and answers afresh otherwise."""
    from ledgermind.prompts.templates import REFLECT

    quiet = {
        "phantom_rate": 0.0,
        "relation_rate": 0.0,
        "empty_rate": 0,
        "format_error_rate": 0,
        "evidence_pull": 0.0,
    }
    held = REFLECT.substitute(problem="T5", question=Q, claims="(none)", answer="D, as someone said")
    assert make_backend(follow_rate=1.0, **quiet).generate_sync(request(held)).text == "Answer: D"
    fresh = REFLECT.substitute(problem="T5", question=Q, claims="(none)", answer="(none yet)")
    texts = {
        make_backend(seed=s, follow_rate=1.0, **quiet).generate_sync(request(fresh)).text for s in range(30)
    }
    assert "Answer: A" in texts  # no held answer: the belief (mostly A)


def test_short_option_text_is_found_as_a_whole_word(key_items):
    """A perfect model cites the observation naming its answer even when the option is 'RB'."""
    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.items import ItemIndex

    key = ItemIndex(
        [Item("s", "Which label marks the lesion in <image 1>?", [], ["LA", "RB", "S"], "B", AnswerType.MCQ)]
    )
    e = key.entries[0]
    assert e.states("B", "OC-3 | PERCEPTION OBJECT | 0.92 | RB") and not e.states("B", "HERB garden")
    assert e.states("C", "label S here") and not e.states("C", "Sagittal")


def test_picture_option_is_found_where_evidence_names_its_image():
    """MMMU-Pro 'Select the correct tuning of Cello' has options <image 1>..<image 4> and no text:
    the evidence for option C is an observation that names image 3, and a perfect model cites it
    (before, it cited whatever came first, and its correct decision was left unsupported)."""
    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.items import ItemIndex

    key = ItemIndex(
        [
            Item(
                "m",
                "Select the correct tuning of Cello.",
                [],
                ["<image 2>", "<image 1>", "<image 3>"],
                "C",
                AnswerType.MCQ,
            )
        ]
    )
    e = key.entries[0]
    assert e.states("C", "OC-3 | PERCEPTION OBJECT | 0.92 | <image 3>")
    assert e.states("C", "a staff in <Image3>")
    assert not e.states("C", "OC-3 | PERCEPTION OBJECT | 0.92 | <image 2>")
    assert not e.states("C", "Image 3: tuning C G D A")  # the label of an attached image is not a statement
    assert not e.states("A", "<image 12>")


def test_crop_locator_finds_a_crop_of_a_phone_photo_stored_rotated(tmp_path):
    """Perception applies EXIF orientation before cropping, so the locator must match against the
    upright image too (a phone photo of a gauge is often stored turned by 90°)."""
    from PIL import Image, ImageDraw, ImageOps

    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.items import CropLocator, ItemIndex

    upright = Image.new("RGB", (300, 200), "white")
    d = ImageDraw.Draw(upright)
    for i in range(12):
        d.line([(20 + 22 * i, 30), (20 + 22 * i, 60 + 9 * (i % 4))], fill="black", width=3)
    d.ellipse([120, 80, 260, 190], outline="blue", width=5)
    d.text((40, 120), "PSI 36", fill="black")
    stored = upright.transpose(Image.Transpose.ROTATE_90)  # pixels stored turned; EXIF 6 turns them back
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path / "phone.jpg"
    stored.save(path, exif=exif, quality=95)
    with Image.open(path) as im:
        seen = ImageOps.exif_transpose(im).convert("RGB")
    crop = seen.crop((100, 60, 280, 195)).resize((450, 338))  # a 2.5x zoom of the dial, as crop-zoom makes
    key = ItemIndex(
        [Item("g1", "What is the reading of the gauge in <image 1>?", [path], None, "36", AnswerType.NUMERIC)]
    )
    found = CropLocator(key).locate(crop)
    assert found is not None and found.item_id == "g1"


def test_crop_locator_finds_a_crop_of_a_transparent_png(tmp_path):
    """Perception composites transparency onto white before cropping (gauge test2.png is RGBA), so
    the locator must match against that same image, not the colour hidden under alpha 0."""
    import numpy as np
    from PIL import Image, ImageDraw

    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.items import CropLocator, ItemIndex
    from perception.image_io import load_image

    rgba = Image.new("RGBA", (320, 320), (0, 0, 0, 0))  # transparent black: white once composited
    d = ImageDraw.Draw(rgba)
    d.ellipse([20, 20, 300, 300], outline=(0, 0, 0, 255), width=6)
    for i in range(11):
        d.line([(60 + 20 * i, 80), (60 + 20 * i, 110 + 7 * (i % 3))], fill=(0, 0, 0, 255), width=3)
    d.polygon([(160, 160), (70, 250), (80, 260)], fill=(200, 0, 0, 255))
    path = tmp_path / "dial.png"
    rgba.save(path)
    seen = load_image(path).image
    assert np.asarray(seen.convert("L"))[5, 5] == 255  # background white, as the agent's crop shows it
    crop = seen.crop((0, 120, 160, 300)).resize((400, 450))  # a 2.5x zoom of the lower-left quadrant
    key = ItemIndex(
        [Item("g2", "What is the reading of the gauge in <image 1>?", [path], None, "0", AnswerType.NUMERIC)]
    )
    found = CropLocator(key).locate(crop)
    assert found is not None and found.item_id == "g2"


def test_crop_locator_finds_a_capped_zoom_of_a_large_photo(tmp_path):
    """Crop-zoom caps its output at 4096 px, so the centre zone of a 4032x3024 phone photo is
    zoomed by 2.34, not 2.5: the locator must search the scales the cap allows."""
    import numpy as np
    from PIL import Image, ImageDraw

    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.items import CropLocator, ItemIndex
    from perception.crop import BBox, crop_zoom, expand
    from perception.image_io import load_image

    rng = np.random.default_rng(0)
    small = Image.fromarray(rng.integers(120, 255, (96, 128), dtype=np.uint8)).convert("RGB")
    photo = small.resize((4032, 3024), Image.Resampling.BICUBIC)  # smooth texture, as a photo has
    d = ImageDraw.Draw(photo)
    d.ellipse([1000, 500, 3000, 2500], outline="black", width=40)
    for i in range(24):
        d.line([(1100 + 75 * i, 900), (1150 + 70 * i, 1300 + 30 * (i % 5))], fill="black", width=25)
    d.polygon([(2000, 1500), (1300, 2200), (1400, 2300)], fill="red")
    path = tmp_path / "phone.jpg"
    photo.save(path, quality=90)
    img = load_image(path).image
    w, h = img.size
    crop = crop_zoom(img, expand(BBox(w / 3, h / 3, 2 * w / 3, 2 * h / 3), 0.15, img.size))
    assert crop.scale < 2.4 and max(crop.image.size) == 4096  # the cap took effect
    key = ItemIndex(
        [Item("big", "What is the reading of the gauge in <image 1>?", [path], None, "3", AnswerType.NUMERIC)]
    )
    found = CropLocator(key).locate(crop.image)
    assert found is not None and found.item_id == "big"


def test_the_jobs_of_one_process_trace_a_crop_once(tmp_path, monkeypatch):
    """Each job of a sweep builds its own index and locator over the same benchmark: a crop one
    job traced is not matched again by the next, and the next gets its own index's entry."""
    from PIL import Image, ImageDraw

    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.items import CropLocator, ItemIndex

    photo = Image.new("RGB", (320, 240), "white")
    d = ImageDraw.Draw(photo)
    d.ellipse([40, 20, 280, 230], outline="black", width=6)
    for i in range(10):
        d.line([(70 + 20 * i, 60), (70 + 20 * i, 90 + 8 * (i % 3))], fill="black", width=3)
    path = tmp_path / "dial.png"
    photo.save(path)
    crop = photo.crop((60, 40, 260, 140)).resize((500, 250))
    items = [
        Item("d1", "What is the reading of the gauge in <image 1>?", [path], None, "1", AnswerType.NUMERIC)
    ]
    first, second = ItemIndex(items), ItemIndex(items, with_key=True)
    assert CropLocator(first).locate(crop) is first.entries[0]
    monkeypatch.setattr(CropLocator, "_match", lambda *_: pytest.fail("matched again"))
    assert CropLocator(second).locate(crop) is second.entries[0]
    with pytest.raises(pytest.fail.Exception):  # another threshold may decide otherwise: matched anew
        CropLocator(second, threshold=0.9).locate(crop)


def test_no_simulator_parameter_reads_an_agent_constant(tmp_path, key_items):
    """Changing the agent's σ_verify, β, δ_read and demotion values leaves the simulator's
    configuration and its replies to the same requests unchanged (the old simulator followed a
    shown [J] claim only at σ ≥ σ_verify)."""
    from omegaconf import OmegaConf

    from ledgermind.simulator.backend import SimulatedBackend
    from ledgermind.simulator.beliefs import RecordedAnswers
    from tests.simulator.conftest import RECORDED

    agent_knobs = (
        "pipeline.grounding.sigma_verify=0.9",
        "pipeline.grounding.beta=0.5",
        "pipeline.grounding.delta_read=0.4",
        "pipeline.grounding.demote_ecc=0.3",
        "pipeline.grounding.demote_uncited=0.2",
    )
    common = ("seed=4", "backend.banner=false", f"backend.vision_cache_dir={tmp_path}")
    base, moved = _compose(*common), _compose(*common, *agent_knobs)
    assert moved.pipeline.grounding.sigma_verify == 0.9
    assert OmegaConf.to_container(base.backend, resolve=True) == OmegaConf.to_container(
        moved.backend, resolve=True
    )
    raw = OmegaConf.to_yaml(
        OmegaConf.load(Path(__file__).resolve().parents[2] / "conf/backend/simulated.yaml")
    )
    assert "pipeline" not in raw.replace("ledgermind.simulator", "")  # no interpolation of an agent value

    def texts(cfg) -> list[str]:
        node = OmegaConf.to_container(cfg.backend, resolve=True)
        for k in ("_target_", "benchmark", "vision_ocr", "own_model", "recorded_answers"):
            node.pop(k)
        sim = SimulatedBackend(
            items=key_items, recorded=RecordedAnswers(RECORDED), vision_ocr=FakeOCR(), **node
        )
        prompts = [_decide_text(s / 20, i) for i, s in enumerate(range(6, 20))]
        prompts += [reason_prompt(f"OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque {i}") for i in range(20)]
        return [sim.generate_sync(request(p)).text for p in prompts]

    assert texts(base) == texts(moved)


def test_a_misattribution_names_what_the_evidence_names_not_a_models_own_reply():
    from ledgermind.simulator.replies import in_evidence_names

    facts = [
        "Answer: D",
        "I am not sure.",
        "Apollo 11 Plaque",
        "1969",
        "reading 36.5",
        "1. Observation targets: x",
        "Tranquility Base here",
    ]
    evidence = "\n".join(facts)
    assert in_evidence_names(facts, evidence) == ["Apollo 11 Plaque", "Tranquility Base here"]
    assert in_evidence_names(facts, "Apollo 11 Plaque") == ["Apollo 11 Plaque"]  # the prompt must state it
