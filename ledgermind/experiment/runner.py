"""Run an agent over benchmark items: bounded concurrency, per-item persistence, resume, metrics.

The runner knows nothing about Hydra; ``ledgermind.experiment.app`` turns a config into the
arguments below. Agent, scorer and metrics are injected so that tests (and users with their own
agents) can swap them without touching this module.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from ledgermind import paper
from ledgermind.benchmarks.item import Item
from ledgermind.errors import DataError
from ledgermind.experiment.failures import load_error, trajectory_error
from ledgermind.experiment.progress import Progress
from ledgermind.experiment.wandb_logger import ExperimentLogger
from ledgermind.metrics.census import trajectory_record
from ledgermind.runs.atomic import atomic_write_json
from ledgermind.runs.files import METRICS_FILE, RESULTS_FILE, note
from ledgermind.runs.provenance import observed_image_budget, request_totals
from ledgermind.runs.reader import RunDir
from ledgermind.runs.results import (
    ItemResult,
    ResultsWriter,
    WallClock,
    redo_damaged,
    repair_tail,
)
from ledgermind.runs.summary import RunIdentity, Summarize, build_metrics, items_hash
from ledgermind.trajectory import Trajectory

log = logging.getLogger(__name__)


class Agent(Protocol):
    async def solve(self, item: Item) -> Trajectory: ...


def start_order(items: Sequence[Item], agent: Any) -> list[Item]:
    """The order items enter the concurrency slots: longest expected chain first (LPT scheduling).

    With N items in flight the run ends when its last chain ends; a 12-call FULLPIPE item started
    last keeps the server at one request in flight for its whole chain. An agent that can estimate
    its cost (``expected_cost(item)``) gets its expensive items started first; ties keep the
    benchmark order, and an agent without an estimate runs in benchmark order. Results are keyed
    by id, so the order changes nothing but the wall time.
    """
    cost = getattr(agent, "expected_cost", None)
    return list(items) if cost is None else sorted(items, key=lambda it: -float(cost(it)))  # a stable sort


Scorer = Callable[[Item, str], Any]  # returns a ScoreResult-like object (prediction, correct, parsed)


@dataclass(frozen=True)
class ScoreView:
    """What the runner needs from a scorer's result, whatever its concrete class."""

    prediction: str | None
    score: float
    parsed: bool

    @classmethod
    def of(cls, res: Any) -> ScoreView:
        # ``correct`` may be a bool or a float in {0, 0.5, 1} (judge partial credit): keep its value.
        score = getattr(res, "score", None)
        return cls(
            prediction=getattr(res, "prediction", None),
            score=float(getattr(res, "correct", 0.0) if score is None else score),
            parsed=bool(getattr(res, "parsed", True)),
        )


UNSCORED = ScoreView(prediction=None, score=0.0, parsed=False)  # an item that failed


@dataclass
class RunOptions:
    out_dir: Path
    concurrency: int = 1
    gamma: float = paper.GAMMA  # decision-grounding threshold γ for R4R / WDG (Eqs. 9–10)
    progress: bool = True


def check_unique_ids(items: Sequence[Item]) -> None:
    """Resume keys on ids, so two items with one id would silently lose one of them."""
    if twice := [i for i, n in Counter(it.id for it in items).items() if n > 1]:
        raise DataError(f"duplicate item id {twice[0]!r} in the benchmark; ids must be unique")


def check_unchanged(finished: Sequence[ItemResult], items: dict[str, Item], out_dir: Path) -> None:
    """Refuse to keep a verdict given for other content: a finished item whose question, options,
    gold or images changed since it was solved (its line records ``item_sha256``; lines written
    before the field existed are trusted as they are)."""
    for r in finished:
        if r.item_sha256 is not None and r.item_sha256 != items[r.id].content_sha256():
            raise DataError(
                f"{out_dir / RESULTS_FILE}: item {r.id!r} changed since it was solved (its question, options, gold "
                "or images differ), so its verdict cannot be kept; run the changed data into another hydra.run.dir, "
                "or restore the data"
            )


def answer_text(traj: Trajectory) -> str:
    """The text the official parser scores: the normalised answer, or the raw decision text.

    An abstention (⊥) is scored as the empty string, i.e. unparsed and wrong.
    """
    if traj.answer is not None:
        return traj.answer
    return "" if traj.abstained else traj.raw_answer


def question_types(traj: Trajectory | None) -> list[str]:
    if traj is None:
        return []
    prof = traj.profile or {}
    # LedgerMind's agent records the dispatcher's question types under "types" (pipeline profile),
    # the official baseline under "question_types"
    return [str(getattr(t, "value", t)) for t in prof.get("types") or prof.get("question_types") or []]


async def score_text(scorer: Scorer, item: Item, text: str) -> ScoreView:
    """Score one answer text; shared by the run and by re-scoring (experiment/rescore.py)."""
    res = scorer(item, text)
    if inspect.isawaitable(res):  # a judge-model scorer is async
        res = await res
    return ScoreView.of(res)


async def solve_item(agent: Agent, scorer: Scorer, item: Item) -> tuple[ItemResult, Trajectory | None]:
    """Solve and score one item; any failure becomes an error result (the run goes on).

    An item that could not be loaded is not sent to the agent at all; an item whose trajectory
    records a failed model call or an unreadable image is an error too (``failures.py``): its
    reply is kept for the audit, but it is left out of accuracy and redone on resume.
    """
    t0 = time.perf_counter()
    traj: Trajectory | None = None
    view = UNSCORED
    if (error := load_error(item)) is None:
        try:
            traj = await agent.solve(item)
            view = await score_text(scorer, item, answer_text(traj))
            error = trajectory_error(traj)
        except Exception as exc:
            log.warning("item %s failed: %s: %s", item.id, type(exc).__name__, exc)
            view, error = UNSCORED, f"{type(exc).__name__}: {exc}"
    if error is not None:
        view = replace(UNSCORED, prediction=view.prediction)
    result = ItemResult(
        id=item.id,
        prediction=view.prediction,
        gold=item.answer,
        score=view.score,
        parsed=view.parsed,
        path=traj.path.value if traj is not None else None,
        difficulty=item.difficulty,
        question_types=question_types(traj),
        subject=item.meta.get("subject"),
        model_calls=traj.n_model_calls if traj else 0,
        tool_calls=traj.n_tool_calls if traj else 0,
        tokens=traj.tokens if traj else 0,
        latency_s=round(time.perf_counter() - t0, 4),
        error=error,
        item_sha256=item.content_sha256(),
        **request_totals(traj),
    )
    return result, traj


def _write(writer: ResultsWriter, result: ItemResult, traj: Trajectory | None) -> None:
    writer.write(result, trajectory_record(traj) if traj is not None else None)


async def run_items(
    items: Sequence[Item],
    agent: Agent,
    *,
    identity: RunIdentity,
    options: RunOptions,
    scorer: Scorer,
    summarize: Summarize | None,
    logger: ExperimentLogger | None = None,
) -> dict[str, Any]:
    """Solve every item not yet finished in ``results.jsonl``, then write and return ``metrics.json``.

    Finished means a result line without ``error``; errored items are solved again (their new
    line supersedes the old one), so rerunning the same command retries exactly the failures.
    """
    check_unique_ids(items)
    if options.concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    wanted = {it.id: it for it in items}
    # before counting: what is counted done is never cut later
    repair_tail(Path(options.out_dir) / RESULTS_FILE)
    redo_damaged(options.out_dir)
    previous = [r for r in RunDir(options.out_dir).results() if r.id in wanted and r.error is None]
    check_unchanged(previous, wanted, Path(options.out_dir))
    done = {r.id for r in previous}
    todo = [it for it in items if it.id not in done]
    if done:
        log.info("resuming in %s: %d done, %d to go", options.out_dir, len(done), len(todo))

    notice = getattr(agent, "pre_run_notice", None)  # e.g. knowledge questions with no knowledge source
    line = notice(items) if callable(notice) else None
    if line:
        print(line, file=sys.stderr, flush=True)
    clock = WallClock(options.out_dir)
    t0 = time.perf_counter()
    progress = Progress(len(items), previous, enabled=options.progress, desc=identity.variant)
    sem = asyncio.Semaphore(options.concurrency)

    async def bounded(item: Item) -> tuple[ItemResult, Trajectory | None]:
        async with sem:
            return await solve_item(agent, scorer, item)

    with ResultsWriter(options.out_dir) as writer:
        try:
            # tasks are created in start order and the semaphore is FIFO, so slots are taken in that order
            tasks = [asyncio.ensure_future(bounded(it)) for it in start_order(todo, agent)]
            for fut in asyncio.as_completed(tasks):
                result, traj = await fut
                # serialising and fsync-ing a trajectory in a thread: inline it would stall every item in flight
                await asyncio.to_thread(_write, writer, result, traj)
                clock.tick()
                progress.update(result)
                if logger is not None:
                    logger.log_item(result, progress.accuracy)
        finally:
            progress.close()
    clock.tick()
    wall_time_s = time.perf_counter() - t0
    # aggregate everything on disk for these items (this session's and resumed ones)
    order = {it.id: i for i, it in enumerate(items)}
    results = sorted(
        (r for r in RunDir(options.out_dir).results() if r.id in order), key=lambda r: order[r.id]
    )
    trajectories = list(read_trajectories(options.out_dir, [r.id for r in results]).values())
    identity = replace(
        identity, provenance={**identity.provenance, "image_budget_sent": observed_image_budget(trajectories)}
    )
    metrics = build_metrics(
        results,
        trajectories,
        identity,
        wall_time_s=wall_time_s,
        wall_time_total_s=clock.total_s,
        gamma=options.gamma,
        summarize=summarize,
    )
    atomic_write_json(options.out_dir, Path(options.out_dir) / METRICS_FILE, metrics)
    return metrics


def read_trajectories(out_dir: Path, ids: Sequence[str], *, strict: bool = False) -> dict[str, Trajectory]:
    """The trajectories of ``ids`` that can be read back, by id. A damaged one (truncated by a full
    disk, edited by hand) is a ``DataError`` when ``strict`` (re-scoring must not drop an item), else a
    one-line note and its item keeps its verdict, counted without its census — one bad file never
    stops a resume from finishing."""
    out: dict[str, Trajectory] = {}
    for d in RunDir(out_dir).trajectories(ids):
        try:
            out[str(d["item_id"])] = Trajectory.from_dict(d)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            what = f"{out_dir}: the trajectory of {d.get('item_id')!r} is not a trajectory record ({e})"
            if strict:
                raise DataError(what) from None
            note(f"{what}; item kept without it")
    return out


def identity_for(items: Sequence[Item], **fields: Any) -> RunIdentity:
    """The run's identity: ``fields`` (model, backend, benchmark, variant, seed, provenance) and the
    item set by content, not ids: an edited item is another set."""
    return RunIdentity(
        items_sha256=items_hash(it.content_sha256() for it in items), n_items=len(items), **fields
    )
