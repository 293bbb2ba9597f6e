"""Benchmark loaders (``BENCHMARKS``) producing ``Item`` objects.

Importing this package imports every module in it (``pkgutil``), so a loader module registers
itself by being here: a new ``ledgermind/benchmarks/NAME.py`` with ``@BENCHMARKS.register("NAME")``
needs no second line anywhere else (a list of imports to keep would leave a forgotten loader silently unregistered).
"""

import importlib
import pkgutil

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.benchmarks.registry import BENCHMARKS, LoaderConfig, load_benchmark

for _module in pkgutil.iter_modules(__path__):
    if not _module.ispkg:
        importlib.import_module(f"{__name__}.{_module.name}")  # registration

__all__ = ["BENCHMARKS", "AnswerType", "Item", "LoaderConfig", "load_benchmark"]
