"""``solve(item) -> Trajectory``: the dispatcher picks the path; every path writes one ledger."""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ledgermind.backends.base import Backend
from ledgermind.benchmarks.item import Item
from ledgermind.confutil import to_plain
from ledgermind.dispatch import AlphaChars, DispatchConfig, QuestionProfile, QuestionType, classify, profile
from ledgermind.errors import ConfigError
from ledgermind.grounding import GroundingCascade, GroundingConfig, build_cascade
from ledgermind.pipeline.baselines import run_native_cot, run_no_ledger
from ledgermind.pipeline.config import AblationFlags, PipelineConfig, ablation_flags, build
from ledgermind.pipeline.context import ItemContext
from ledgermind.pipeline.direct import run_direct
from ledgermind.pipeline.fullpipe import run_fullpipe
from ledgermind.pipeline.render import dispatch_options
from ledgermind.tools.base import Tool, ToolKind
from ledgermind.trajectory import PathKind, Trajectory

log = logging.getLogger(__name__)

PATHS: dict[PathKind, Callable[[ItemContext], Awaitable[None]]] = {
    PathKind.DIRECT: run_direct,
    PathKind.FULLPIPE: run_fullpipe,
    PathKind.BASELINE: run_native_cot,
    PathKind.NO_LEDGER: run_no_ledger,
}


def choose_path(prof: QuestionProfile, flags: AblationFlags) -> PathKind:
    """Eq. 6 with the ablation flags: baseline / no-ledger override, no_dispatcher → FULLPIPE."""
    if flags.baseline:
        return PathKind.BASELINE
    if not flags.use_ledger:
        return PathKind.NO_LEDGER
    if not flags.dispatcher or prof.is_complex:
        return PathKind.FULLPIPE
    return PathKind.DIRECT


def grounding_config(cfg: PipelineConfig, flags: AblationFlags) -> GroundingConfig:
    """``pipeline.grounding`` with the no_ecc ablation applied (ECC and NCC off)."""
    if flags.ecc_ncc:
        return cfg.grounding
    return replace(cfg.grounding, ecc_enabled=False, ncc_enabled=False)


class LedgerMindAgent:
    def __init__(
        self,
        backend: Backend,
        tools: Mapping[str, Tool],
        cascade: GroundingCascade,
        cfg: PipelineConfig | None = None,
        flags: AblationFlags | None = None,
    ) -> None:
        self.backend = backend
        self.tools = dict(tools)
        self.cfg = cfg or PipelineConfig()
        self.flags = flags or AblationFlags()
        self.cascade = cascade
        self.dispatch = DispatchConfig(alpha_chars=AlphaChars(self.cfg.dispatch_alpha_chars))

    async def solve(self, item: Item) -> Trajectory:
        t0 = time.perf_counter()
        prof = self.profile(item)
        path = choose_path(prof, self.flags)
        ctx = ItemContext(item, prof, path, self.backend, self.tools, self.cascade, self.cfg, self.flags)
        try:
            await PATHS[path](ctx)
        except Exception as exc:
            log.warning("item %s failed: %s", item.id, exc)
            ctx.traj.error = f"{type(exc).__name__}: {exc}"
            ctx.traj.notes.append(traceback.format_exc(limit=5))
            ctx.traj.answer = None
        finally:
            self.backend.item_done(item.id)  # a multi-server backend stops counting the item as active
        total, tool_s = time.perf_counter() - t0, ctx.evidence.tool_seconds()
        ctx.traj.timings = {
            "total_s": total,
            "model_s": ctx.model.model_s,
            "tool_s": tool_s,
            "own_s": max(0.0, total - ctx.model.model_s - tool_s),
        }
        return ctx.traj

    def expected_cost(self, item: Item) -> float:
        """A cheap estimate of how long an item's chain of model calls will be, from the path φ(q)
        and the ablation flags choose before any call: FULLPIPE (plan, OCs, crop-zoom, Dual-Read,
        reasoning, repairs) ≫ the one-transcript paths > DIRECT / native CoT. The runner starts
        expensive items first so that long chains do not straggle at the end of a run."""
        path = choose_path(self.profile(item), self.flags)
        return {PathKind.FULLPIPE: 2.0, PathKind.NO_LEDGER: 1.0}.get(path, 0.0)

    def pre_run_notice(self, items: Sequence[Item]) -> str | None:
        """One line before the run starts when knowledge questions have no knowledge source: there is
        no search provider and no corpus, so only perception evidence can support them (a T5 on such
        an item has nothing to ACQUIRE that states the fact)."""
        if any(t.kind is ToolKind.SEARCH for t in self.tools.values()):
            return None
        if not (n := sum(1 for it in items if QuestionType.KNOWLEDGE in self.profile(it).types)):
            return None
        return (
            f"{n} of {len(items)} items are knowledge questions with no knowledge source (no search provider: set "
            "SERPER_API_KEY or SERPAPI_API_KEY, or give search.corpus): they are answered from perception evidence "
            "only (metrics.json knowledge_without_source)"
        )

    def profile(self, item: Item) -> QuestionProfile:
        """Question types and F(q) see the options (an MCQ must end in one letter); φ(q) sees q."""
        prof = profile(item.question, dispatch_options(item), self.dispatch)
        if item.options and not self.cfg.dispatch_on_rendered_options:
            q_only = classify(item.question, None, self.dispatch)
            prof = replace(prof, complexity=q_only.complexity, reasons=q_only.reasons)
        return prof


def build_agent(cfg: Any, backend: Backend) -> LedgerMindAgent:
    """Build the agent from the composed Hydra config (``pipeline``, ``perception``, ``ablation``, ``search``)."""
    from perception.build import build_perception

    pcfg = build(PipelineConfig, to_plain(cfg.get("pipeline")), "pipeline")
    flags = ablation_flags(to_plain(cfg.get("ablation")))
    per = build_perception(to_plain(cfg.get("perception")))
    tools = per.tools
    search = build_search_tool(to_plain(cfg.get("search")))
    if search is not None:
        tools[search.name] = search
    # load spaCy now: a 3 s load inside the first item stalls every item in flight
    if flags.ecc_ncc and flags.use_ledger and not flags.baseline:
        per.ner.warm(["LedgerMind"])
    cascade = build_cascade(grounding_config(pcfg, flags), ner=per.ner, aliases=per.aliases)
    return LedgerMindAgent(backend, tools, cascade, pcfg, flags)


def build_search_tool(cfg: Mapping[str, Any] | None) -> Tool | None:
    """The knowledge-search tool (App. D.6) from the ``search`` node.

    ``provider``: ``auto`` (web search when SERPER_API_KEY / SERPAPI_API_KEY is set, else the local
    BM25 retriever over ``corpus`` if one is given, else none), ``web``, ``local`` or ``none``; the
    node's other keys are the web search's ``SearchConfig`` (an unknown one is refused, naming it).
    Without a search tool, knowledge questions are answered from perception evidence only and the
    trajectory notes it.
    """
    from ledgermind.tools.retriever import LocalRetrieverTool
    from ledgermind.tools.search import SearchConfig, WebSearchTool, web_search_available

    cfg = dict(cfg or {})
    provider = cfg.pop("provider", "auto")
    corpus = cfg.pop("corpus", None)
    if provider not in {"auto", "web", "local", "none"}:
        raise ConfigError(f"unknown search.provider {provider!r}: use auto, web, local or none")
    if provider == "none":
        return None
    if provider == "web" or (provider == "auto" and web_search_available()):
        return WebSearchTool(build(SearchConfig, cfg, "search"))
    if provider in {"local", "auto"} and corpus:
        return LocalRetrieverTool(corpus)
    if provider == "local":
        raise ConfigError("search.provider=local needs search.corpus (a JSONL file of title/text/url)")
    return None  # the run says so once, counting the items it affects (``pre_run_notice``)
