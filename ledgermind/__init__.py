"""LedgerMind: provenance-constrained multimodal agentic reasoning."""

__version__ = "0.1.0"
