"""Patches for LLM client libraries (openai, anthropic): one `chat {model}` / `embeddings {model}` span per call.

`instrument_providers()` patches every supported library that is importable now, or when it is imported
later; `uninstrument_providers()` removes every patch. Both are idempotent.
"""

from __future__ import annotations

from agentotel.providers._core import instrument_providers, uninstrument_providers

__all__ = ["instrument_providers", "uninstrument_providers"]
