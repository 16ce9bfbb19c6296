"""The tracer and meter every agentotel span and metric comes from.

`instrument(tracer_provider=...)` may name a provider other than the global one; every module asks
here instead of calling `trace.get_tracer` itself, so that choice is honoured everywhere.
"""

from __future__ import annotations

import os

from opentelemetry import metrics, trace
from opentelemetry.environment_variables import OTEL_PYTHON_METER_PROVIDER

try:  # where the metrics API keeps its global provider (read directly: see meter_provider)
    from opentelemetry.metrics import _internal as _metrics_api
except ImportError:  # another API layout: meter_provider() asks the API every time
    _metrics_api = None  # type: ignore[assignment]

SCOPE = "agentotel"

_tracer_provider: trace.TracerProvider | None = None
_meter_provider: metrics.MeterProvider | None = None
_provider_variable_set: bool | None = None


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


def meter_provider() -> metrics.MeterProvider:
    """The configured meter provider, else the global one (the API's proxy while none is set).

    Asked once per model call. While no global provider is set, `metrics.get_meter_provider()` looks
    its variable up in `os.environ` on every call (~0.9 µs, as much as reading a request): the API's
    global is read directly instead, and the environment once (a provider named there is loaded by
    the API on its first call, which then sets the global).
    """
    global _provider_variable_set
    if _meter_provider is not None:
        return _meter_provider
    provider = getattr(_metrics_api, "_METER_PROVIDER", None)
    if provider is not None:
        return provider
    if _provider_variable_set is None:
        _provider_variable_set = OTEL_PYTHON_METER_PROVIDER in os.environ
    proxy = getattr(_metrics_api, "_PROXY_METER_PROVIDER", None)
    return proxy if proxy is not None and not _provider_variable_set else metrics.get_meter_provider()


def get_meter(scope: str = SCOPE) -> metrics.Meter:
    from agentotel import __version__

    return meter_provider().get_meter(scope, __version__)
