"""`opentelemetry-instrument python agent.py` support: the `agentotel` opentelemetry_instrumentor entry point.

Under `opentelemetry-instrument`, the configurator has already installed the tracer provider when
instrumentors run, so this does what `agentotel.instrument()` does with a provider configured: run
attribution and the library patches, spans going wherever that provider sends them.
"""

from __future__ import annotations

from typing import Any, Collection

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]


class AgentotelInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Patches openai, anthropic, google-genai and botocore (whichever are installed, now or when imported later)."""

    def instrumentation_dependencies(self) -> Collection[str]:
        # Either client library is optional: the patches skip what is not installed, so no
        # dependency may block the other.
        return ()

    def _instrument(self, **kwargs: Any) -> None:
        from agentotel import _setup

        _setup.instrument(tracer_provider=kwargs.get("tracer_provider"))

    def _uninstrument(self, **kwargs: Any) -> None:
        from agentotel import _setup

        _setup.uninstrument()
