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


# --- Setting many attributes at once ------------------------------------------------------------------------

try:  # the SDK's span and its attribute mapping, to recognise them (see set_attributes)
    from opentelemetry.attributes import BoundedAttributes as _BoundedAttributes
    from opentelemetry.sdk.trace import _Span as _SdkSpan
except ImportError:  # no SDK (or another layout): every span's own set_attributes
    _SdkSpan = _BoundedAttributes = None  # type: ignore[assignment,misc]

_PLAIN = frozenset({str, bool, int, float})


def set_attributes(span: trace.Span, attributes: dict[str, object]) -> None:
    """`span.set_attributes(attributes)`, with the same outcome, for a dict of plain values.

    The SDK cleans every value it is given (a Python call per value and per list item, and Sequence /
    Mapping isinstance tests through the ABCs): on a model call's span that was ~43k of its ~360k
    instructions (callgrind, google-genai plain call, garbage collector off). What it stores for a value
    that is already a str, bool, int or float, or a list or tuple of one of those, is that value (a list
    as a tuple), and it drops nothing while the span has room and no length limit: then, for the SDK's
    own span, the values go in as the SDK itself puts them (under the span's lock and the mapping's, in
    order, a key set again moving to the end). Anything else - another span type, a length limit, a span
    near its attribute limit, one value of another type - goes through `span.set_attributes` as it is.
    """
    # One function, the short way inline (the per-call path of every model call: see providers/_core.ModelCall).
    try:
        bounded = getattr(span, "_attributes", None) if type(span) is _SdkSpan else None
        if (
            type(bounded) is _BoundedAttributes
            and bounded.max_value_len is None
            and (bounded.maxlen is None or len(bounded._dict) + len(attributes) <= bounded.maxlen)
        ):
            ready: list[tuple[str, object]] | None = []
            plain = _PLAIN
            for key, value in attributes.items():
                kind = type(value)
                if type(key) is not str or not key:
                    ready = None
                    break
                if kind is list or kind is tuple:
                    # Items of one plain type (SDKs before mixed sequences were allowed drop the others).
                    first = type(value[0]) if value else str
                    for item in value:
                        if type(item) is not first or first not in plain:
                            break
                    else:
                        ready.append((key, tuple(value)))
                        continue
                elif kind in plain:
                    ready.append((key, value))
                    continue
                ready = None
                break
            if ready is not None:
                with span._lock:  # type: ignore[attr-defined]
                    if span._end_time is None and not bounded._immutable:  # type: ignore[attr-defined]
                        with bounded._lock:
                            values = bounded._dict
                            for key, value in ready:
                                if key in values:
                                    del values[key]
                                values[key] = value
                        return
    except AttributeError:  # an SDK whose private names moved: the public way, as for any other span
        pass
    # Nothing set: the span's own way (another span type, a limit, a value of another type, an ended span).
    span.set_attributes(attributes)
