"""Test and benchmark doubles that behave like the real thing at its interface (a local
OpenAI-compatible server, an OCR engine that counts its real recognitions), and a run of the
agent against those servers composed as the CLI composes it. Never imported by the library itself."""
