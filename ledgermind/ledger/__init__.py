"""Structured Evidence Ledger (paper §3.1, App. B)."""

from ledgermind.ledger.entry import EvidenceEntry, Kappa, Omega
from ledgermind.ledger.ledger import Ledger, Transition
from ledgermind.ledger.mapping import MappedFact, map_observations, map_output

__all__ = [
    "EvidenceEntry",
    "Kappa",
    "Ledger",
    "MappedFact",
    "Omega",
    "Transition",
    "map_observations",
    "map_output",
]
