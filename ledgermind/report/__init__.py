"""Static HTML report of a run or a multirun (item pages, run page, Table 3, side by side).

``build_report(run_or_multirun_dir)`` writes ``report/index.html`` and returns its path.
"""

from ledgermind.report.builder import build_report

__all__ = ["build_report"]
