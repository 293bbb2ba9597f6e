"""The simulator's own commands (test-instrument tooling, never production): the null test
(``scripts/sim_null.py``), the sim report (``scripts/sim_report.py``) and the fault-rate sweep
(``scripts/sim_sweep.py``); each script is a thin wrapper around ``main`` here."""
