"""Auditing claims and trajectories.

* ``claims``: the claim auditor — the grounding cascade over a JSONL file of claim/evidence pairs
  (``python -m ledgermind.audit`` / ``ledgermind audit``).
* ``srfa``: the Symmetric Reasoning Faithfulness Audit (paper Figure 5) — one claim-level audit
  for any trajectory (LedgerMind, ablations, the native-CoT baseline, replayed outputs).
* ``judge``: the judge-model labeller of S-RFA.
"""

from ledgermind.audit.claims import audit_lines, main, parse_line

__all__ = ["audit_lines", "main", "parse_line"]
