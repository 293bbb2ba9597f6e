"""S-RFA over a finished run: ``ledgermind srfa RUN_DIR [srfa.mode=ledger|judge|both] [model=… backend=…]``
(also ``python scripts/srfa.py``).

``--trust-config`` reloads a benchmark the run names by import path (only for runs you made yourself).
Writes ``RUN_DIR/srfa.jsonl`` (per item: ≤ 10 atomic claims with type, text, label and reason)
and ``RUN_DIR/srfa_metrics.json`` (Acc, UCR_reason, GDR, R4R, WDG, by difficulty; Cohen's κ in
``both`` mode). Exit codes: 0 done (items the run itself failed are counted as run errors, not
retried), 1 some item audits failed (rerun to retry), 2 usage error.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from ledgermind.confutil import CONF_DIR, container, to_plain
from ledgermind.errors import UserError
from ledgermind.srfa.checks import format_checks
from ledgermind.srfa.protocol import SrfaMode
from ledgermind.srfa.run import SRFA_FILE, SRFA_METRICS_FILE

EXIT_USER_ERROR = 2


def compose_srfa_config(overrides: Sequence[str]) -> DictConfig:
    """``conf/srfa.yaml`` with Hydra-style overrides (``srfa.mode=judge``, ``model=…``)."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException

    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return compose(config_name="srfa", overrides=list(overrides))
    except HydraException as exc:
        raise UserError(str(exc).splitlines()[0]) from None


def run_srfa(run_dir: Path, cfg: DictConfig, *, trust_config: bool = False) -> dict[str, Any]:
    """Audit one run directory as configured; returns the audit metrics (also written to disk)."""
    import asyncio

    from ledgermind.srfa.judge import Judge, JudgeDecoding
    from ledgermind.srfa.run import JUDGE_CACHE_FILE, SrfaSettings, load_run, run_items, srfa_run

    record = load_run(run_dir)
    a = cfg.srfa
    try:
        mode = SrfaMode(str(a.mode))
    except ValueError:
        raise UserError(f"srfa.mode must be ledger, judge or both, got {a.mode!r}") from None
    defaults = SrfaSettings(mode)  # a null key means the one home of that constant
    settings = SrfaSettings(
        mode,
        float(a.gamma) if a.gamma is not None else defaults.gamma,
        int(a.max_claims) if a.max_claims is not None else defaults.max_claims,
    )
    items = run_items(run_dir, trusted=trust_config)
    cascade = _cascade(cfg) if mode in {SrfaMode.LEDGER, SrfaMode.BOTH} else None
    evidence = _evidence_source(cfg) if cascade is not None else None
    logger = _logger(cfg, run_dir)

    async def go() -> dict[str, Any]:
        backend = None
        judge = None
        if mode in {SrfaMode.JUDGE, SrfaMode.BOTH}:
            from ledgermind.backends.build import build_backend

            cache_path = cfg.cache.path or str(run_dir / JUDGE_CACHE_FILE)
            backend = build_backend(
                cfg.backend, cfg.model, cache_mode=str(cfg.cache.mode), cache_path=cache_path
            )
            jd = a.judge
            judge = Judge(
                backend,
                JudgeDecoding(float(jd.temperature), int(jd.max_tokens), int(jd.seed)),
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


def _cascade(cfg: DictConfig) -> Any:
    from ledgermind.grounding.cascade import build_cascade

    # the cascade builds the alias table its config asks for; srfa.grounding takes pipeline.grounding's keys
    return build_cascade(to_plain(cfg.srfa.get("grounding")))


def _evidence_source(cfg: DictConfig) -> Any:
    from ledgermind.srfa.run import EvidenceSource
    from perception.build import build_tools_cached

    # the same on-disk perception cache as the runs: an item the run already OCR'd costs nothing
    return EvidenceSource(build_tools_cached(to_plain(cfg.perception)))


def _logger(cfg: DictConfig, run_dir: Path) -> Any:
    from hydra.utils import instantiate

    from ledgermind.experiment.wandb_logger import ExperimentLogger

    node = cfg.get("logger")
    logger = instantiate(node) if node is not None else ExperimentLogger()
    logger.start(
        out_dir=Path(run_dir),
        config=container(cfg),
        name=f"srfa-{cfg.srfa.mode}-{Path(run_dir).name}",
        group=None,
        job_type="srfa",
    )
    return logger


def format_metrics(metrics: dict[str, Any]) -> str:
    lines = []
    for mode in ("ledger", "judge"):
        m = metrics.get(mode)
        if not m:
            continue

        def f(x: Any) -> str:
            return "—" if x is None else f"{x:.3f}"

        cov = m.get("coverage") or {}
        lines.append(
            f"[{mode}] n={m['n']} Acc={f(m['Acc'])} srfa.UCR_reason={f(m['srfa.UCR_reason'])} srfa.GDR={f(m['srfa.GDR'])} "
            f"srfa.R4R={f(m['srfa.R4R'])} srfa.WDG={f(m['srfa.WDG'])} coverage={f(cov.get('claims'))} "
            f"(DC {f(cov.get('DC'))}) (γ={m['gamma']}; audit errors {m['audit_errors']}, run errors {m['run_errors']})"
        )
        if m.get("protocol"):
            lines.append(
                f"[{mode}] {m['protocol']}; the run's own GDR/R4R (metrics.json) are another protocol"
            )
        for ctype, counts in sorted((m.get("text_labels") or {}).items()):
            lines.append(f"[{mode}] {ctype} text labels: " + " ".join(f"{k}={v}" for k, v in counts.items()))
        for ctype, counts in sorted((m.get("support") or {}).items()):
            lines.append(f"[{mode}] {ctype} support: " + " ".join(f"{k}={v}" for k, v in counts.items()))
        if m.get("markup_entities") is not None:
            lines.append(f"[{mode}] markup tokens labelled as entities: {m['markup_entities']['n']}")
    lines.extend(format_checks(metrics))  # the run's backend's own checks (registered by ``srfa_run``)
    if metrics.get("agreement"):
        ag = metrics["agreement"]
        k = "—" if ag["kappa"] is None else f"{ag['kappa']:.3f}"
        lines.append(f"[both] claims={ag['n']} kappa={k} confusion={ag['confusion']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help"}:
        print(
            "usage: ledgermind srfa RUN_DIR [--trust-config] [srfa.mode=ledger|judge|both] [srfa.gamma=0.5] "
            "[model=NAME backend=NAME ...]\n\nWrites RUN_DIR/srfa.jsonl and RUN_DIR/srfa_metrics.json; "
            "a rerun retries the items whose audit failed (items the run itself failed are run errors, "
            "counted apart). --trust-config: reload a benchmark the run names by import path "
            "(only for runs you made yourself).",
            file=sys.stderr,
        )
        return 0 if args else EXIT_USER_ERROR
    trust = "--trust-config" in args
    args = [a for a in args if a != "--trust-config"]
    if not args:
        print("error: give the run directory to audit", file=sys.stderr)
        return EXIT_USER_ERROR
    run_dir, overrides = Path(args[0]), args[1:]
    try:
        cfg = compose_srfa_config(overrides)
        metrics = run_srfa(run_dir, cfg, trust_config=trust)
    except (UserError, OmegaConfBaseException) as exc:
        print(f"error: {str(exc).strip().splitlines()[0]}", file=sys.stderr)
        return EXIT_USER_ERROR
    print(format_metrics(metrics))
    print(f"-> {run_dir / SRFA_FILE}, {run_dir / SRFA_METRICS_FILE}")
    errors = sum((metrics.get(m) or {}).get("audit_errors", 0) for m in ("ledger", "judge"))
    if errors:
        print(f"{errors} item audits failed; rerun the same command to retry them", file=sys.stderr)
        return 1
    return 0
