"""Benchmark loaders (``BENCHMARKS``) producing ``Item`` objects; importing this package registers them all."""

from ledgermind.benchmarks import adapters, gauges, generic, mmmu_pro, sample  # noqa: F401  (registration)
from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.benchmarks.registry import BENCHMARKS, LoaderConfig, load_benchmark

__all__ = ["BENCHMARKS", "AnswerType", "Item", "LoaderConfig", "load_benchmark"]
