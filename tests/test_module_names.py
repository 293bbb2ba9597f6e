"""Names that say which concept: no two modules, constants or functions share a name for two
things, so a reader never has to ask which one a name means. The ambiguous names below must not
come back. Cheap: file names and source text only (one tiny import)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# old path -> where its concept lives now (and the other concept it was confused with)
GONE = {
    "ledgermind/metrics/trajectory.py": "metrics/faithfulness.py; the Trajectory record is ledgermind/trajectory.py",
    "ledgermind/audit/claims.py": "ledgermind/claim_audit.py; claim types and parser are ledgermind/claims.py",
    "ledgermind/audit/srfa.py": "ledgermind/srfa/protocol.py (S-RFA is ledgermind/srfa/)",
    "ledgermind/testing/replay.py": "testing/throughput_limit.py; the replay backend is backends/replay.py",
    "ledgermind/grounding/options.py": "grounding/option_labels.py (option labels in a claim)",
    "ledgermind/grounding/option_filter.py": "grounding/option_text_filter.py (option text is not evidence)",
    "ledgermind/benchmarks/sample.py": "benchmarks/bundled_sample.py; the data folder is benchmarks/sample/",
    "ledgermind/simulator/audit_catch.py": "simulator/srfa_catch.py",
    "conf/audit.yaml": "conf/srfa.yaml",
    "docs/audit.md": "docs/srfa.md",
    "docs/audit_handlabels.jsonl": "docs/srfa_handlabels.jsonl",
}


def test_the_old_ambiguous_paths_are_gone() -> None:
    back = [f"{old} (now {new})" for old, new in GONE.items() if (ROOT / old).exists()]
    assert not back, "renamed for being ambiguous, do not bring back: " + "; ".join(back)


def test_no_module_sits_beside_a_folder_of_its_own_name() -> None:
    """``benchmarks/sample.py`` beside ``benchmarks/sample/`` read as one thing."""
    clash = [
        p.relative_to(ROOT).as_posix()
        for d in ("ledgermind", "perception")
        for p in (ROOT / d).rglob("*.py")
        if p.with_suffix("").is_dir()
    ]
    assert not clash, clash


def test_audit_names_only_the_claim_auditor() -> None:
    """ "audit" is the claim auditor (``ledgermind audit``); S-RFA is "srfa" (package, config, scripts,
    files)."""
    named = sorted(
        p.relative_to(ROOT).as_posix()
        for d in ("ledgermind", "perception", "conf", "scripts")
        for p in (ROOT / d).rglob("*audit*")
        if "__pycache__" not in p.parts
    )
    assert named == ["ledgermind/claim_audit.py"]


def test_one_module_level_metrics_file_constant() -> None:
    """``METRICS_FILE`` is the run's ``metrics.json``; S-RFA's is ``SRFA_METRICS_FILE``."""
    pattern = re.compile(r"^(\w*METRICS_FILE)\s*=\s*(.+)$", re.MULTILINE)
    found = {
        (p.relative_to(ROOT).as_posix(), m.group(1), m.group(2))
        for p in (ROOT / "ledgermind").rglob("*.py")
        for m in pattern.finditer(p.read_text(encoding="utf-8"))
    }
    assert ("ledgermind/runs/files.py", "METRICS_FILE", '"metrics.json"') in found
    assert ("ledgermind/srfa/run.py", "SRFA_METRICS_FILE", '"srfa_metrics.json"') in found
    assert sum(name == "METRICS_FILE" for _, name, _ in found) == 1, found


def test_question_words_are_not_the_dispatch_keywords() -> None:
    """``dispatch/keywords.py`` holds the dispatcher's keyword lists; the content words of a
    question are ``dispatch.terms.content_words``."""
    from ledgermind.dispatch import terms

    assert callable(terms.content_words) and not hasattr(terms, "keywords")
