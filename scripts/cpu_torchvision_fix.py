#!/usr/bin/env python
"""Install / remove / check the CPU torchvision import shim in the *current* Python environment.

CPU test environments only (CI, laptops): PyPI's CUDA torchvision wheel does not import beside a
CPU torch (``operator torchvision::nms does not exist``); see
``ledgermind/backends/torchvision_cpu_shim.py`` for the cause and the fix. GPU installs must not
run this (they do not need it; the shim would be a no-op there anyway).

    .venv/bin/python scripts/cpu_torchvision_fix.py install   # copy shim + .pth into site-packages
    .venv/bin/python scripts/cpu_torchvision_fix.py check     # import torchvision in a fresh process
    .venv/bin/python scripts/cpu_torchvision_fix.py uninstall
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

SHIM_SRC = Path(__file__).resolve().parents[1] / "ledgermind" / "backends" / "torchvision_cpu_shim.py"
MODULE = "_ledgermind_torchvision_cpu_shim"
PTH = "ledgermind-torchvision-cpu-shim.pth"


def check() -> int:
    code = "import torchvision, transformers; from transformers import Qwen2VLImageProcessor; print(torchvision.__version__)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode == 0:
        print(f"torchvision {proc.stdout.strip()} imports fine")
    else:
        print(proc.stderr.strip().splitlines()[-1] if proc.stderr else "import failed", file=sys.stderr)
    return proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("action", choices=["install", "uninstall", "check"])
    action = parser.parse_args().action
    sp = Path(sysconfig.get_paths()["purelib"])
    if action == "uninstall":
        for name in (f"{MODULE}.py", PTH):
            (sp / name).unlink(missing_ok=True)
        print(f"removed the shim from {sp}")
        return 0
    if action == "install":
        shutil.copyfile(SHIM_SRC, sp / f"{MODULE}.py")
        # A .pth line starting with "import" runs at interpreter start-up; it only installs an import
        # hook (no torch import), so start-up cost is negligible.
        (sp / PTH).write_text(f"import {MODULE}; {MODULE}.install()\n")
        print(f"installed {MODULE} + {PTH} into {sp}")
    return check()


if __name__ == "__main__":
    sys.exit(main())
