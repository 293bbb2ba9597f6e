"""The runs of a Table 3: each one read back (``load_run``), and whether they may be pooled.

Runs that differ in model, benchmark, item contents or protocol are refused, a variant twice or a
missing seed too: a Δ between such runs would measure the data or the set-up, not the ablated
component. ``table3.py`` builds the rows from runs that passed these checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledgermind.errors import UserError
from ledgermind.experiment.variants import row_order
from ledgermind.runs.files import METRICS_FILE, RESULTS_FILE
from ledgermind.runs.provenance import PROTOCOL_FIELDS, protocol_mismatch, sha256_json, shared_protocol_lines
from ledgermind.runs.reader import RunDir
from ledgermind.runs.summary import RunIdentity, items_hash

COLUMNS = ("Easy", "Medium", "Hard", "Overall")
MUST_MATCH = ("model", "benchmark", "items_sha256")


class Table3Error(UserError):
    """The given runs cannot form one table (missing, unfinished, or not comparable)."""


@dataclass(frozen=True)
class RunScores:
    """One finished run: its identity and, per item, its score (``None``: the item errored)."""

    run_dir: Path
    identity: RunIdentity
    scores: dict[str, float | None]  # column -> accuracy in percent over scored items; None if none
    n: dict[str, int]  # column -> scored items
    mechanisms: dict[str, Any] = field(default_factory=dict)  # metrics.json["mechanisms"] (the census)
    item_scores: dict[str, float | None] = field(default_factory=dict)
    difficulty: dict[str, str | None] = field(default_factory=dict)

    @property
    def variant(self) -> str:
        return self.identity.variant

    @property
    def seed(self) -> int:
        return self.identity.seed

    @property
    def errors(self) -> int:
        return sum(1 for v in self.item_scores.values() if v is None)


# ---------------------------------------------------------------------------------- collection
def load_run(run_dir: Path) -> RunScores:
    run = RunDir(run_dir)
    metrics = run.metrics()
    if metrics is None:
        raise Table3Error(
            f"{run_dir} has no {METRICS_FILE}: the run did not finish (start it again to resume)"
        )
    identity = RunIdentity.from_dict(metrics["identity"])
    results = run.results()
    if (
        items_hash(r.item_sha256 or r.id for r in results) != identity.items_sha256
    ):  # content (ids: older runs)
        raise Table3Error(
            f"{run_dir}: {RESULTS_FILE} holds {len(results)} items but {METRICS_FILE} was written for "
            f"{identity.n_items}; finish or resume the run before building Table 3"
        )
    item_scores = {r.id: (None if r.error is not None else r.score) for r in results}
    difficulty = {r.id: r.difficulty for r in results}
    scores, n = column_scores([(item_scores, difficulty)])
    return RunScores(
        run.path, identity, scores, n, dict(metrics.get("mechanisms") or {}), item_scores, difficulty
    )


def column_scores(
    runs: Sequence[tuple[dict[str, float | None], dict[str, str | None]]],
) -> tuple[dict[str, float | None], dict[str, int]]:
    """Accuracy (percent) per column, pooled over the given runs' scored items (errored ones left out)."""
    scores: dict[str, float | None] = {}
    n: dict[str, int] = {}
    for col in COLUMNS:
        sel = [
            s
            for item_scores, difficulty in runs
            for item_id, s in item_scores.items()
            if s is not None and (col == "Overall" or difficulty.get(item_id) == col)
        ]
        n[col] = len(sel)
        scores[col] = 100.0 * sum(sel) / len(sel) if sel else None
    return scores, n


def check_comparable(runs: Sequence[RunScores], *, allow_mixed: bool = False) -> None:
    if not allow_mixed:
        _check_protocol(runs)
    _check_grid(runs)


def _protocol_identity(r: RunScores) -> dict[str, Any]:
    """The identity with the decoding seed removed: seeds are a dimension of the table, not a mismatch."""
    ident = r.identity.to_dict()
    if isinstance(ident.get("decoding"), dict):
        ident["decoding"] = {k: v for k, v in ident["decoding"].items() if k != "seed"}
    return ident


def _check_protocol(runs: Sequence[RunScores]) -> None:
    for field_name in MUST_MATCH:
        values = {getattr(r.identity, field_name) for r in runs}
        if len(values) > 1:
            detail = "; ".join(f"{r.run_dir}: {_short(getattr(r.identity, field_name))}" for r in runs)
            what = "item sets" if field_name == "items_sha256" else f"{field_name}s"
            raise Table3Error(f"refusing to mix runs with different {what}: {detail}")
    mismatch = protocol_mismatch([(str(r.run_dir), _protocol_identity(r)) for r in runs])
    if mismatch:
        raise Table3Error(f"refusing to mix runs: {mismatch}")


def protocol_footer(runs: Sequence[RunScores]) -> str:
    """The shared protocol printed under the table (or which fields differ, with --allow-mixed)."""
    idents = [(str(r.run_dir), _protocol_identity(r)) for r in runs]
    seeds = ", ".join(str(s) for s in seeds_of(runs))
    mixed = [f for f in PROTOCOL_FIELDS if len({sha256_json(i.get(f)) for _, i in idents}) > 1]
    if mixed:
        return f"Protocol: MIXED (--allow-mixed); differing fields: {', '.join(mixed)}\nSeeds: {seeds}\n{escalation_line(runs)}\n"
    return "\n".join([*shared_protocol_lines(idents[0][1]), f"Seeds: {seeds}", escalation_line(runs)]) + "\n"


ESCALATION_DEVIATION = (
    "DEVIATION from App. D.5: at a Dual-Read disagreement a third reading of its own re-crop is taken and the "
    "reading closest to a number in P_oc is adopted; D.5 as written only sets sigma=0.65, which Alg. 1's "
    "sigma_verify=0.6 gate never escalates (pipeline.dual_read_escalate=false measures D.5 as written)"
)


def escalation_line(runs: Sequence[RunScores]) -> str:
    """The ``dual_read_escalate`` row of the protocol note: our deviation from App. D.5, and whether these
    runs had it on (read from each run's recorded ``.hydra/config.yaml``; the identity does not hold it)."""
    switch = {r.run_dir: _recorded_switch(r.run_dir, "dual_read_escalate") for r in runs}
    values = set(switch.values())
    if values == {False}:
        return "dual_read_escalate: off (App. D.5 / Alg. 1 as written: no third reading at a disagreement)"
    if values == {True}:
        state = "on"
    elif values == {None}:
        state = "not recorded (no .hydra/config.yaml; the default is on)"
    else:
        mixed = ", ".join(f"{r.variant}/seed {r.seed}: {switch[r.run_dir]}" for r in runs)
        state = f"MIXED across runs ({mixed})"
    return f"dual_read_escalate: {state} — {ESCALATION_DEVIATION}"


def _recorded_switch(run_dir: Path, key: str) -> bool | None:
    """``pipeline.<key>`` from a run's recorded config (unresolved), or None when not recorded."""
    from omegaconf import OmegaConf

    cfg = RunDir(run_dir).config()
    plain = OmegaConf.to_container(cfg, resolve=False) if cfg is not None else {}  # a run folder is data
    node = plain.get("pipeline") if isinstance(plain, dict) else None
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, bool) else None


def check_scored(runs: Sequence[RunScores]) -> None:
    """A table of dashes is not a result: refuse when no run scored a single item."""
    if any(s is not None for r in runs for s in r.item_scores.values()):
        return
    errored = sum(r.errors for r in runs)
    raise Table3Error(
        f"no item was scored in any of the {len(runs)} runs ({errored} errored results): nothing to tabulate; "
        "their errors are in each run's results.jsonl, and rerunning the same command retries them"
    )


def _check_grid(runs: Sequence[RunScores]) -> None:
    """Every variant ran every seed, once: a row pooled over other seeds than its reference is not paired."""
    seen: dict[tuple[str, int], Path] = {}
    for r in runs:
        if (r.variant, r.seed) in seen:
            raise Table3Error(
                f"variant {r.variant!r} appears twice (seed {r.seed}): {seen[r.variant, r.seed]} and {r.run_dir}"
            )
        seen[r.variant, r.seed] = r.run_dir
    every = seeds_of(runs)
    for variant, per_seed in group_by_variant(runs).items():
        if tuple(sorted(per_seed)) != every:
            missing = ", ".join(str(s) for s in every if s not in per_seed)
            raise Table3Error(
                f"variant {variant!r} has no run for seed {missing} (the runs cover seeds "
                f"{', '.join(map(str, every))}); run the missing seeds or leave the extra ones out"
            )


def seeds_of(runs: Sequence[RunScores]) -> tuple[int, ...]:
    return tuple(sorted({r.seed for r in runs}))


def group_by_variant(runs: Sequence[RunScores]) -> dict[str, dict[int, RunScores]]:
    """``variant -> seed -> run`` in Table 3's row order (identity fields only)."""
    out: dict[str, dict[int, RunScores]] = {}
    for r in in_variant_order(runs):
        out.setdefault(r.variant, {})[r.seed] = r
    return out


def _short(v: Any) -> str:
    s = str(v)
    return s[:12] if len(s) == 64 else s  # abbreviate hashes


def in_variant_order(runs: Sequence[RunScores]) -> list[RunScores]:
    """Table 3's row order (``conf/ablation``: full, the ablations as in the paper, baseline); unknown
    variants last."""
    order = row_order()
    return sorted(runs, key=lambda r: (order.get(r.variant, len(order)), r.variant, r.seed))
