"""Convert ``Message`` lists into the two chat wire formats we speak.

* OpenAI format (vLLM server, vLLM in-process ``LLM.chat``): images inline as base64 data URLs.
* transformers format (``processor.apply_chat_template``): ``{"type": "image"}`` placeholders in
  order, with the PIL images passed to the processor separately.

Both produce the same prompt through the model's chat template, which is what makes the
vLLM/transformers parity test meaningful.
"""

from __future__ import annotations

from typing import Any

from PIL import Image

from ledgermind.backends.base import Message
from ledgermind.backends.images import data_url, load_image


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        for p in m.content:
            if isinstance(p, str):
                parts.append({"type": "text", "text": p})
            else:
                parts.append({"type": "image_url", "image_url": {"url": data_url(p)}})
        out.append({"role": m.role, "content": parts})
    return out


def to_hf_messages(messages: list[Message]) -> tuple[list[dict[str, Any]], list[Image.Image]]:
    out: list[dict[str, Any]] = []
    images: list[Image.Image] = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        for p in m.content:
            if isinstance(p, str):
                parts.append({"type": "text", "text": p})
            else:
                parts.append({"type": "image"})
                images.append(load_image(p))
        out.append({"role": m.role, "content": parts})
    return out, images
