"""``python -m ledgermind.audit``: the claim auditor's module entry point (``ledgermind/claim_audit.py``).

"audit" means one thing, checking claims against their evidence; this package only keeps the
``-m`` spelling of that command (also ``ledgermind audit`` and ``python -m ledgermind.claim_audit``).
The S-RFA trace audit of a run is ``ledgermind/srfa/`` (``ledgermind srfa``).
"""
