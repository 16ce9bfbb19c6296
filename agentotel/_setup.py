"""`instrument()`, `flush()`, `shutdown()`: the tracer provider, its processors and exporters, the library patches.

With no tracer provider configured, `instrument()` installs the embedded default: an SDK
`TracerProvider` whose `BatchSpanProcessor` feeds a `ParquetSpanExporter` in `directory`, else
`$AGENTOTEL_DIR`, else `./agentotel-traces` (and/or OTLP, per `OTEL_TRACES_EXPORTER`). With a provider
already configured (say by `opentelemetry-instrument`) it only adds run attribution and the library
patches, unless a directory is given. Spans are flushed at interpreter exit and on SIGTERM.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from agentotel import _config, _tracing
from agentotel.cases import _active as _replays
from agentotel.semconv import AGENTOTEL_REPLAY_CASE as _REPLAY_CASE

__all__ = ["flush", "instrument", "shutdown", "uninstrument"]

log = logging.getLogger("agentotel")

_SIGNAL_FLUSH_TIMEOUT_S = 10.0


class _Accounted(SpanExporter):
    """An exporter that counts the spans its receiver accepted (an OTLP 401 or an unreachable endpoint
    is not durable), so `flush()` can tell; agentotel's Parquet exporter keeps that count itself."""

    def __init__(self, exporter: SpanExporter) -> None:
        self.inner = exporter
        self.exported = 0

    def export(self, spans: Any) -> SpanExportResult:
        result = self.inner.export(spans)
        if result is SpanExportResult.SUCCESS:
            self.exported += len(spans)
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))

    def shutdown(self) -> None:
        self.inner.shutdown()


def _is_replay(span: ReadableSpan) -> bool:
    attributes = span.attributes
    if not attributes:
        return False
    # The SDK's BoundedAttributes answers `in` through __getitem__ (a lock, a KeyError): read its dict.
    return _REPLAY_CASE in getattr(attributes, "_dict", attributes)


class _CountingBatchProcessor(BatchSpanProcessor):
    """A BatchSpanProcessor that counts the spans handed to it, so `flush()` can tell if all were written."""

    def __init__(self, exporter: SpanExporter) -> None:
        if not hasattr(exporter, "exported"):
            exporter = _Accounted(exporter)
        super().__init__(exporter)
        self.exporter = exporter
        self.ended = 0
        self._count_lock = threading.Lock()

    def on_end(self, span: ReadableSpan) -> None:
        # A regression case's replay is not production data: agentotel.cases records it in its own store.
        if _replays.ever and _is_replay(span):
            return
        if span.context is not None and span.context.trace_flags.sampled:
            with self._count_lock:
                self.ended += 1
        super().on_end(span)


@dataclass
class _State:
    settings: _config.Settings
    provider: Any  # the provider whose tracers agentotel uses
    processors: list[SpanProcessor] = field(default_factory=list)  # the ones instrument() added
    directories: list[Path] = field(default_factory=list)  # where those write Parquet
    patched: bool = False


_lock = threading.RLock()
_state: _State | None = None
_own_provider: TracerProvider | None = None  # the global provider agentotel created (set once per process)
_exit_hooks = False
_previous_sigterm: Any = None


def instrument(
    directory: str | os.PathLike[str] | None = None,
    *,
    service_name: str | None = None,
    capture_content: bool | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    exporters: Iterable[SpanExporter] | None = None,
) -> None:
    """Record every supported LLM call, tool and run as spans, kept as Parquet in `directory`.

    Idempotent: a second call changes nothing (after `uninstrument()` it restores the library
    patches), except that a directory given to it under a provider configured elsewhere (say
    `opentelemetry-instrument` ran first) adds Parquet there; call `shutdown()` first to start over
    with other settings. `exporters` are extra
    SpanExporters fed every span. Raises OSError when the directory cannot be written (so you learn
    it now, not from a log line later) and `agentotel._config.ConfigError` for an unusable setting.
    """
    global _state
    with _lock:
        if _state is not None:
            if directory is not None:
                _add_directory(_state, Path(directory).expanduser())
            _patch(_state)  # after uninstrument(), instrument() restores the patches
            return
        settings = _config.Settings.resolve(directory=directory, service_name=service_name, capture_content=capture_content)
        provider = tracer_provider if tracer_provider is not None else _configured_provider()
        # Build every exporter before touching global state, so a failure leaves nothing half-installed.
        processors: list[SpanProcessor] = []
        writes_parquet = directory is not None if provider is not None else "parquet" in settings.traces_exporters
        try:
            if provider is None:
                processors.extend(_CountingBatchProcessor(e) for e in _exporters_for(settings))
            elif directory is not None:
                # A configured provider already exports where its owner wants; the directory adds Parquet only.
                processors.append(_CountingBatchProcessor(_parquet_exporter(settings.directory)))
            processors.extend(_CountingBatchProcessor(e) for e in exporters or ())
        except BaseException:
            for processor in processors:
                processor.shutdown()
            raise
        if provider is None:
            provider = _default_provider(settings)
        _config.configure(settings)
        # agentotel's own tracers follow the provider chosen here, global or not.
        _tracing.set_providers(provider if trace.get_tracer_provider() is not provider else None)
        state = _State(settings=settings, provider=provider)
        if writes_parquet:
            state.directories.append(settings.directory)
        if hasattr(provider, "add_span_processor"):
            _add_attribution(provider)
            for processor in processors:
                provider.add_span_processor(processor)
            state.processors = processors
        elif processors:
            log.warning("agentotel: %r is not an SDK TracerProvider; no exporter could be added to it", provider)
            for processor in processors:
                processor.shutdown()
        _state = state
        _patch(state)
        _install_exit_hooks()


def _add_directory(state: _State, directory: Path) -> None:
    """A later `instrument(directory)`: under a provider someone else configured (`opentelemetry-instrument`
    ran our entry point first), the directory adds Parquet, as it would have on the first call."""
    if any(Path(d).resolve() == directory.resolve() for d in state.directories):
        return
    if state.provider is _own_provider or not hasattr(state.provider, "add_span_processor"):
        log.warning(
            "agentotel: already instrumented (spans go to %s); instrument(%r) changes nothing: call shutdown() first",
            ", ".join(map(str, state.directories)) or "the configured exporters", str(directory),
        )
        return
    processor = _CountingBatchProcessor(_parquet_exporter(directory))
    state.provider.add_span_processor(processor)
    state.processors.append(processor)
    state.directories.append(directory)


def uninstrument() -> None:
    """Remove the library patches; spans already recorded are still exported (see `shutdown()`)."""
    with _lock:
        if _state is not None and _state.patched:
            _call_providers("uninstrument_providers")
            _state.patched = False


def flush(timeout_s: float = 30) -> bool:
    """Export everything recorded so far; True only when all of it is durable (written and fsync'd)."""
    with _lock:
        state = _state
    if state is None:
        provider = trace.get_tracer_provider()
        return bool(provider.force_flush(int(timeout_s * 1000))) if hasattr(provider, "force_flush") else True
    ok = True
    for processor in state.processors:
        ended = processor.ended
        ok = processor.force_flush(int(timeout_s * 1000)) and ok
        # Every exporter counts what its receiver accepted (see _Accounted): all of it, or not durable.
        ok = ok and processor.exporter.force_flush() and processor.exporter.exported >= ended
    if not state.processors and hasattr(state.provider, "force_flush"):
        ok = bool(state.provider.force_flush(int(timeout_s * 1000)))
    return ok


def shutdown() -> None:
    """Flush, fold the WAL into Parquet, stop the exporters agentotel added and remove the patches."""
    global _state
    with _lock:
        state = _state
        if state is None:
            return
        uninstrument()
        flush()
        for processor in state.processors:
            processor.shutdown()
        _detach(state.provider, state.processors)
        _tracing.set_providers(None)
        _config.reset()
        _state = None


def _configured_provider() -> trace.TracerProvider | None:
    """The global provider when someone (or an earlier instrument()) configured one, else None."""
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider):
        return None
    if provider is _own_provider:
        return None  # ours, from before a shutdown(): reuse it with fresh exporters
    return provider


def _default_provider(settings: _config.Settings) -> TracerProvider:
    global _own_provider
    if _own_provider is None:
        resource = Resource.create({SERVICE_NAME: settings.service_name} if settings.service_name else {})
        # agentotel flushes and folds at exit itself (see _at_exit), in the right order.
        _own_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        trace.set_tracer_provider(_own_provider)
    return _own_provider


def _exporters_for(settings: _config.Settings) -> list[SpanExporter]:
    exporters: list[SpanExporter] = []
    try:
        for name in settings.traces_exporters:
            if name == "parquet":
                exporters.append(_parquet_exporter(settings.directory))
            elif name == "otlp":
                exporters.append(_otlp_exporter(settings.otlp_protocol))
            elif name == "console":
                from opentelemetry.sdk.trace.export import ConsoleSpanExporter

                exporters.append(ConsoleSpanExporter())
    except BaseException:
        for exporter in exporters:  # release the WAL of a Parquet exporter made before the failure
            exporter.shutdown()
        raise
    return exporters


def _parquet_exporter(directory: Path) -> SpanExporter:
    from agentotel.store import ParquetSpanExporter

    try:
        return ParquetSpanExporter(directory)
    except OSError as exc:
        raise OSError(
            exc.errno,
            f"agentotel cannot write traces to {directory}: {exc.strerror or exc} "
            "(pass instrument(directory=...) or set AGENTOTEL_DIR to a writable folder)",
            str(exc.filename or directory),
        ) from exc


def _otlp_exporter(protocol: str) -> SpanExporter:
    # The OTLP exporters read OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, ...) themselves.
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    else:
        if protocol != "http/protobuf":
            log.warning("agentotel: OTLP protocol %r is not supported here; using http/protobuf", protocol)
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    return OTLPSpanExporter()


def _add_attribution(provider: Any) -> None:
    if getattr(provider, "_agentotel_attribution", False):
        return
    try:
        from agentotel.runs import AttributionProcessor
    except ModuleNotFoundError as exc:
        if exc.name != "agentotel.runs":
            raise
        log.debug("agentotel: agentotel.runs is not available; spans are not attributed to runs")
        return
    provider.add_span_processor(AttributionProcessor())
    provider._agentotel_attribution = True


def _patch(state: _State) -> None:
    if not state.patched:
        _call_providers("instrument_providers")
        state.patched = True


def _call_providers(function: str) -> None:
    try:
        import agentotel.providers as providers
    except ModuleNotFoundError as exc:
        if exc.name != "agentotel.providers":
            raise
        return
    getattr(providers, function)()


def _detach(provider: Any, processors: list[SpanProcessor]) -> None:
    """Take shut-down processors off the provider, so a later instrument() starts clean.

    The SDK has no public way to remove a span processor; a stopped BatchSpanProcessor left attached
    would only log on every span, so this is best effort.
    """
    multi = getattr(provider, "_active_span_processor", None)
    current = getattr(multi, "_span_processors", None)
    if isinstance(current, tuple):
        with getattr(multi, "_lock", threading.Lock()):
            multi._span_processors = tuple(p for p in current if p not in processors)


def _install_exit_hooks() -> None:
    global _exit_hooks, _previous_sigterm
    if _exit_hooks:
        return
    _exit_hooks = True
    atexit.register(_at_exit)
    # Signal handlers can only be installed from the main thread; elsewhere exit flushing still works.
    if threading.current_thread() is threading.main_thread():
        try:
            _previous_sigterm = signal.getsignal(signal.SIGTERM)
            signal.signal(signal.SIGTERM, _on_sigterm)
        except (ValueError, OSError):  # pragma: no cover - e.g. an embedded interpreter
            _previous_sigterm = None


def _at_exit() -> None:
    try:
        shutdown()
    except Exception:  # noqa: BLE001 - never turn a clean exit into a traceback
        log.exception("agentotel: flushing spans at exit failed")


def _on_sigterm(signum: int, frame: Any) -> None:
    # Flush from a helper thread with a deadline: if the signal interrupted code holding a lock the
    # flush needs, waiting here would hang the process instead of letting it terminate.
    worker = threading.Thread(target=_flush_quietly, name="agentotel-sigterm-flush", daemon=True)
    worker.start()
    worker.join(_SIGNAL_FLUSH_TIMEOUT_S)
    previous = _previous_sigterm
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_IGN:
        return
    else:  # the default action: terminate, as if agentotel had not been there
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


def _flush_quietly() -> None:
    try:
        flush(_SIGNAL_FLUSH_TIMEOUT_S)
    except Exception:  # noqa: BLE001
        log.exception("agentotel: flushing spans on SIGTERM failed")
