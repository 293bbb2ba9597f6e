"""S-RFA, the Symmetric Reasoning Faithfulness Audit (paper Figure 5): one claim-level audit for
any trajectory (LedgerMind, ablations, the native-CoT baseline, replayed outputs).

* ``protocol``: the records, the trace extraction, the ledger-mode labeller and the S-RFA metrics;
* ``run``: S-RFA over a run folder (``srfa.jsonl`` + ``srfa_metrics.json``); ``checks``: the
  run-level checks a backend registers; ``judge``: the judge-model labeller; ``split``: a trace
  into atomic claims; ``compare``: Figure 5 side by side; ``diagnostics``: S-RFA against the
  outcome and hand labels.

The command is ``ledgermind srfa`` (``ledgermind/cli/srfa.py``). "audit" alone is the claim
auditor (``ledgermind/claim_audit.py``).
"""
