"""Reading simulated runs back: which mechanism took a correct answer, and the fault census per variant.

Why: with a perfect simulated model (``backend.faults=off``) every lost answer was destroyed by a
mechanism of the agent, and the issue asks that each be named. The attribution reads only the
trajectory record (events, marks, claims), in the order a reader would check it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.errors import DataError
from ledgermind.runs.files import METRICS_FILE
from ledgermind.runs.reader import RunDir
from ledgermind.runs.reader import find_runs as rundir_find_runs
from ledgermind.simulator.census import VERBS

# Marks whose mechanism rewrites ŷ after the decision (Alg. 2), latest first wins.
ANSWER_REWRITING_MARKS = {
    "NUMERIC_SNAP": "defense: numeric snap (Alg. 2 l.5-6)",
    "ENTITY_RECHECK": "defense: entity recheck (Alg. 2 l.2-3)",
    "VISUAL_FALLBACK": "defense: visual fallback (Alg. 2 l.8-9)",
}


@dataclass(frozen=True)
class Loss:
    variant: str
    item_id: str
    gold: str | None
    prediction: str | None
    abstained: bool
    mechanism: str


def attribute(traj: Mapping[str, Any]) -> str:
    """The mechanism that most plausibly took the answer (from the trajectory record alone)."""
    if traj.get("error"):
        return f"item error: {str(traj['error'])[:120]}"
    events = traj.get("events", [])
    if traj.get("abstained"):
        ab = next((e for e in reversed(events) if e.get("operator") == "ABSTAIN"), None)
        return f"ABSTAIN after {ab['trigger']}" if ab else "abstained"
    for m in reversed(traj.get("marks", [])):
        if m.get("kind") in ANSWER_REWRITING_MARKS:
            return f"{ANSWER_REWRITING_MARKS[m['kind']]} [{m.get('detail', '')[:80]}]"
    if any(e.get("operator") == "FREEFORM_REFLECTION" for e in events):
        return "free-form reflection rewrote the answer"
    claims = traj.get("ledger", {}).get("claims", [])
    if any(c.get("origin") == "repair" and c.get("status") == "ACTIVE" for c in claims):
        return "hypothesis verification / second reading (revised claim)"
    return f"decision as produced (raw answer {traj.get('raw_answer', '')[:60]!r})"


def _variant(metrics: Mapping[str, Any], run_dir: Path) -> str:
    return metrics.get("identity", {}).get("variant", run_dir.name)


def losses(run_dir: Path) -> list[Loss]:
    """Every item of the run that is not fully correct, with the mechanism that took it, by item id
    (``results.jsonl`` is in completion order, which concurrency makes differ between two runs;
    a retried item's last line wins)."""
    run = RunDir(run_dir)
    variant = _variant(run.metrics() or {}, run_dir)
    out = []
    for r in run.results():
        if r.score < 1.0:
            traj = run.trajectory(r.id) or {"error": r.error or "no trajectory"}
            out.append(
                Loss(variant, r.id, r.gold, r.prediction, bool(traj.get("abstained")), attribute(traj))
            )
    return sorted(out, key=lambda loss: loss.item_id)


def variant_summary(run_dir: Path) -> dict[str, Any]:
    """What the report prints of one run: its identity, accuracy and the simulator's census."""
    run = RunDir(run_dir)
    metrics = run.metrics() or {}
    sim = metrics.get("mechanisms", {}).get("simulator", {})
    return {
        "variant": _variant(metrics, run_dir),
        "benchmark": metrics.get("identity", {}).get("benchmark"),
        "n": len(run.results()),
        "accuracy": metrics.get("accuracy"),
        "abstention_rate": metrics.get("abstention_rate"),
        **{verb: sim.get(verb, {}) for verb in ("injected", *VERBS, "harmed")},
    }


STAYED_LEGEND = (
    "each fault row adds up: injected = neutral. + faded + stayed + REACHED (stayed: still in an active claim "
    "at the end, not in the answer); flagged counts the ones a check marked, whatever became of them"
)


CATCH_COLUMNS = {"injected": 9, "flagged": 9, "neutral.": 9, "faded": 7, "stayed": 8, "REACHED": 9}


def catch_table(s: Mapping[str, Any]) -> list[str]:
    """One row per catchable fault kind: injected, FLAGGED by a check, then where each injected fault
    ended — NEUTRALISED by a mechanism, faded on its own, stayed in an active claim, REACHED the final
    answer — so the four add up to injected; then the harm mechanisms did."""
    rows = [f"    {'fault':<14}" + "".join(f"{head:>{w}}" for head, w in CATCH_COLUMNS.items())]
    for kind in sorted(s["flagged"]):
        inj, flagged, neutral, faded, reached = (s[v].get(kind, 0) for v in ("injected", *VERBS))
        cells = (inj, flagged, neutral, faded, inj - neutral - faded - reached, reached)
        rows.append(f"    {kind:<14}" + "".join(f"{n:>{w}}" for n, w in zip(cells, CATCH_COLUMNS.values())))
    harmed = s.get("harmed") or {}
    rows.append(
        "    harmed by a mechanism: " + (", ".join(f"{k} {v}" for k, v in sorted(harmed.items())) or "none")
    )
    return rows


def injected_line(injected: Mapping[str, int], catchable: Iterable[str]) -> str:
    """The injected total and what it is made of, so it adds up to its parts: the catchable kinds the
    table below follows, and the kinds no check can catch (format, empty, suggested)."""
    kinds = set(catchable)
    parts = [
        ", ".join(f"{k} {n}" for k, n in sorted(injected.items()) if (k in kinds) == catch)
        for catch in (True, False)
    ]
    return f"faults injected={sum(injected.values())} (catchable: {parts[0] or 'none'}; other: {parts[1] or 'none'})"


def format_report(run_dirs: Sequence[Path]) -> str:
    """A plain-text report: per variant its accuracy, then every catchable fault kind flagged /
    neutralised / reached, the harm mechanisms did, then the items that lost their answer with the
    mechanism that took it."""
    lines: list[str] = [STAYED_LEGEND]
    all_losses: list[Loss] = []
    for d in run_dirs:
        s = variant_summary(d)
        lines.append(
            f"{s['variant']} / {s['benchmark']}: n={s['n']} acc={100 * (s['accuracy'] or 0):.1f}% "
            f"abstained={100 * (s['abstention_rate'] or 0):.1f}%  {injected_line(s['injected'], s['flagged'])}"
        )
        lines += catch_table(s) if s["flagged"] else ["    (no catchable fault recorded)"]
        all_losses += losses(d)
    lines.append(f"\nitems not fully correct: {len(all_losses)}")
    lines += [
        f"  {x.variant:<17} {x.item_id:<40} gold={x.gold} pred={x.prediction} abst={x.abstained}  <- {x.mechanism}"
        for x in all_losses
    ]
    return "\n".join(lines)


def find_runs(paths: Sequence[Path]) -> list[Path]:
    """The finished runs (those with a ``metrics.json``) at or below ``paths``; [] when there are none
    (the caller says so in one line)."""
    try:
        runs = rundir_find_runs(paths)
    except DataError:
        return []
    return [r for r in runs if (r / METRICS_FILE).exists()]
