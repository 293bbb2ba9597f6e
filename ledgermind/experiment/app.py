"""From a composed Hydra config to a finished run: the glue behind ``scripts/run.py``.

Cheap checks come first (settings, data path) so a user mistake is reported in one line before
a model is loaded. Agent and scorer can be injected, which lets tests run fakes end to end.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from ledgermind import paper
from ledgermind.backends.cache import cache_path, sweep_dir
from ledgermind.backends.recorded import describe_backend
from ledgermind.benchmarks.item import Item
from ledgermind.confutil import container, to_plain
from ledgermind.errors import ConfigError, DataError, UserError
from ledgermind.experiment import components
from ledgermind.experiment.artefact_label import label_for
from ledgermind.experiment.components import AgentFactory
from ledgermind.experiment.item_filter import requested_ids, select_items
from ledgermind.experiment.model_preflight import refuse_large_model_on_cpu, refuse_unreachable_weights
from ledgermind.experiment.run_log import log_to
from ledgermind.experiment.runner import RunOptions, Scorer, identity_for, run_items
from ledgermind.experiment.sigterm_loop import run_stoppable
from ledgermind.experiment.wandb_logger import ExperimentLogger, configured_logger
from ledgermind.metrics import summarize as trajectory_summary
from ledgermind.pipeline.config import PipelineConfig, ablation_flags, build
from ledgermind.runs.claim import ResumeMode, claim, release_unstarted, resume_identity
from ledgermind.runs.items import load_items
from ledgermind.runs.provenance import run_provenance
from ledgermind.runs.reader import RunDir

log = logging.getLogger(__name__)

TINY_MODEL_BANNER = (
    "NOTE: model={name} is a tiny RANDOM-weight model for plumbing checks; its answers are meaningless. "
    "Select a real model with: model=qwen2_5_vl_7b backend=vllm_server backend.base_urls=[http://localhost:8000/v1]"
)


@dataclass(frozen=True)
class RunSettings:
    """The top-level keys of ``conf/config.yaml``, validated (Hydra configs here are untyped YAML)."""

    seed: int
    concurrency: int
    limit: int | None
    output_dir: Path
    progress: bool
    variant: str

    @classmethod
    def from_cfg(cls, cfg: DictConfig) -> RunSettings:
        seed = _int(cfg, "seed", minimum=0)
        concurrency = _int(cfg, "concurrency", minimum=1)
        limit = None if cfg.get("limit") is None else _int(cfg, "limit", minimum=0)
        out = cfg.get("output_dir")
        if not out:
            raise ConfigError("output_dir is empty; give a directory (an existing one resumes that run)")
        ablation = cfg.get("ablation")
        # a pipeline that is not the method names its own variant (pipeline=official: "official_cot"),
        # so its runs never pass for LedgerMind's "full" in Table 3
        default = str((cfg.get("pipeline") or {}).get("variant") or "full")
        variant = str(ablation.get("name", "custom")) if ablation is not None else default
        return cls(seed, concurrency, limit, Path(str(out)), bool(cfg.get("progress", True)), variant)


def _int(cfg: DictConfig, key: str, *, minimum: int) -> int:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{key} must be an integer >= {minimum}, got {value!r}")
    return value


def seed_everything(seed: int) -> None:
    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    if "torch" in sys.modules:  # never import torch just to seed it
        sys.modules["torch"].manual_seed(seed)


# ------------------------------------------------------------------------------ resolution
# A config read back from a run folder is data: whoever made the folder chose its dotted paths.
# Without ``trusted`` only registered benchmarks are loaded and only registered scorers called.


def load_selected_items(cfg: DictConfig, limit: int | None) -> list[Item]:
    """The benchmark's items, narrowed to ``item_ids`` / ``item_ids_file`` when given, then ``limit``."""
    ids = requested_ids(cfg)
    if ids is None:
        items = load_items(cfg, limit)
    else:
        items = select_items(load_items(cfg, None), ids, benchmark_identity(cfg))[:limit]
    if not items and limit != 0:  # an empty file or a filter that keeps nothing: "0 of 0 scored" says nothing
        path = cfg.benchmark.get("path")
        where = f" from {path}" if path else ""
        raise DataError(
            f"benchmark '{benchmark_identity(cfg)}' gave no items{where}: check the file and item_ids"
        )
    return items


def agent_factory_path(cfg: DictConfig) -> str:
    """A pipeline option may name its own agent (``pipeline=official``); else the top-level key."""
    pipeline = cfg.get("pipeline") or {}
    return str(pipeline.get("agent_factory") or cfg.get("agent_factory", "ledgermind"))


def configured_agent_factory(cfg: DictConfig) -> AgentFactory:
    """The agent factory the config names, from the registry (``experiment/components.py``)."""
    return components.resolve(components.AGENT_FACTORIES, agent_factory_path(cfg))


def configured_scorer(cfg: DictConfig, *, trusted: bool = True) -> Scorer:
    """The ``scorer`` the config names, built with its ``scoring`` node (``experiment/components.py``).

    ``trusted=False`` (a run folder's config): only the project's registered scorers."""
    node = cfg.get("scoring") or {}
    return components.scorer(str(cfg.get("scorer", "ledgermind")), to_plain(node) or {}, trusted=trusted)


def benchmark_identity(cfg: DictConfig) -> str:
    b = cfg.benchmark
    name = str(b.get("name", "custom"))
    return f"{name}/{b.setting}" if b.get("setting") else name


def backend_identity(cfg: DictConfig) -> str:
    target = cfg.backend.get("_target_") or cfg.backend.get("name", "unknown")
    return str(target).rsplit(".", 1)[-1]


def adopt_backend_model(cfg: DictConfig) -> None:
    """A backend that is its own model (``backend.own_model``: the simulated backbone) replaces the
    composed ``model`` node, so the run is recorded, named, budgeted and cached as that model
    whatever ``model=`` said."""
    from ledgermind.backends.build import OWN_MODEL_KEY

    own = cfg.get("backend", {}).get(OWN_MODEL_KEY)
    if own is not None:
        with open_dict(cfg):
            cfg.model = OmegaConf.create(to_plain(own))


# ------------------------------------------------------------------------------ the run
def run_experiment(
    cfg: DictConfig,
    *,
    agent_factory: AgentFactory | None = None,
    scorer: Scorer | None = None,
) -> dict[str, Any]:
    """Run the configured experiment and return its ``metrics.json`` content."""
    for name in ("httpx", "httpcore"):  # one INFO line per request, thousands per run; warnings still show
        logging.getLogger(name).setLevel(logging.WARNING)
    check_schemas(cfg)
    adopt_backend_model(cfg)
    settings = RunSettings.from_cfg(cfg)
    refuse_large_model_on_cpu(cfg.model, cfg.backend)  # before any item or download
    refuse_unreachable_weights(cfg.model, cfg.backend)
    seed_everything(settings.seed)
    items = load_selected_items(cfg, settings.limit)
    factory = agent_factory or configured_agent_factory(cfg)
    scorer = scorer or configured_scorer(cfg)
    # replayed replies are not the tiny model's, and a backend with a disclaimer prints its own banner
    backend, model = backend_identity(cfg), str(cfg.model.get("name"))
    if label_for({"backend": backend, "model": model}).kind == "TINY MODEL":
        print(TINY_MODEL_BANNER.format(name=cfg.model.get("name")), file=sys.stderr, flush=True)

    identity = identity_for(
        items,
        model=model,
        backend=backend,
        benchmark=benchmark_identity(cfg),
        variant=settings.variant,
        seed=settings.seed,
        provenance=run_provenance(plain := container(cfg)),
    )
    mode = ResumeMode.parse(cfg.get("resume"))
    out_dir, lock = claim(
        settings.output_dir,
        resume_identity(identity.to_dict(), plain),
        mode,
        hydra_files(cfg),
        [it.id for it in items],
    )
    log_file = log_to(out_dir)
    try:
        try:
            return _run_claimed(cfg, items, factory, identity, scorer, _moved(cfg, settings, out_dir))
        finally:
            logging.getLogger().removeHandler(log_file)
            log_file.close()
            lock.release()
    except UserError:  # a preflight refusal (dead server, ...) before any item ran: leave no run behind
        release_unstarted(out_dir)
        raise


def check_schemas(cfg: DictConfig) -> None:
    """Refuse an unknown or mistyped pipeline or ablation key before anything is claimed (``+key=``
    opens a node to any key, so Hydra's struct mode alone lets ``+pipeline.zom=8`` through), and
    drop the variant's ``table`` node: how Table 3 shows a row is not what the run computes."""
    if agent_factory_path(cfg) == "ledgermind":
        build(PipelineConfig, to_plain(cfg.get("pipeline")), "pipeline")
    if cfg.get("ablation") is not None:
        ablation_flags(to_plain(cfg.ablation))
        with open_dict(cfg):
            cfg.ablation.pop("table", None)


def hydra_files(cfg: DictConfig) -> dict[str, str]:
    """The ``.hydra`` files of this run, from the config in memory (what Hydra itself would write:
    the task config unresolved, Hydra's own node, the task overrides); only ``config.yaml`` outside
    a Hydra app (tests calling ``run_experiment``)."""
    from hydra.core.hydra_config import HydraConfig

    files = {"config.yaml": OmegaConf.to_yaml(cfg)}
    if not HydraConfig.initialized():
        return files
    hc = HydraConfig.get()
    files["hydra.yaml"] = OmegaConf.to_yaml(OmegaConf.create({"hydra": hc}))
    files["overrides.yaml"] = OmegaConf.to_yaml(OmegaConf.create(list(hc.overrides.task)))
    return files


def _moved(cfg: DictConfig, settings: RunSettings, out_dir: Path) -> RunSettings:
    """``resume=new`` chose a fresh directory: every path derived from ``output_dir`` follows it."""
    if out_dir == settings.output_dir:
        return settings
    print(
        f"resume=new: {settings.output_dir} holds another experiment; writing to {out_dir}",
        file=sys.stderr,
        flush=True,
    )
    with open_dict(cfg):
        cfg.output_dir = str(out_dir)
    return dataclasses.replace(settings, output_dir=out_dir)


def _run_claimed(
    cfg: DictConfig,
    items: list[Item],
    factory: AgentFactory,
    identity: Any,
    scorer: Scorer,
    settings: RunSettings,
) -> dict[str, Any]:
    """The run proper, in a directory this process holds (``runs.claim.claim``)."""
    from ledgermind.backends.build import build_backend

    gamma = float(cfg.get("pipeline", {}).get("gamma", paper.GAMMA))
    options = RunOptions(settings.output_dir, settings.concurrency, gamma, settings.progress)
    started: list[ExperimentLogger] = []  # the logger starts once the backend passed its preflight
    cache = cfg.get("cache") or {}
    mode, out = cache.get("mode", "off"), str(settings.output_dir)
    name, backend_cfg = str(cfg.model.get("name")), to_plain(cfg.backend)
    path = cache_path(cache, out, name, backend_cfg) if mode != "off" else None
    origin = str(Path(out).resolve())  # the rows this run writes: a hit on another run's row is "shared"

    async def run() -> dict[str, Any]:
        backend = build_backend(cfg.backend, cfg.model, cache_mode=mode, cache_path=path, cache_origin=origin)
        try:
            await backend.preflight()  # a dead server is one clear line (exit 2) before any item runs
            backend.expect_items(items)  # every job of a sweep places them alike
            agent = factory(cfg, backend)
            started.append(_start_logger(cfg, settings, identity.to_dict()))
            return await run_items(
                items,
                agent,
                identity=identity,
                options=options,
                scorer=scorer,
                summarize=trajectory_summary,
                logger=started[0],
            )
        finally:
            await backend.aclose()

    try:
        metrics = run_stoppable(run())  # SIGTERM stops it as Ctrl-C does, between tasks
        ids = {i.id for i in items}
        results = [r for r in RunDir(settings.output_dir).results() if r.id in ids]
        started[0].log_summary(metrics, results, item_details(settings.output_dir, items))
    finally:
        for logger in started:
            logger.finish()
    return metrics


def item_details(out_dir: Path, items: list[Item]) -> dict[str, dict[str, Any]]:
    """``id -> {question, options, image, reply}`` for the W&B items table (the reply lives in the trajectory)."""
    details: dict[str, dict[str, Any]] = {
        it.id: {
            "question": it.question or str(it.meta.get("original_question", "")),
            "options": "\n".join(
                f"{letter}. {text}" for letter, text in zip(it.option_letters, it.options or [])
            ),
            "image": it.images[0] if it.images else None,
            "reply": "",
        }
        for it in items
    }
    for t in RunDir(out_dir).trajectories(list(details)):
        if t.get("item_id") in details:
            details[t["item_id"]]["reply"] = str(t.get("raw_answer") or "")
    return details


def _start_logger(cfg: DictConfig, settings: RunSettings, identity: dict[str, Any]) -> ExperimentLogger:
    logger = configured_logger(cfg.get("logger"))
    model = str(cfg.model.get("name"))
    simulated = list(describe_backend(backend_identity(cfg)).tags)
    logger.start(
        out_dir=settings.output_dir,
        config={**container(cfg), "identity": identity},
        name=f"{settings.variant}-{model}",
        # a multirun's jobs group by its sweep directory, whatever their benchmark; logger.group wins when set
        group=str(sweep_dir() or benchmark_identity(cfg)),
        job_type="eval",
        tags=[
            f"variant:{settings.variant}",
            f"model:{model}",
            f"benchmark:{benchmark_identity(cfg)}",
            *simulated,
        ],
    )
    return logger
