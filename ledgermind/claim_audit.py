"""Claim auditor: run the grounding cascade (§3.2) over a JSONL file of claims.

    python -m ledgermind.claim_audit CLAIMS.jsonl  # or "-" for stdin; also `ledgermind audit`

Input, one JSON object per line::

    {"id": "c1", "claim": "Apollo 11 landed in 1969.", "evidence": ["..."], "kind": "reading"|"other"}

Output, one JSON line per non-blank input line on stdout, in input order::

    {"id": "c1", "coverage": 0.8, "ecc": true, "ncc": false, "grounded": false,
     "missing_entities": [], "unmatched_numbers": ["1969"]}

``evidence`` is treated as the claim's cited pool, so ``grounded`` = evidence non-empty ∧ ECC ∧
NCC ∧ coverage ≥ β (0.15, App. E.1). A malformed line yields ``{"line": n, "error": "..."}``
(plus its ``id`` when readable) and the run continues; the exit status is 0 when every line was
audited, 1 when some line was invalid, 2 for a usage error (missing file, missing NLP extra).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.errors import UserError
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig, build_cascade
from ledgermind.grounding.ncc import ClaimKind
from ledgermind.records import Record
from perception.aliases import AliasTable
from perception.ner import DEFAULT_MODEL, SpacyNER


@dataclass
class ClaimLine(Record):
    """One input line: a claim, the evidence it is checked against, and whether it is a reading."""

    id: Any
    claim: str
    evidence: list[str]
    kind: ClaimKind = ClaimKind.OTHER


def audit_lines(lines: Iterable[str], cascade: GroundingCascade) -> Iterator[dict[str, Any]]:
    """One output record per non-blank line (audit result or per-line error)."""
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            yield {"line": number, "error": f"not valid JSON ({exc.msg} at column {exc.colno})"}
            continue
        try:
            line = ClaimLine.from_dict(record)
        except ValueError as exc:
            claim_id = record.get("id") if isinstance(record, dict) else None
            yield {"line": number, **({} if claim_id is None else {"id": claim_id}), "error": str(exc)}
            continue
        result = cascade.check(line.claim, line.evidence, kind=line.kind)
        yield {
            "id": line.id,
            "coverage": round(result.coverage, 4),
            "ecc": result.ecc,
            "ncc": result.ncc,
            "grounded": result.grounded,
            "missing_entities": list(result.missing_entities),
            "unmatched_numbers": list(result.unmatched_numbers),
        }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ledgermind audit",
        description="Check claims against their evidence with coverage, ECC and NCC (JSONL in, JSONL out).",
    )
    parser.add_argument("claims", help="JSONL file of {id, claim, evidence, kind?} objects, or '-' for stdin")
    parser.add_argument(
        "--beta",
        type=float,
        default=GroundingConfig.beta,
        help="coverage threshold for 'grounded' (App. E.1; default %(default)s)",
    )
    parser.add_argument(
        "--delta-read",
        type=float,
        default=GroundingConfig.delta_read,
        help="relative tolerance for kind=reading numbers (App. C; default %(default)s)",
    )
    parser.add_argument(
        "--strict-ncc",
        action="store_true",
        help="strict Eq. 5 equality for numbers; default: relation-aware NCC (docs/grounding.md)",
    )
    parser.add_argument(
        "--ner-model", default=DEFAULT_MODEL, help="spaCy model package (default %(default)s)"
    )
    parser.add_argument("--aliases", type=Path, help="extra alias table JSON (groups/abbreviations/acronyms)")
    args = parser.parse_args(argv)
    try:
        cfg = GroundingConfig(beta=args.beta, delta_read=args.delta_read, ncc_relations=not args.strict_ncc)
        aliases = AliasTable.from_json(args.aliases) if args.aliases else AliasTable.default()
        cascade = build_cascade(cfg, ner=SpacyNER(args.ner_model), aliases=aliases)
        if args.claims != "-" and not Path(args.claims).is_file():
            raise UserError(f"claims file not found: {args.claims}")
        invalid = 0
        source = (
            contextlib.nullcontext(sys.stdin) if args.claims == "-" else open(args.claims, encoding="utf-8")
        )
        with source as lines:
            for record in audit_lines(lines, cascade):
                invalid += "error" in record
                sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        return 1 if invalid else 0
    except UserError as exc:
        print(f"ledgermind audit: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `ledgermind audit claims.jsonl | head`
        sys.stderr.close()
        return 0
    except UnicodeDecodeError as exc:
        print(f"ledgermind audit: error: {args.claims} is not UTF-8 text ({exc.reason})", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
