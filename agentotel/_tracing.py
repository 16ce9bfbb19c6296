"""The tracer and meter every agentotel span and metric comes from.

`instrument(tracer_provider=...)` may name a provider other than the global one; every module asks
here instead of calling `trace.get_tracer` itself, so that choice is honoured everywhere.
"""

from __future__ import annotations

from opentelemetry import metrics, trace

SCOPE = "agentotel"

_tracer_provider: trace.TracerProvider | None = None
_meter_provider: metrics.MeterProvider | None = None


def set_providers(tracer_provider: trace.TracerProvider | None, meter_provider: metrics.MeterProvider | None = None) -> None:
    """Use these providers from now on (None: the global ones)."""
    global _tracer_provider, _meter_provider
    _tracer_provider, _meter_provider = tracer_provider, meter_provider


def tracer_provider() -> trace.TracerProvider:
    return _tracer_provider or trace.get_tracer_provider()


def get_tracer(scope: str = SCOPE) -> trace.Tracer:
    """A tracer of the configured provider, named for the instrumentation scope (agentotel, agentotel.openai, ...)."""
    from agentotel import __version__

    return tracer_provider().get_tracer(scope, __version__)


def get_meter(scope: str = SCOPE) -> metrics.Meter:
    from agentotel import __version__

    return (_meter_provider or metrics.get_meter_provider()).get_meter(scope, __version__)
