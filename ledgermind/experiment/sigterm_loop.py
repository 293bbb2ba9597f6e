"""Run the run's event loop so that SIGTERM stops it the way asyncio stops for Ctrl-C.

Why: a Python signal handler runs between two bytecodes of whatever the main thread is doing. The
run command's SIGTERM handler raises (``cli.run.Terminated``), and with the event loop on the main
thread the signal usually lands inside one item's synchronous work (grounding, NER): the exception
then ends that one task, asyncio logs a "Task exception was never retrieved" traceback for it, and
the user sees a traceback above the one line a termination promises. asyncio itself handles Ctrl-C by
cancelling its main task instead; SIGTERM gets the same here. While the loop runs, SIGTERM cancels the
main task (the items in flight are cancelled, finished ones are on disk); once the loop has unwound,
the handler the process had installed is called, so the run command still reports it (exit 143).
A process without a Python SIGTERM handler (the default: the signal ends it) is left as it is.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, with SIGTERM turned into a cancellation of ``main`` while it runs."""
    previous = signal.getsignal(signal.SIGTERM)
    if not callable(previous) or threading.current_thread() is not threading.main_thread():
        return asyncio.run(main)
    received: list[int] = []

    async def guarded() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None

        def stop() -> None:
            received.append(signal.SIGTERM)
            task.cancel()

        loop.add_signal_handler(signal.SIGTERM, stop)
        try:
            return await main
        finally:
            loop.remove_signal_handler(signal.SIGTERM)  # resets it to the default ...
            signal.signal(signal.SIGTERM, previous)  # ... so the process's own handler is put back

    try:
        return asyncio.run(guarded())
    except asyncio.CancelledError:
        if received:
            previous(signal.SIGTERM, None)  # the run command's handler raises its Terminated here
        raise
