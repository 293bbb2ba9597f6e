"""Calibration and evaluation studies the agent never runs.

Why a room of its own: these modules choose or measure the agent's free parameters on small
annotated sets (K-fold choice of rule switches, agreement of the grounding checks with human
verdicts, entity verdicts derived from numeric annotations, the crop-zoom zone-choice study on
real gauge photos). Nothing under ``ledgermind/pipeline`` imports them; they sit above the agent's
rooms so that a reader of the runtime can skip them, and their entry points (``ledgermind
eval-grounding`` and ``eval-perception`` in ``ledgermind/cli/``) are thin wrappers over them.
"""
