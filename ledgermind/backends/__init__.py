"""Model backends. Importing this package registers every backend in ``BACKENDS``; heavy
dependencies (torch, transformers, vllm) are imported only when a backend is used."""

from ledgermind.backends import replay, scripted, transformers_local, vllm_inprocess, vllm_server  # noqa: F401
from ledgermind.backends.base import BACKENDS, Backend, GenerationRequest, Message, Reply
from ledgermind.backends.build import build_backend
from ledgermind.backends.cache import CachedBackend, CacheMiss, CacheMode, ResponseCache

__all__ = [
    "BACKENDS",
    "Backend",
    "CacheMiss",
    "CacheMode",
    "CachedBackend",
    "GenerationRequest",
    "Message",
    "Reply",
    "ResponseCache",
    "build_backend",
]
