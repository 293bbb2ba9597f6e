"""The judge-model labeller of S-RFA (``srfa.mode=judge`` / ``both``).

The paper's auditor is a fixed external model that decomposes a trace into ≤ 10 atomic claims
and labels each against the image. Symmetric means the judge sees exactly the same request for
every trace of an item — same system prompt, same instructions, same images (the item's own),
same decoding parameters — and only the trace text differs; ``Judge.request`` is the single
place that builds it, and the prompt hash and decoding parameters go into the audit's output.

Two tasks:

* ``decompose``: the judge splits the trace and labels the claims itself (``judge`` mode);
* ``label``: the judge labels the claims the deterministic splitter produced (``both`` mode), so
  that the two modes can be compared claim by claim (Cohen's κ).

A reply that is not valid JSON of the requested shape is a judge failure (``JudgeError``): the
item is recorded as an audit error, never as a label, and a rerun retries it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from string import Template
from typing import Any

import jsonschema

from ledgermind.backends.base import Backend, GenerationRequest, Message
from ledgermind.benchmarks.item import Item
from ledgermind.pipeline.render import option_lines
from ledgermind.srfa.protocol import AtomicClaim
from ledgermind.srfa.split import MAX_CLAIMS

JUDGE_SYSTEM = (
    "You are an impartial auditor of visual reasoning. You check whether each statement of a "
    "reasoning trace is supported by what the image shows and by the question text; you never "
    "solve the question yourself and you do not reward a statement for being plausible."
)

# The part every judge request shares: what was asked and the trace under audit.
_TRACE_BLOCK = """Question given to the model:
$question
$options
Reasoning trace to audit:
<<<TRACE
$trace
TRACE>>>
"""

JUDGE_DECOMPOSE = Template(
    _TRACE_BLOCK
    + """
Decompose the trace into at most $max_claims atomic claims, in the order they appear. Each claim
states one thing. Give type "SC" to statements about the image, the facts or the reasoning, and
type "DC" to the final decision (exactly one, the last claim); for a multiple-choice question the
DC's "answer" is the option letter it chooses.
Label every claim "grounded" if the image (or the question text) supports it, otherwise
"ungrounded" (an entity or number that is not visible, or a conclusion that does not follow),
with a one-sentence reason.
Reply with JSON only: {"claims": [{"text": ..., "type": "SC"|"DC", "label": "grounded"|"ungrounded", "reason": ..., "answer": ...}]}"""
)

JUDGE_LABEL = Template(
    _TRACE_BLOCK
    + """
The trace has been split into these claims:
$claims

Label every claim, in the same order, "grounded" if the image (or the question text) supports
it, otherwise "ungrounded" (an entity or number that is not visible, or a conclusion that does
not follow), with a one-sentence reason.
Reply with JSON only: {"labels": [{"label": "grounded"|"ungrounded", "reason": ...}]}"""
)

_LABEL = {"type": "string", "enum": ["grounded", "ungrounded"]}
_TEXT = {"type": "string"}


def _reply_schema(key: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A reply ``{key: [1..MAX_CLAIMS objects with these properties]}``."""
    item = {"type": "object", "properties": properties, "required": required}
    array = {"type": "array", "minItems": 1, "maxItems": MAX_CLAIMS, "items": item}
    return {"type": "object", "properties": {key: array}, "required": [key]}


DECOMPOSE_SCHEMA = _reply_schema(
    "claims",
    {
        "text": _TEXT,
        "type": {"type": "string", "enum": ["SC", "DC"]},
        "label": _LABEL,
        "reason": _TEXT,
        "answer": {"type": ["string", "null"]},
    },
    ["text", "type", "label"],
)
LABEL_SCHEMA = _reply_schema("labels", {"label": _LABEL, "reason": _TEXT}, ["label"])


class JudgeError(RuntimeError):
    """The judge's reply could not be turned into labels (or its backend failed)."""


@dataclass(frozen=True)
class JudgeDecoding:
    """Decoding parameters: fixed for every trace (symmetry), recorded in the audit output."""

    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int = 0


def prompt_hash() -> str:
    """Hash of everything in the judge prompt that is not the item or the trace."""
    schemas = [json.dumps(schema, sort_keys=True) for schema in (DECOMPOSE_SCHEMA, LABEL_SCHEMA)]
    parts = [JUDGE_SYSTEM, JUDGE_DECOMPOSE.template, JUDGE_LABEL.template, *schemas]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]


class Judge:
    """Builds the one judge request per (item, trace) and parses the reply."""

    def __init__(
        self, backend: Backend, decoding: JudgeDecoding | None = None, max_claims: int = MAX_CLAIMS
    ) -> None:
        self.backend, self.decoding, self.max_claims = backend, decoding or JudgeDecoding(), max_claims

    def describe(self) -> dict[str, Any]:
        return {
            "prompt_hash": prompt_hash(),
            "decoding": asdict(self.decoding),
            "backend": type(self.backend).__name__,
            "model": self.backend.model_id,
        }

    def request(
        self, item: Item, trace: str, claims: Sequence[AtomicClaim] | None = None
    ) -> GenerationRequest:
        options = shown_options(item)
        fields = {
            "question": item.question or "(the question is in the image)",
            "options": f"Options:\n{option_lines(options)}\n" if options else "",
            "trace": trace.strip() or "(empty)",
            "max_claims": self.max_claims,
        }
        if claims is None:
            text, schema = JUDGE_DECOMPOSE.substitute(fields), DECOMPOSE_SCHEMA
        else:
            numbered = "\n".join(f"{i}. [{c.ctype}] {c.text}" for i, c in enumerate(claims, 1))
            text, schema = JUDGE_LABEL.substitute(fields, claims=numbered), LABEL_SCHEMA
        return GenerationRequest(
            [Message.text("system", JUDGE_SYSTEM), Message("user", [*item.images, text])],
            temperature=self.decoding.temperature,
            max_tokens=self.decoding.max_tokens,
            seed=self.decoding.seed,
            json_schema=schema if self.backend.supports_structured_output else None,
        )

    async def decompose(self, item: Item, trace: str, prediction: str | None) -> list[AtomicClaim]:
        data = await self._ask(self.request(item, trace), DECOMPOSE_SCHEMA)
        decided = {"SC": None, "DC": prediction}  # the DC asserts the answer the run scored
        claims = [
            AtomicClaim(
                c["type"], c["text"], c["label"] == "grounded", c.get("reason", ""), decided[c["type"]]
            )
            for c in data["claims"]
        ]
        if sum(1 for c in claims if c.ctype == "DC") != 1 or claims[-1].ctype != "DC":
            raise JudgeError("judge reply must end with exactly one DC claim")
        return claims

    async def label(self, item: Item, trace: str, claims: Sequence[AtomicClaim]) -> list[tuple[bool, str]]:
        data = await self._ask(self.request(item, trace, claims), LABEL_SCHEMA)
        labels = data["labels"]
        if len(labels) != len(claims):
            raise JudgeError(f"judge labelled {len(labels)} claims, expected {len(claims)}")
        return [(lab["label"] == "grounded", lab.get("reason", "")) for lab in labels]

    async def _ask(self, request: GenerationRequest, schema: dict[str, Any]) -> dict[str, Any]:
        try:
            reply = await self.backend.generate(request)
        except Exception as exc:
            raise JudgeError(f"judge backend failed: {type(exc).__name__}: {exc}") from exc
        data = _json_object(reply.text)
        try:
            jsonschema.validate(data, schema)
        except jsonschema.ValidationError as exc:
            raise JudgeError(f"judge reply does not match the schema: {exc.message}") from None
        return data


def shown_options(item: Item) -> list[str] | None:
    """The options the model was shown: the item's, or (MMMU-Pro vision) those only on its page."""
    return item.options or item.meta.get("options")


def _json_object(text: str) -> Any:
    text = (text or "").strip()
    if fenced := re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL):
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start:
        raise JudgeError("judge reply has no JSON object")
    try:
        return json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise JudgeError(f"judge reply is not valid JSON ({exc.msg})") from None
