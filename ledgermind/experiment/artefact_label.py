"""What answered a run, said on every artefact made from it (Table 3 files, chart, census, report, logger).

Why one function: a figure pasted into a slide travels without the terminal that printed it, so
each artefact must carry its own provenance in its first line, title, caption or tags — and they
must all say the same words. Three kinds of run are not a real model answering:

- a backend with a disclaimer (the simulated backbone, a test instrument): its own words and tags,
  read from the recorded backend (``backends/recorded.describe_backend``), never by recognising a
  class name here;
- a replay (``ReplayBackend``): recorded replies of a real model read back from a file, no model ran;
- a tiny random-weight model (model name containing ``tiny``): plumbing only, numbers meaningless.

A real model served live has no label (``ArtefactLabel.kind == ""``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ledgermind.backends.recorded import describe_backend

REPLAY_BACKEND = "ReplayBackend"  # the class name the run identity records


@dataclass(frozen=True)
class ArtefactLabel:
    """``kind`` is the one upper-case word(s) an artefact leads with; ``sentence`` says what it means."""

    kind: str = ""  # "SIMULATED", "REPLAYED", "TINY MODEL", or "" (a real model answered)
    sentence: str = ""
    tags: tuple[str, ...] = ()  # experiment-logger tags (lower case)

    def __bool__(self) -> bool:
        return bool(self.kind)

    @property
    def line(self) -> str:
        """One line: the kind first (so a reader of only the first word knows), then the sentence."""
        if not self.kind:
            return ""
        return (
            self.sentence if self.sentence.upper().startswith(self.kind) else f"{self.kind}: {self.sentence}"
        )


def label_for(identity: Mapping[str, Any]) -> ArtefactLabel:
    """The label of one run from its recorded identity (``metrics.json["identity"]``)."""
    backend = str(identity.get("backend", ""))
    model = str(identity.get("model", ""))
    description = describe_backend(backend)
    if description.disclaimer:
        kind = description.tags[0].upper() if description.tags else "TEST INSTRUMENT"
        return ArtefactLabel(kind, description.disclaimer, tuple(description.tags))
    if backend == REPLAY_BACKEND:
        return ArtefactLabel(
            "REPLAYED",
            f"REPLAYED — recorded replies of {model} read back from a file; no model was run for these numbers",
            ("replayed",),
        )
    if "tiny" in model.lower():
        return ArtefactLabel(
            "TINY MODEL",
            f"TINY MODEL — {model} is a tiny random-weight model for plumbing checks; its numbers are meaningless",
            ("tiny-model",),
        )
    return ArtefactLabel()


def combined(labels: Iterable[ArtefactLabel]) -> ArtefactLabel:
    """One label for artefacts made from several runs (Table 3): every distinct kind, in order."""
    distinct = list(dict.fromkeys(lab for lab in labels if lab))
    if not distinct:
        return ArtefactLabel()
    if len(distinct) == 1:
        return distinct[0]
    return ArtefactLabel(
        " + ".join(lab.kind for lab in distinct),
        " | ".join(lab.line for lab in distinct),
        tuple(dict.fromkeys(t for lab in distinct for t in lab.tags)),
    )
