"""The LedgerMind agent: DIRECT and FULLPIPE paths, baselines and ablations (paper §3.2, App. A)."""

from ledgermind.pipeline.agent import LedgerMindAgent, build_agent, choose_path
from ledgermind.pipeline.config import AblationFlags, PipelineConfig

__all__ = ["AblationFlags", "LedgerMindAgent", "PipelineConfig", "build_agent", "choose_path"]
