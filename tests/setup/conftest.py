"""Each setup test starts with no tracer provider installed and leaves none behind."""

from __future__ import annotations

import atexit
import signal

import pytest
from opentelemetry import trace
from opentelemetry.util._once import Once

from agentotel import _setup


def _reset_global_provider() -> None:
    # The OTel API lets a process set its global provider once; tests need a fresh start each time.
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None
    _setup._own_provider = None


@pytest.fixture(autouse=True)
def fresh_setup(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("AGENTOTEL_DIR", "OTEL_SERVICE_NAME", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL",
                 "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_RESOURCE_ATTRIBUTES"):
        monkeypatch.delenv(name, raising=False)
    previous = signal.getsignal(signal.SIGTERM)
    _reset_global_provider()
    yield
    _setup.shutdown()
    provider = trace.get_tracer_provider()
    if hasattr(provider, "shutdown"):
        provider.shutdown()
    _reset_global_provider()
    signal.signal(signal.SIGTERM, previous)
    atexit.unregister(_setup._at_exit)
    _setup._exit_hooks = False
