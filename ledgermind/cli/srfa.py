"""S-RFA over a finished run: ``ledgermind srfa RUN_DIR [srfa.mode=ledger|judge|both] [model=… backend=…]``
(also ``python scripts/srfa.py``).

``--trust-config`` reloads a benchmark the run names by import path (only for runs you made yourself).
Writes ``RUN_DIR/srfa.jsonl`` (per item: ≤ 10 atomic claims with type, text, label and reason)
and ``RUN_DIR/srfa_metrics.json`` (Acc, UCR_reason, GDR, R4R, WDG, by difficulty; Cohen's κ in
``both`` mode). Exit codes: 0 done (items the run itself failed are counted as run errors, not
retried), 1 some item audits failed (rerun to retry), 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from ledgermind.cli.commands import one_line_errors
from ledgermind.confutil import container, to_plain
from ledgermind.errors import ConfigError, UserError, first_line, option
from ledgermind.experiment.wandb_logger import configured_logger
from ledgermind.srfa.checks import format_checks
from ledgermind.srfa.protocol import SrfaMode
from ledgermind.srfa.run import SRFA_FILE, SRFA_METRICS_FILE


def run_srfa(run_dir: Path, cfg: DictConfig, *, trust_config: bool = False) -> dict[str, Any]:
    """Audit one run directory as configured; returns the audit metrics (also written to disk)."""
    import asyncio

    from ledgermind.srfa.judge import Judge, JudgeDecoding
    from ledgermind.srfa.run import JUDGE_CACHE_FILE, SrfaSettings, load_run, run_items, srfa_run

    record = load_run(run_dir)
    a = cfg.srfa
    # a null key means the one home of that constant (SrfaSettings' default)
    given: dict[str, Any] = {}
    for key, cast, kind in (("gamma", float, "a number"), ("max_claims", int, "an integer")):
        if a[key] is not None:
            try:
                given[key] = cast(a[key])
            except (TypeError, ValueError):
                raise ConfigError(f"srfa.{key} must be {kind}, got {a[key]!r}") from None
    settings = SrfaSettings(option(SrfaMode, str(a.mode), "srfa.mode"), **given)
    items = run_items(run_dir, trusted=trust_config)
    cascade = evidence = None
    if SrfaMode.LEDGER in settings.modes:
        from ledgermind.grounding.cascade import build_cascade
        from ledgermind.srfa.run import EvidenceSource
        from perception.build import build_tools_cached

        # the cascade builds the alias table its config asks for; srfa.grounding takes pipeline.grounding's keys
        cascade = build_cascade(to_plain(cfg.srfa.get("grounding")))
        # the same on-disk perception cache as the runs: an item the run already OCR'd costs nothing
        evidence = EvidenceSource(build_tools_cached(to_plain(cfg.perception)))
    logger = configured_logger(cfg.get("logger"))
    logger.start(
        out_dir=Path(run_dir),
        config=container(cfg),
        name=f"srfa-{cfg.srfa.mode}-{Path(run_dir).name}",
        group=None,
        job_type="srfa",
    )

    async def go() -> dict[str, Any]:
        backend = judge = None
        if SrfaMode.JUDGE in settings.modes:
            from ledgermind.backends.build import build_backend

            cache_path = cfg.cache.path or str(run_dir / JUDGE_CACHE_FILE)
            backend = build_backend(
                cfg.backend, cfg.model, cache_mode=str(cfg.cache.mode), cache_path=cache_path
            )
            judge = Judge(
                backend,
                JudgeDecoding(float(a.judge.temperature), int(a.judge.max_tokens), int(a.judge.seed)),
                settings.max_claims,
            )
        try:
            return await srfa_run(
                record, settings, cascade=cascade, items=items, evidence=evidence, judge=judge
            )
        finally:
            if backend is not None:
                await backend.aclose()

    try:
        metrics = asyncio.run(go())
        logger.log_summary(metrics, [])
    finally:
        logger.finish()
    return metrics


CANNOT_JUDGE = (
    "S-RFA reads only the text the run's tools wrote (OCR lines, observations, search snippets), not the image: "
    "a claim about what the image shows that no tool wrote down is 'not checkable' and left out of every rate "
    "above, and a supported claim can still be wrong if the tool text is. These rates are S-RFA's own protocol, "
    "not comparable to the run's GDR / R4R in metrics.json."
)
# What each rate is, over what (Eqs. 7-10), for the console: the arrow says which way is better.
RATES = (
    ("UCR_reason", "claims", "share of reasoning and decision claims the tool text does not support (↓)"),
    ("GDR", "decisions", "share of decisions the tool text supports (↑)"),
    ("R4R", "right", "share of right answers whose decision is supported (↑)"),
    ("WDG", "wrong", "share of wrong answers whose decision is supported anyway (↓)"),
)


def _rate_ns(m: dict[str, Any]) -> dict[str, str]:
    """The n beside each rate: what it is a share of."""
    checkable = m.get("n_items_checkable") or {}
    outcome = m.get("by_outcome") or {}
    decided = {
        k: ((outcome.get(k) or {}).get("n_items_checkable") or {}).get("decision", 0)
        for k in ("correct", "wrong")
    }
    labels = m.get("text_labels") or {}
    checked = sum(v for c in labels.values() for k, v in c.items() if k != "not_checkable_from_text")
    claims = f"{checked} checkable claims" if labels else f"{m.get('n_claims', 0)} claims"
    return {
        "claims": f"{claims} of {checkable.get('claims', 0)} items",
        "decisions": f"{checkable.get('decision', 0)} items with a checkable decision",
        "right": f"{decided['correct']} right answers with a checkable decision",
        "wrong": f"{decided['wrong']} wrong answers with a checkable decision",
    }


def format_metrics(metrics: dict[str, Any]) -> str:
    """The console summary: what answered the run, each rate with its n and meaning, the claim counts,
    and what S-RFA cannot judge. Everything else (support labels, all-claims rates, by difficulty)
    is in srfa_metrics.json."""
    lines = [metrics["label"]] if metrics.get("label") else []
    for mode in ("ledger", "judge"):
        m = metrics.get(mode)
        if not m:
            continue
        lines.append(
            f"[{mode}] {m['n']} items audited ({m['audit_errors']} audit errors, {m['run_errors']} run errors), "
            f"{m.get('n_claims', 0)} claims, γ = {m['gamma']}"
        )
        ns = _rate_ns(m)
        lines.append(f"  {'Acc':<11}{_f(m['Acc'])}  n = {m['n']} items")
        lines += [
            f"  {name:<11}{_f(m[f'srfa.{name}'])}  {meaning}; n = {ns[over]}" for name, over, meaning in RATES
        ]
        for ctype, counts in sorted((m.get("text_labels") or {}).items()):
            lines.append(
                f"  {ctype} claims: {sum(counts.values())} = {counts.get('supported_by_tool_text', 0)} supported "
                f"+ {counts.get('unsupported_by_tool_text', 0)} unsupported + "
                f"{counts.get('not_checkable_from_text', 0)} not checkable by tool text"
            )
        if (m.get("markup_entities") or {}).get("n"):
            lines.append(f"  markup tokens labelled as entities: {m['markup_entities']['n']}")
    lines.extend(format_checks(metrics))  # the run's backend's own checks (registered by ``srfa_run``)
    if metrics.get("agreement"):
        ag = metrics["agreement"]
        k = "—" if ag["kappa"] is None else f"{ag['kappa']:.3f}"
        lines.append(f"[both] ledger vs judge labels on {ag['n']} claims: Cohen's κ = {k}")
    lines.append(f"what S-RFA cannot judge: {CANNOT_JUDGE}")
    return "\n".join(lines)


def _f(x: Any) -> str:
    return "    —" if x is None else f"{x:.3f}"


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="ledgermind srfa",
        description="Writes RUN_DIR/srfa.jsonl and RUN_DIR/srfa_metrics.json; a rerun retries the items whose "
        "audit failed (items the run itself failed are run errors, counted apart).",
    )
    p.add_argument("run_dir", type=Path, help="the finished run to audit")
    p.add_argument(
        "overrides",
        nargs="*",
        help="srfa.mode=ledger|judge|both, srfa.gamma=0.5, model=NAME backend=NAME ...",
    )
    p.add_argument(
        "--trust-config",
        action="store_true",
        help="reload a benchmark the run names by import path (only for runs you made yourself)",
    )
    args = p.parse_intermixed_args(argv)
    from hydra.errors import HydraException

    from ledgermind.pipeline.config import compose

    try:  # conf/srfa.yaml with the overrides
        cfg = compose(args.overrides, "srfa")
    except (HydraException, OmegaConfBaseException) as exc:
        raise UserError(first_line(exc)) from None
    try:
        metrics = run_srfa(args.run_dir, cfg, trust_config=args.trust_config)
    except OmegaConfBaseException as exc:  # a key the audit reads is missing or mistyped
        raise UserError(first_line(exc)) from None
    print(format_metrics(metrics))
    print(f"-> {args.run_dir / SRFA_FILE}, {args.run_dir / SRFA_METRICS_FILE}")
    errors = sum((metrics.get(m) or {}).get("audit_errors", 0) for m in ("ledger", "judge"))
    if errors:
        print(f"{errors} item audits failed; rerun the same command to retry them", file=sys.stderr)
        return 1
    return 0
