"""The simulated backbone: answer key, vision, structured output, determinism, configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from ledgermind.errors import ConfigError
from ledgermind.prompts import schemas
from ledgermind.prompts.templates import DECIDE, DIRECT, DUAL_READ, LEDGER_TITLE, OBSERVE, REASON
from ledgermind.simulator.faults import FaultRates, rates_from_config

from tests.simulator.conftest import FakeOCR, request

Q = "Which mission does the plaque in <image 1> commemorate?"
OPTS = "Options:\nA. Apollo 13\nB. Apollo 11\nC. Gemini 4\nD. Vostok 1\nAnswer with the option letter (A/B/C/D)."


def direct(question: str = Q) -> str:
    return DIRECT.substitute(question=question, options=OPTS, granularity="one letter", ocr="- Apollo")


def reason_prompt(ledger: str = "OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque", warning: str = "") -> str:
    return REASON.substitute(method="m", granularity="g", warning=warning, evidence_title=LEDGER_TITLE, question=Q + "\n" + OPTS, ledger=ledger)


def test_perfect_model_answers_gold_from_question_text(make_backend):
    sim = make_backend(faults="off")
    reply = sim.generate_sync(request(direct()))
    assert reply.text == "Answer: B"
    assert reply.meta["simulator"] == {"task": "direct", "item": "mcq1", "faults": []}


def test_unknown_question_gets_a_generic_answer(make_backend):
    reply = make_backend(faults="off").generate_sync(request(direct("What colour is the sky on Mars?")))
    assert reply.meta["simulator"]["item"] is None and "Answer: " not in reply.text


def test_image_decides_between_items_with_the_same_question(make_backend, key_items):
    """Gauges share a question text; the attached image file identifies the item."""
    sim = make_backend(faults="off")
    text = DIRECT.substitute(question=key_items[2].question, options="", granularity="a number", ocr="(nothing)")
    assert sim.generate_sync(request(text, [key_items[2].images[0]])).text == "Answer: 36.5"
    assert sim.lookup("no question here", [key_items[2].images[0]]).item_id == "gauge1"
    assert sim.lookup("no question here", [key_items[0].images[0]]) is None  # two items share that image


def test_vision_sees_only_attached_images_and_caches_by_pixels(make_backend, key_items, tmp_path):
    ocr = FakeOCR(["Apollo 11 Plaque", "1969"])
    sim = make_backend(faults="off", ocr=ocr, cache=tmp_path / "vis")
    obs = OBSERVE.substitute(max_oc=5, question=Q, plan="p", categories="TEXT: t\nNUMBER: n\nOBJECT: o")
    blind = sim.generate_sync(request(obs))
    assert "Apollo 11 Plaque" not in blind.text and ocr.runs == 0
    seen = sim.generate_sync(request(obs, [key_items[0].images[0]]))
    assert "[OC-1] TEXT | Apollo 11 Plaque" in seen.text and "[OC-2] NUMBER | 1969" in seen.text
    assert "OBJECT" not in seen.text  # only what OCR reads: the answer key never enters evidence
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
    decide = DECIDE.substitute(question=Q, options=OPTS, granularity="g", evidence_title=LEDGER_TITLE, ledger="OC-1 | PERCEPTION TEXT | 0.92 | x",
                               claims="(none)")  # fmt: skip
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
    claims = f"[SC-3][J] According to X, the answer is C. Gemini 4 | Based on: [OC-1] | confidence {sigma:.2f}"
    return DECIDE.substitute(question=Q, options=OPTS, granularity="g", evidence_title=LEDGER_TITLE,
                             ledger=f"OC-1 | PERCEPTION TEXT | 0.92 | x {i}", claims=claims)  # fmt: skip


def follow_rate(sim, sigma: float, n: int = 300) -> float:
    return sum(sim.generate_sync(request(_decide_text(sigma, i))).text.startswith("Answer: C") for i in range(n)) / n


def test_decision_trust_in_a_shown_claim_is_smooth_in_its_confidence(make_backend):
    """The decision echoes the shown judgment with probability confidence ** follow_sharpness (the
    simulator's own smooth function): no step at the agent's σ_verify (0.6), and a demoted claim
    (0.50) is still followed sometimes. The perfect model otherwise decides gold (B)."""
    sim = make_backend(faults="off", follow_sharpness=2.0)
    below, above = follow_rate(sim, 0.58), follow_rate(sim, 0.62)
    assert abs(below - above) < 0.15  # the old simulator: 0.0 vs 1.0
    assert abs(follow_rate(sim, 0.5) - 0.25) < 0.1 and abs(follow_rate(sim, 0.95) - 0.9025) < 0.07
    assert follow_rate(make_backend(faults="off", follow_sharpness=0.0), 0.3, n=40) == 1.0  # always echoes


def test_reading_of_a_known_gauge_crop_and_an_unknown_crop(make_backend, key_items):
    sim = make_backend(faults="off", ocr=FakeOCR(["12.5 bar"]))
    src = Image.open(key_items[2].images[0]).convert("RGB")
    crop = src.crop((20, 15, 140, 115))
    crop = crop.resize((crop.width * 5 // 2, crop.height * 5 // 2))
    assert sim.generate_sync(request(DUAL_READ.substitute(), [crop])).text == "36.5"
    noise = Image.effect_noise((240, 200), 80).convert("RGB")
    assert sim.generate_sync(request(DUAL_READ.substitute(), [noise])).text == "12.5"  # reads what is written


def test_stage_label_is_never_used(make_backend):
    a = make_backend(seed=3).generate_sync(request(reason_prompt(), stage="reason"))
    b = make_backend(seed=3).generate_sync(request(reason_prompt(), stage="something_else"))
    assert a.text == b.text and a.meta == b.meta


def test_determinism_for_a_seed_and_other_draws_for_another(make_backend):
    prompts = [reason_prompt(f"OC-{i} | PERCEPTION TEXT | 0.92 | fact {i}") for i in range(1, 60)]

    def run(seed: int) -> list[str]:
        sim = make_backend(seed=seed)
        return [sim.generate_sync(request(p)).text for p in prompts]

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_greedy_determinism_an_identical_request_gets_the_identical_reply(make_backend, key_items):
    """At temperature 0 the reply is a function of the request: two readings of the same crop with
    the same prompt agree, whatever the stage. Only a changed request (or, when sampling, a
    different sampling seed) draws anew."""
    from ledgermind.backends.base import GenerationRequest, Message

    sim = make_backend(misread_rate=0.5, empty_rate=0.0, format_error_rate=0.0, phantom_rate=0.5, relation_rate=0.3)
    img = key_items[2].images[0]
    for i in range(30):
        twice = [sim.generate_sync(request(DUAL_READ.substitute() + " " * i, [img], stage=f"dual_read_{k}")) for k in (0, 1)]
        assert twice[0].text == twice[1].text and twice[0].meta == twice[1].meta
        r = request(reason_prompt(f"OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque {i}"))
        assert sim.generate_sync(r).text == sim.generate_sync(r).text
    readings = {sim.generate_sync(request(DUAL_READ.substitute() + " " * i, [img])).text for i in range(30)}
    assert len(readings) > 1  # a changed request is a new draw

    def sampled(temperature: float, seed: int) -> list[str]:
        msgs = [Message("user", [img, DUAL_READ.substitute()])]
        return [sim.generate_sync(GenerationRequest(msgs, temperature=temperature, seed=seed, max_tokens=64 + i)).text
                for i in range(20)]  # fmt: skip

    assert sampled(0.0, 1) == sampled(0.0, 2)  # greedy decoding ignores the sampling seed
    assert sampled(0.7, 1) == sampled(0.7, 1) and sampled(0.7, 1) != sampled(0.7, 2)


def test_faults_off_is_a_perfect_model():
    r = rates_from_config("off", p_correct=0.3, phantom_rate=0.9)
    assert r.p_correct == 1.0 and r.phantom_rate == 0 and r.misread_rate == 0 and r.empty_rate == 0
    assert r.format_error_rate == 0 and r.overthink_flip_rate == 0 and r.reflection_amplify_rate == 0
    from ledgermind.simulator.faults import FAULT_RATES

    assert all(getattr(r, name) == 0 for name in FAULT_RATES) and r.reflection_fix_rate == 0
    assert rates_from_config(False) == FaultRates().off()  # YAML may read `off` as a boolean


@pytest.mark.parametrize(
    "kwargs",
    [{"faults": "maybe"}, {"faults": "on", "phantom_rate": 1.5}, {"faults": "on", "speed": 1.0},
     {"faults": "on", "misread_min": 0.7, "misread_max": 0.2}],
)  # fmt: skip
def test_bad_configuration_is_one_clear_error(kwargs):
    with pytest.raises(ConfigError):
        rates_from_config(**kwargs)


def _compose(*overrides: str):
    from pathlib import Path

    from hydra import compose, initialize_config_dir

    conf = Path(__file__).resolve().parents[2] / "conf"
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        return compose("config", overrides=["backend=simulated", "benchmark=sample", "output_dir=/tmp/x", *overrides])


@pytest.mark.parametrize("faults", ["on", "off"])
def test_config_group_option_instantiates(faults, tmp_path):
    """conf/backend/simulated.yaml through Hydra: answer key from the run's benchmark, seed from the run."""
    from ledgermind.backends.build import build_backend
    from ledgermind.simulator.backend import SimulatedBackend

    cfg = _compose(f"backend.faults={faults}", "seed=11", "backend.banner=false", f"backend.vision_cache_dir={tmp_path}")
    sim = build_backend(cfg.backend, cfg.model)
    while not isinstance(sim, SimulatedBackend) and hasattr(sim, "inner"):  # the image-budget wrapper
        sim = sim.inner
    assert isinstance(sim, SimulatedBackend) and sim.seed == 11 and len(sim.key) > 0
    assert (sim.rates.p_correct == 1.0 and sim.rates.phantom_rate == 0.0) is (faults == "off")
    assert sim.rates.phantom_rate == (0.0 if faults == "off" else cfg.backend.phantom_rate)


def test_vision_reuses_the_agents_ocr_from_the_perception_cache(key_items, tmp_path):
    """The agent OCRs an item's images first; the simulator's eyes read them from the same cache."""
    from perception.cache import with_cache
    from perception.image_io import ImagePolicy
    from perception.ocr import OCRLine, RapidOCREngine, make_line
    from perception.tools import OCRTool

    from ledgermind.simulator.vision import Vision

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


def test_reflection_keeps_the_answer_it_has(make_backend):
    """F4: free-form reflection rewrites the reasoning around the answer; with its change rates at 0 it keeps it."""
    from ledgermind.prompts.templates import REFLECT

    sim = make_backend(p_correct=0.0, reflection_amplify_rate=0.0, reflection_fix_rate=0.0, empty_rate=0, format_error_rate=0)
    held = REFLECT.substitute(problem="T5", question=Q, claims="(none)", answer="C, as someone said")
    assert sim.generate_sync(request(held)).text.endswith("Answer: C")
    fresh = REFLECT.substitute(problem="T5", question=Q, claims="(none)", answer="(none yet)")
    assert not sim.generate_sync(request(fresh)).text.endswith("Answer: B")  # p_correct 0: a distractor


def test_reflection_on_an_answer_that_is_not_a_letter_re_answers_with_a_letter(make_backend):
    """A free-form current answer ("the first mission") on an MCQ item is not an option letter:
    the reflection answers the question again instead of crashing on it (seen in a real sweep)."""
    from ledgermind.prompts.templates import REFLECT

    sim = make_backend(p_correct=1.0, reflection_amplify_rate=0.0, reflection_break_rate=0.0, empty_rate=0, format_error_rate=0)
    long_answer = "the mission that first landed humans on the Moon, as the plaque says"
    reply = sim.generate_sync(request(REFLECT.substitute(problem="T5", question=Q, claims="(none)", answer=long_answer)))
    assert reply.text.endswith("Answer: B")


def test_short_option_text_is_found_as_a_whole_word(key_items):
    """A perfect model cites the observation naming its answer even when the option is 'RB'."""
    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.answer_key import AnswerKey

    key = AnswerKey([Item("s", "Which label marks the lesion in <image 1>?", [], ["LA", "RB", "S"], "B", AnswerType.MCQ)])
    e = key.entries[0]
    assert e.evidence_has("B", "OC-3 | PERCEPTION OBJECT | 0.92 | RB") and not e.evidence_has("B", "HERB garden")
    assert e.evidence_has("C", "label S here") and not e.evidence_has("C", "Sagittal")


def test_picture_option_is_found_where_evidence_names_its_image():
    """MMMU-Pro 'Select the correct tuning of Cello' has options <image 1>..<image 4> and no text:
    the evidence for option C is an observation that names image 3, and a perfect model cites it
    (before, it cited whatever came first, and its correct decision was left unsupported)."""
    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.answer_key import AnswerKey

    key = AnswerKey([Item("m", "Select the correct tuning of Cello.", [], ["<image 2>", "<image 1>", "<image 3>"], "C", AnswerType.MCQ)])
    e = key.entries[0]
    assert e.evidence_has("C", "OC-3 | PERCEPTION OBJECT | 0.92 | <image 3>")
    assert e.evidence_has("C", "a staff in <Image3>")
    assert not e.evidence_has("C", "OC-3 | PERCEPTION OBJECT | 0.92 | <image 2>")
    assert not e.evidence_has("C", "Image 3: tuning C G D A")  # the label of an attached image is not a statement
    assert not e.evidence_has("A", "<image 12>")


def test_crop_locator_finds_a_crop_of_a_phone_photo_stored_rotated(tmp_path):
    """Perception applies EXIF orientation before cropping, so the locator must match against the
    upright image too (a phone photo of a gauge is often stored turned by 90°)."""
    from PIL import Image, ImageDraw, ImageOps

    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.answer_key import AnswerKey, CropLocator

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
    key = AnswerKey([Item("g1", "What is the reading of the gauge in <image 1>?", [path], None, "36", AnswerType.NUMERIC)])
    found = CropLocator(key).locate(crop)
    assert found is not None and found.item_id == "g1"


def test_crop_locator_finds_a_crop_of_a_transparent_png(tmp_path):
    """Perception composites transparency onto white before cropping (gauge test2.png is RGBA), so
    the locator must match against that same image, not the colour hidden under alpha 0."""
    import numpy as np
    from PIL import Image, ImageDraw

    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.answer_key import AnswerKey, CropLocator
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
    key = AnswerKey([Item("g2", "What is the reading of the gauge in <image 1>?", [path], None, "0", AnswerType.NUMERIC)])
    found = CropLocator(key).locate(crop)
    assert found is not None and found.item_id == "g2"


def test_crop_locator_finds_a_capped_zoom_of_a_large_photo(tmp_path):
    """Crop-zoom caps its output at 4096 px, so the centre zone of a 4032x3024 phone photo is
    zoomed by 2.34, not 2.5: the locator must search the scales the cap allows."""
    import numpy as np
    from PIL import Image, ImageDraw

    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.simulator.answer_key import AnswerKey, CropLocator
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
    key = AnswerKey([Item("big", "What is the reading of the gauge in <image 1>?", [path], None, "3", AnswerType.NUMERIC)])
    found = CropLocator(key).locate(crop.image)
    assert found is not None and found.item_id == "big"


def test_no_simulator_parameter_reads_an_agent_constant(tmp_path, key_items):
    """Changing the agent's σ_verify, β, δ_read and demotion values leaves the simulator's
    configuration and its replies to the same requests unchanged (the old simulator followed a
    shown [J] claim only at σ ≥ σ_verify)."""
    from omegaconf import OmegaConf

    from ledgermind.simulator.answer_key import AnswerKey
    from ledgermind.simulator.backend import SimulatedBackend

    agent_knobs = ("pipeline.grounding.sigma_verify=0.9", "pipeline.grounding.beta=0.5",
                   "pipeline.grounding.delta_read=0.4", "pipeline.grounding.demote_ecc=0.3",
                   "pipeline.grounding.demote_uncited=0.2")  # fmt: skip
    common = ("seed=4", "backend.banner=false", f"backend.vision_cache_dir={tmp_path}")
    base, moved = _compose(*common), _compose(*common, *agent_knobs)
    assert moved.pipeline.grounding.sigma_verify == 0.9
    assert OmegaConf.to_container(base.backend, resolve=True) == OmegaConf.to_container(moved.backend, resolve=True)
    raw = OmegaConf.to_yaml(OmegaConf.load(Path(__file__).resolve().parents[2] / "conf/backend/simulated.yaml"))
    assert "pipeline" not in raw.replace("ledgermind.simulator", "")  # no interpolation of an agent value

    def replies(cfg) -> list[str]:
        node = OmegaConf.to_container(cfg.backend, resolve=True)
        node.pop("_target_"), node.pop("benchmark"), node.pop("vision_ocr")
        sim = SimulatedBackend(answer_key=AnswerKey(key_items), vision_ocr=FakeOCR(), **node)
        prompts = [_decide_text(s / 20, i) for i, s in enumerate(range(6, 20))]
        prompts += [reason_prompt(f"OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque {i}") for i in range(20)]
        return [sim.generate_sync(request(p)).text for p in prompts]

    assert replies(base) == replies(moved)


def test_a_misattribution_names_what_the_evidence_names_not_a_models_own_reply():
    from ledgermind.simulator.replies import in_evidence_names

    facts = ["Answer: D", "I am not sure.", "Apollo 11 Plaque", "1969", "reading 36.5", "1. Observation targets: x",
             "Tranquility Base here"]
    evidence = "\n".join(facts)
    assert in_evidence_names(facts, evidence) == ["Apollo 11 Plaque", "Tranquility Base here"]
    assert in_evidence_names(facts, "Apollo 11 Plaque") == ["Apollo 11 Plaque"]  # the prompt must state it
