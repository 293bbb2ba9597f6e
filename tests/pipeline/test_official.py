"""The official MMMU-Pro protocol: prompt construction as the official inference code, one call, whole reply."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from ledgermind.backends.base import Backend, GenerationRequest, Reply
from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.errors import BackendError, ConfigError
from ledgermind.experiment.app import configured_scorer
from ledgermind.pipeline.official import OfficialAgent, OfficialConfig, build_official_agent, official_content
from ledgermind.trajectory import PathKind


class _Echo(Backend):
    """Replies with a fixed CoT text; fails when the request carries no image."""

    name = "echo"

    def __init__(self) -> None:
        self.seen: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> Reply:
        self.seen.append(request)
        if not request.messages[0].images():
            raise BackendError("HTTP 400: no image")
        return Reply(text="Option B is wrong.\nAnswer: C\nI am confident.", backend=self.name)


def _item(setting: str = "standard10", images: int = 2) -> Item:
    return Item(
        id="test_Art_1",
        question="Compare <image 1> with <image 2>. Which style?",
        images=[Path(f"/data/img{i}.png") for i in range(1, images + 1)],
        options=["Baroque", "Cubism <image 2>", "Impressionism"],
        answer="C",
        answer_type=AnswerType.MCQ,
        meta={"setting": setting},
    )


@pytest.fixture
def cfg(shared_data: Path) -> OfficialConfig:
    return OfficialConfig(prompts_path=shared_data / "mmmu_pro_official" / "prompts.yaml", prompt="cot")


def test_standard_prompt_is_the_official_construction(cfg: OfficialConfig) -> None:
    agent = OfficialAgent(_Echo(), cfg)
    content = official_content(_item(), agent.prompts)
    assert content[:2] == [Path("/data/img1.png"), Path("/data/img2.png")]
    assert content[2] == (
        "Compare <image> with <image>. Which style?\nA. Baroque\nB. Cubism <image>\nC. Impressionism\n"
        "Answer the preceding multiple choice question. The last line of your response should be of the following "
        "format: 'Answer: $LETTER' (without quotes) where LETTER is one of options. Think step by step before answering."
    )


def test_vision_prompt_is_the_page_and_the_vision_prompt_only(cfg: OfficialConfig) -> None:
    agent = OfficialAgent(_Echo(), OfficialConfig(cfg.prompts_path, "direct"))
    page = Item(
        "v",
        "",
        images=[Path("/p.png")],
        answer="A",
        answer_type=AnswerType.MCQ,
        meta={"setting": "vision", "options": ["x", "y"]},
    )
    assert official_content(page, agent.prompts) == [Path("/p.png"), agent.prompts["vision"]]
    assert "Answer with the option letter" in agent.prompts["vision"]


def test_the_whole_reply_is_the_answer_and_a_failed_call_is_recorded(cfg: OfficialConfig) -> None:
    backend = _Echo()
    traj = asyncio.run(OfficialAgent(backend, cfg).solve(_item()))
    assert traj.path is PathKind.OFFICIAL and traj.answer == "Option B is wrong.\nAnswer: C\nI am confident."
    assert backend.seen[0].item_id == "test_Art_1" and backend.seen[0].max_tokens == cfg.max_tokens
    assert traj.error is None and traj.model_calls[0].error is None and traj.n_tool_calls == 0

    failed = asyncio.run(OfficialAgent(_Echo(), cfg).solve(_item(images=0)))
    assert failed.answer is None and failed.model_calls[0].error == "HTTP 400: no image"


def test_config_errors_are_one_line(tmp_path: Path, cfg: OfficialConfig) -> None:
    pipeline = {"agent_factory": "official", "prompts_path": str(cfg.prompts_path), "max_tokens": "64"}
    agent = build_official_agent(OmegaConf.create({"pipeline": pipeline, "seed": 3}), _Echo())
    assert agent.cfg == OfficialConfig(cfg.prompts_path, "cot", max_tokens=64, seed=3)
    with pytest.raises(ConfigError, match="direct or cot"):
        build_official_agent(OmegaConf.create({"pipeline": pipeline | {"prompt": "fewshot"}}), _Echo())
    with pytest.raises(ConfigError, match="pipeline.prompts_path is required"):
        build_official_agent(OmegaConf.create({"pipeline": {"prompt": "direct"}}), _Echo())
    (tmp_path / "p.yaml").write_text("cot: {standard: x, vision: y}\ndirect: {standard: z}\n")
    with pytest.raises(ConfigError, match="lacks the direct/vision prompt"):
        OfficialAgent(_Echo(), OfficialConfig(tmp_path / "p.yaml"))


def test_random_fallback_seed_gives_a_letter_but_stays_unparsed() -> None:
    item = Item("i", "q", options=["a", "b", "c"], answer="B", answer_type=AnswerType.MCQ)
    plain = configured_scorer(OmegaConf.create({"scoring": {"random_fallback_seed": None}}))(item, "no idea")
    seeded = configured_scorer(OmegaConf.create({"scoring": {"random_fallback_seed": 7}}))
    assert plain.prediction is None and not plain.parsed
    first, second = seeded(item, "no idea"), seeded(item, "no idea")
    assert first.prediction in {"A", "B", "C"} and first.prediction == second.prediction and not first.parsed
    with pytest.raises(ConfigError, match="random_fallback_seed"):
        configured_scorer(OmegaConf.create({"scoring": {"random_fallback_seed": "yes"}}))


def test_a_ledgermind_vision_item_is_an_mcq_asking_for_a_letter(shared_data: Path, tmp_path: Path) -> None:
    """LedgerMind's own prompts for a vision page: where the question is, which letters, and F(q) = one letter."""
    from ledgermind.benchmarks import load_benchmark
    from ledgermind.dispatch import profile
    from ledgermind.dispatch.question_types import QuestionType
    from ledgermind.pipeline.render import dispatch_options, options_block

    (item,) = load_benchmark(
        "mmmu_pro",
        {
            "path": str(shared_data / "mmmu_pro_subset"),
            "setting": "vision",
            "limit": 1,
            "cache_dir": str(tmp_path),
        },
    )
    assert item.options is None and len(item.meta["options"]) == 10
    assert "lettered A to J, are shown in the image" in item.question and "letter" in item.question
    assert (
        options_block(item)
        == "Options: lettered A to J, shown in the image.\nAnswer with the option letter (A/B/C/D/E/F/G/H/I/J)."
    )
    prof = profile(item.question, dispatch_options(item))
    assert QuestionType.MCQ in prof.types
    assert "Reply with exactly one option letter (A/B/C/D/E/F/G/H/I/J)." in prof.granularity
    assert not any(opt in options_block(item) for opt in item.meta["options"])  # no option text leaks


def test_an_official_run_is_labelled_as_such_not_as_ledgermind_full(
    shared_data: Path, tmp_path: Path
) -> None:
    from hydra import compose, initialize_config_dir

    from ledgermind.experiment.app import RunSettings

    conf = Path(__file__).resolve().parents[2] / "conf"
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        cfg = compose(
            "config", overrides=["pipeline=official", "pipeline.prompt=direct", f"output_dir={tmp_path}"]
        )
        default = compose("config", overrides=[f"output_dir={tmp_path}"])
    assert RunSettings.from_cfg(cfg).variant == "official_direct"
    assert RunSettings.from_cfg(default).variant == "full"


def test_image_budget_changes_are_recorded_in_the_trajectory(cfg: OfficialConfig, tmp_path: Path) -> None:
    from PIL import Image

    from ledgermind.backends.budget import BudgetedBackend, ImageBudget

    item = _item()
    item.images = []
    for i in (1, 2):
        Image.new("RGB", (40, 30)).save(tmp_path / f"{i}.png")
        item.images.append(tmp_path / f"{i}.png")
    traj = asyncio.run(OfficialAgent(BudgetedBackend(_Echo(), ImageBudget(max_images=1)), cfg).solve(item))
    assert (
        traj.notes == ["image budget: tiled images 1-2 of 2 into one (max_images=1)"] and traj.error is None
    )


def test_the_official_call_is_recorded_as_every_agent_records_its_calls(cfg: OfficialConfig) -> None:
    """One recorder for every agent (pipeline/call_log.py): the official call carries the request
    key, its step of τ and the reply's meta, as the LedgerMind agent's calls do."""
    from ledgermind.backends.cache import request_key

    class _WithMeta(_Echo):
        async def generate(self, request: GenerationRequest) -> Reply:
            reply = await super().generate(request)
            reply.meta = {"image_budget": [], "server": "echo-1"}
            return reply

    backend = _WithMeta()
    agent = OfficialAgent(backend, cfg)
    call = asyncio.run(agent.solve(_item())).model_calls[0]
    assert call.step == 1 and {"image_budget": [], "server": "echo-1"}.items() <= call.meta.items()
    assert call.request_key == request_key(
        backend.seen[0], backend.model_id, ["", ""]
    )  # unreadable images: ""
