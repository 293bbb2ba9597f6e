"""Convert ``Message`` lists into the two chat wire formats we speak.

* OpenAI format (vLLM server, vLLM in-process ``LLM.chat``): images inline as base64 data URLs,
  each with its content digest as vLLM's per-part ``uuid`` (the chat API's form of
  ``multi_modal_uuids``): the server's processor cache and prefix cache key on it instead of
  hashing the pixels again, and one image is one key across requests, jobs and servers. It is
  ``images.image_digest`` (the hash the response-cache key and the logged sample use) of the
  image as sent, after the image budget; a server that does not know the field ignores it.
* transformers format (``processor.apply_chat_template``): ``{"type": "image"}`` placeholders in
  order, with the PIL images passed to the processor separately.

Both produce the same prompt through the model's chat template, which is what makes the
vLLM/transformers parity test meaningful.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image

from ledgermind.backends.base import Message, map_parts
from ledgermind.backends.images import data_url, image_digest
from ledgermind.image_decode import decode_image


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    return map_parts(messages, text_part, image_part)


def image_part(img: Image.Image | Path) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": data_url(img)}, "uuid": image_digest(img)}


def to_hf_messages(messages: list[Message]) -> tuple[list[dict[str, Any]], list[Image.Image]]:
    images: list[Image.Image] = []

    def placeholder(p: Image.Image | Path) -> dict[str, Any]:
        images.append(decode_image(p).image)  # after the budget: within its pixels
        return {"type": "image"}

    return map_parts(messages, text_part, placeholder), images
