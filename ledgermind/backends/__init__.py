"""Model backends. Importing this package registers every backend in ``BACKENDS``; heavy
dependencies (torch, transformers, vllm) are imported only when a backend is used."""

from ledgermind.backends import replay, scripted, transformers_local, vllm_inprocess, vllm_server  # noqa: F401
