"""JSON schemas for structured outputs.

Stages that must return claims or values request these where the backend supports structured
outputs, so that open models cannot produce unparsable claims; the App. G text formats stay the
fallback (and the parsers accept both).
"""

from __future__ import annotations

from typing import Any

OBSERVATIONS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "observations": {
            "type": "array",
            "maxItems": 15,
            "items": {
                "type": "object",
                "properties": {"category": {"type": "string"}, "text": {"type": "string"}},
                "required": ["category", "text"],
            },
        }
    },
    "required": ["observations"],
}

CLAIMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "stage": {"type": "string", "enum": ["E", "I", "J"]},
                    "text": {"type": "string"},
                    "cites": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["stage", "text", "cites"],
            },
        }
    },
    "required": ["claims"],
}

DECISION: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "cites": {"type": "array", "items": {"type": "string"}}},
    "required": ["answer", "cites"],
}

READING: dict[str, Any] = {
    "type": "object",
    "properties": {"value": {"type": "number"}, "unit": {"type": "string"}},
    "required": ["value"],
}


def with_max_items(schema: dict[str, Any], n: int) -> dict[str, Any]:
    """A copy of OBSERVATIONS with a different maxItems (N_max is a config value)."""
    import copy

    s = copy.deepcopy(schema)
    s["properties"]["observations"]["maxItems"] = n
    return s
