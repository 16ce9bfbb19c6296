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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from agentotel import _config, _tracing
from agentotel._internal import report_internal_error
from agentotel.cases import _active as _replays
from agentotel.semconv import AGENTOTEL_REPLAY_CASE as _REPLAY_CASE

__all__ = ["flush", "instrument", "shutdown", "uninstrument"]

log = logging.getLogger("agentotel")

_SIGNAL_FLUSH_TIMEOUT_S = 10.0

# LiteLLM's OpenTelemetry callback writes a call's attributes onto the span current at the call when there is one
# (an agent's run span: its operation, model and tokens overwritten, each call's by the next) unless this says to
# start a span of its own, a child (store/dialects.py reads it). A user's own setting is kept.
_LITELLM_OWN_SPAN = "USE_OTEL_LITELLM_REQUEST_SPAN"


class _Accounted(SpanExporter):
    """An exporter that counts the spans its receiver accepted (an OTLP 401 or an unreachable endpoint
    is not durable), so `flush()` can tell; agentotel's Parquet exporter keeps that count itself."""

    def __init__(self, exporter: SpanExporter) -> None:
        self.inner = exporter
        self.exported = 0
        self.failed = 0

    def export(self, spans: Any) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except BaseException:
            self.failed += len(spans)
            raise  # the batch processor logs it
        if result is SpanExportResult.SUCCESS:
            self.exported += len(spans)
        else:
            self.failed += len(spans)
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))

    def shutdown(self) -> None:
        self.inner.shutdown()


# The embedded default's queue and batches. An agent ends spans in bursts (parallel tool calls, a tight
# loop over documents): the SDK's 2,048-span queue drops the oldest spans silently once full, and a
# thread-busy process starves the export thread (8 threads x 2,500 tool calls kept 4,184 of 20,001).
# A larger queue absorbs a burst; past it, back-pressure: the thread ending a span waits (at most
# _BACKPRESSURE_WAIT_S) for the exporter to make room instead of dropping.
_QUEUE_SPANS = 16_384
_EXPORT_BATCH_SPANS = 2_048  # one WAL append and fsync each
_BACKPRESSURE_WAIT_S = 2.0
def _is_replay(span: ReadableSpan) -> bool:
    attributes = span.attributes
    if not attributes:
        return False
    # The SDK's BoundedAttributes answers `in` through __getitem__ (a lock, a KeyError): read its dict.
    return _REPLAY_CASE in getattr(attributes, "_dict", attributes)


class _CountingBatchProcessor(BatchSpanProcessor):
    """A BatchSpanProcessor that counts the spans handed to it, so `flush()` can tell if all were written,
    and that holds a span's end back while its queue is full instead of dropping a span (see above)."""

    def __init__(self, exporter: SpanExporter) -> None:
        if not hasattr(exporter, "exported"):
            exporter = _Accounted(exporter)
        super().__init__(exporter, max_queue_size=_QUEUE_SPANS, max_export_batch_size=_EXPORT_BATCH_SPANS)
        self.exporter = exporter
        self.ended = 0
        self.dropped = 0  # spans the queue had no room for (counted, logged, and a metric)
        self.reported = self.reported_dropped = self.reported_failed = 0  # the losses flush() reported already
        self._count_lock = threading.Lock()
        self._stalled = False  # the exporter made no room within the wait: drop (counted) until it does
        # The SDK's queue, worker thread and wake-up event (not public API; the last two are replaced in a
        # forked child, so they are looked up when needed): without them, no back-pressure.
        self._inner = getattr(self, "_batch_processor", None)
        self._queue = getattr(self._inner, "_queue", None)
        if getattr(self._queue, "maxlen", None) is None or not hasattr(self._inner, "_worker_awaken"):
            self._queue = None

    def on_end(self, span: ReadableSpan) -> None:
        # A regression case's replay is not production data: agentotel.cases records it in its own store.
        if _replays.ever and _is_replay(span):
            return
        if span.context is None or not span.context.trace_flags.sampled:
            return
        with self._count_lock:
            self.ended += 1
        queue = self._queue
        if queue is not None and len(queue) >= queue.maxlen and not self._room(queue):
            self._drop()
        super().on_end(span)

    def _room(self, queue: Any) -> bool:
        """Wait for the export thread to make room in the full queue; False when it did not in time."""
        if self._stalled:
            if len(queue) > queue.maxlen // 2:
                return False
            self._stalled = False  # the exporter caught up: wait again next time
        if threading.current_thread() is getattr(self._inner, "_worker_thread", None):
            return False  # the export thread itself cannot wait for itself
        deadline = time.monotonic() + _BACKPRESSURE_WAIT_S
        pause = 0.0005
        while len(queue) >= queue.maxlen:
            self._inner._worker_awaken.set()  # type: ignore[union-attr]
            if time.monotonic() >= deadline:
                self._stalled = True
                return False
            time.sleep(pause)  # let the export thread run (and take the GIL)
            pause = min(pause * 2, 0.02)
        return True

    def _drop(self) -> None:
        # The SDK drops the oldest span of a full queue when this one is added: count it.
        with self._count_lock:
            self.dropped += 1
            first = self.dropped == 1
        if first:
            log.warning(
                "agentotel: the span queue is full (%d spans) and the exporter does not keep up: spans are "
                "being dropped (counted; flush() returns False and logs how many)", _QUEUE_SPANS,
            )
        _dropped_counter().add(1)


@dataclass
class _State:
    settings: _config.Settings
    provider: Any  # the provider whose tracers agentotel uses
    processors: list[SpanProcessor] = field(default_factory=list)  # the ones instrument() added
    directories: list[Path] = field(default_factory=list)  # where those write Parquet
    unusable: list[Path] = field(default_factory=list)  # folders that could not be opened: nothing kept there
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
    SpanExporters fed every span. A directory that cannot be written (read-only, full, a file in
    the way) is one warning: the program runs on untouched, its spans are not kept there and `flush()`
    returns False; `shutdown()` then `instrument()` tries again. Raises
    `agentotel._config.ConfigError` for a setting it cannot read (a mistyped capture setting must
    not silently record content).
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
                parquet = _parquet_exporter(settings.directory)
                if parquet is not None:
                    processors.append(_CountingBatchProcessor(parquet))
            processors.extend(_CountingBatchProcessor(e) for e in exporters or ())
        except BaseException:
            for processor in processors:
                processor.shutdown()
            raise
        # An unusable folder was one warning (see _parquet_exporter): the program runs on without it.
        opened = writes_parquet and any(_writes_to(p, settings.directory) for p in processors)
        if provider is None:
            provider = _default_provider(settings)
        _config.configure(settings)
        # agentotel's own tracers follow the provider chosen here, global or not.
        _tracing.set_providers(provider if trace.get_tracer_provider() is not provider else None)
        state = _State(settings=settings, provider=provider)
        if opened:
            state.directories.append(settings.directory)
        elif writes_parquet:
            state.unusable.append(settings.directory)
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
        os.environ.setdefault(_LITELLM_OWN_SPAN, "true")
        try:
            _patch(state)
            _install_exit_hooks()
        except Exception as exc:  # noqa: BLE001 - the program runs on; spans already wired keep flowing
            report_internal_error("instrument.patch", exc)


def _writes_to(processor: SpanProcessor, directory: Path) -> bool:
    return getattr(getattr(processor, "exporter", None), "directory", None) is not None and Path(
        processor.exporter.directory  # type: ignore[attr-defined]
    ) == Path(directory)


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
    exporter = _parquet_exporter(directory)
    if exporter is None:
        state.unusable.append(directory)
        return
    processor = _CountingBatchProcessor(exporter)
    state.provider.add_span_processor(processor)
    state.processors.append(processor)
    state.directories.append(directory)


def uninstrument() -> None:
    """Remove the library patches; spans already recorded are still exported (see `shutdown()`)."""
    with _lock:
        if _state is not None and _state.patched:
            _call_providers("uninstrument_providers")
            _call_integrations("uninstrument_integrations")
            _state.patched = False


def flush(timeout_s: float = 30) -> bool:
    """Export everything recorded so far; True only when all of it is durable (written and fsync'd).

    Never raises: an exporter or processor that fails is logged once and makes the result False.
    """
    try:
        return _flush(timeout_s)
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the program
        report_internal_error("flush", exc)
        return False


def _flush(timeout_s: float) -> bool:
    with _lock:
        state = _state
    if state is None:
        provider = trace.get_tracer_provider()
        return bool(provider.force_flush(int(timeout_s * 1000))) if hasattr(provider, "force_flush") else True
    ok = not state.unusable
    for processor in state.processors:
        ended = processor.ended
        ok = processor.force_flush(int(timeout_s * 1000)) and ok
        ok = _accounted(processor, ended) and ok
    if not state.processors and hasattr(state.provider, "force_flush"):
        ok = bool(state.provider.force_flush(int(timeout_s * 1000))) and ok
    return ok


def _accounted(processor: Any, ended: int) -> bool:
    """Whether every span ended before this flush is durable, and no span was lost since the last flush.

    Every exporter counts what its receiver accepted and what failed (see _Accounted), the processor
    what its full queue dropped. A loss is reported once, by the flush() after it, with one log line
    that says how many: a later flush() is True again once everything since is durable (a disk that
    was full for a moment does not make every later flush() False).
    """
    exporter = processor.exporter
    try:
        exporter.force_flush()  # an exporter with a buffer of its own (OTLP) sends it now
    except Exception as exc:  # noqa: BLE001
        report_internal_error("flush.exporter", exc)
        return False
    dropped, failed = processor.dropped, getattr(exporter, "failed", 0)
    lost = dropped + failed
    new = lost - processor.reported
    processor.reported = lost
    if new > 0:
        log.warning(
            "agentotel: %d spans were not kept since the last flush (%d dropped: span queue full, %d failed to "
            "export; %d in all so far)", new, dropped - processor.reported_dropped, failed - processor.reported_failed, lost,
        )
    processor.reported_dropped, processor.reported_failed = dropped, failed
    return new <= 0 and exporter.exported + lost >= ended


_counter: Any = None


def _dropped_counter() -> Any:
    global _counter
    if _counter is None:
        from agentotel.semconv import METRIC_AGENTOTEL_SPANS_DROPPED

        _counter = _tracing.get_meter().create_counter(
            METRIC_AGENTOTEL_SPANS_DROPPED, unit="{span}", description="Spans dropped because the span queue was full."
        )
    return _counter


def shutdown() -> None:
    """Flush, fold the WAL into Parquet, stop the exporters agentotel added and remove the patches."""
    global _state
    with _lock:
        state = _state
        if state is None:
            return
        try:
            uninstrument()
        except Exception as exc:  # noqa: BLE001 - shutdown never raises; the rest still runs
            report_internal_error("shutdown.uninstrument", exc)
        flush()
        for processor in state.processors:
            try:
                processor.shutdown()
            except Exception as exc:  # noqa: BLE001
                report_internal_error("shutdown.processor", exc)
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
                parquet = _parquet_exporter(settings.directory)
                if parquet is not None:
                    exporters.append(parquet)
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


def _parquet_exporter(directory: Path) -> SpanExporter | None:
    """The Parquet exporter for `directory`, or None with one warning when the folder cannot be written."""
    from agentotel.store import ParquetSpanExporter

    try:
        return ParquetSpanExporter(directory)
    except OSError as exc:
        log.warning(
            "agentotel cannot write traces to %s: %s; the program runs on but its spans are not kept "
            "(pass instrument(directory=...) or set AGENTOTEL_DIR to a writable folder)",
            exc.filename or directory, exc.strerror or exc,
        )
        return None


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
        _call_integrations("instrument_integrations")
        state.patched = True


def _call_providers(function: str) -> None:
    try:
        import agentotel.providers as providers
    except ModuleNotFoundError as exc:
        if exc.name != "agentotel.providers":
            raise
        return
    getattr(providers, function)()


def _call_integrations(function: str) -> None:
    """The agent frameworks' patches (agentotel.integrations), like the providers'."""
    try:
        import agentotel.integrations as integrations
    except ModuleNotFoundError as exc:
        if exc.name != "agentotel.integrations":
            raise
        return
    getattr(integrations, function)()


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
