"""JSON schemas for structured outputs.

Stages that must return claims or values request these where the backend supports structured
outputs, so that open models cannot produce unparsable claims; the App. G text formats stay the
fallback (and the parsers accept both).
"""

from __future__ import annotations

from typing import Any


def _object(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def _array(items: dict[str, Any], **limits: Any) -> dict[str, Any]:
    return {"type": "array", **limits, "items": items}


_string: dict[str, Any] = {"type": "string"}

OBSERVATIONS = _object(
    {
        "observations": _array(
            _object({"category": _string, "text": _string}, "category", "text"), maxItems=15
        )
    },
    "observations",
)
CLAIMS = _object(
    {
        "claims": _array(
            _object(
                {
                    "stage": {"type": "string", "enum": ["E", "I", "J"]},
                    "text": _string,
                    "cites": _array(_string),
                },
                "stage",
                "text",
                "cites",
            )
        )
    },
    "claims",
)
DECISION = _object({"answer": _string, "cites": _array(_string)}, "answer", "cites")
READING = _object({"value": {"type": "number"}, "unit": _string}, "value")


def with_max_items(schema: dict[str, Any], n: int) -> dict[str, Any]:
    """A copy of OBSERVATIONS with a different maxItems (N_max is a config value)."""
    import copy

    s = copy.deepcopy(schema)
    s["properties"]["observations"]["maxItems"] = n
    return s
