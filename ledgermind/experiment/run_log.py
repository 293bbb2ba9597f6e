"""``<run dir>/run.log``: the run's own log file, opened once the run holds its folder.

Hydra's job logging is configured without a file handler (``conf/hydra/job_logging/ledgermind.yaml``):
Hydra would open the log before the run has claimed the directory.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from pathlib import Path

from ledgermind.runs.files import RUN_LOG


class RunLogHandler(logging.FileHandler):
    """``run.log``'s handler. A disk that refuses the log (full, read-only) is one warning line and
    the log continues on the console only: logging's default would print a traceback on stderr for
    every record, burying the run's own one-line error about the same disk."""

    refused = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.refused:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            super().handleError(record)
            return
        if not self.refused:
            self.refused = True
            print(
                f"warning: {self.baseFilename}: cannot write ({exc.strerror or exc}); the log continues on the console",
                file=sys.stderr,
                flush=True,
            )
        # the unwritable buffer is given up: closing would only flush it into the same refusal
        stream, self.stream = self.stream, None
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def log_to(out_dir: Path) -> logging.Handler:
    """``<out_dir>/run.log`` (Hydra's job log, opened only once the directory is held)."""
    handler = RunLogHandler(out_dir / RUN_LOG, encoding="utf-8")
    handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"))
    logging.getLogger().addHandler(handler)
    return handler
