"""`ParquetSpanExporter`: the OTel SDK's finished spans, straight into the store (no OTLP encoding on the way)."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Sequence

import pyarrow as pa
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, StatusCode

from agentotel._internal import report_internal_error
from agentotel.store.schema import SpanColumns, encode_attributes
from agentotel.store.writer import StoreWriter

log = logging.getLogger("agentotel.store")

_EMPTY: tuple = ()
# Enum .name is a descriptor lookup; a dict is several times faster in the per-span loop.
_KIND = {kind: kind.name for kind in SpanKind}
_STATUS = {code: code.name for code in StatusCode}


def _plain(attributes: Any) -> Any:
    # The SDK's BoundedAttributes iterates under a lock, one Python call per key; a finished span can
    # no longer change, so reading the dict underneath is safe and several times faster.
    return getattr(attributes, "_dict", attributes)


def spans_to_batch(spans: Sequence[ReadableSpan]) -> pa.RecordBatch:
    """SDK spans as one record batch of `SPAN_SCHEMA`. Never raises on attribute values."""
    return _columns(spans).to_batch()


def _columns(spans: Sequence[ReadableSpan]) -> SpanColumns:
    columns = SpanColumns()
    resources: dict[int, tuple[Any, list[tuple[str, str]]]] = {}
    scopes: dict[int, tuple[str | None, str | None]] = {}
    append = columns.append_values  # positional: this loop is the exporter's hot path
    for span in spans:
        # ReadableSpan's properties copy (events, links) or wrap (attributes) on every access; read the
        # fields underneath when this is the SDK's own class, the public properties otherwise.
        if isinstance(span, ReadableSpan):
            context, parent, attributes = span._context, span._parent, _plain(span._attributes)
            events, links = span._events, span._links
        else:
            context, parent, attributes = span.context, span.parent, _plain(span.attributes)
            events, links = span.events, span.links
        resource = span.resource
        # Spans of one provider share one Resource object: encode its attributes once per batch.
        cached = resources.get(id(resource))
        if cached is None:
            resource_attributes = resource.attributes if resource is not None else {}
            cached = resources[id(resource)] = (resource_attributes, encode_attributes(resource_attributes))
        scope = span.instrumentation_scope
        names = scopes.get(id(scope))
        if names is None:
            names = scopes[id(scope)] = (scope.name, scope.version) if scope is not None else (None, None)
        status = span.status
        start = span.start_time or 0
        append(
            f"{context.trace_id:032x}",
            f"{context.span_id:016x}",
            f"{parent.span_id:016x}" if parent is not None else None,
            span.name,
            _KIND[span.kind],
            _STATUS[status.status_code],
            status.description,
            start,
            span.end_time or start,
            attributes,
            cached[0],
            cached[1],
            names[0],
            names[1],
            [(e.timestamp, e.name, _plain(e.attributes)) for e in events] if events else _EMPTY,
            [(f"{l.context.trace_id:032x}", f"{l.context.span_id:016x}", _plain(l.attributes)) for l in links]
            if links
            else _EMPTY,
        )
    return columns


class ParquetSpanExporter(SpanExporter):
    """Writes finished spans to the Parquet store in `directory`; durable (WAL fsync'd) when export returns SUCCESS.

    Raises OSError at construction when the directory cannot be written; after that it never raises:
    an I/O failure is logged once (with the path and the reason) and export returns FAILURE.
    """

    def __init__(self, directory: str | os.PathLike[str], **writer_options: Any) -> None:
        # Slow start: a short-lived process's spans are folded while it runs, not all at its exit.
        self._writer = StoreWriter(directory, **{"slow_start": True, **writer_options})
        self._lock = threading.Lock()
        self._shutdown = False
        self._logged: set[str] = set()
        self.exported = 0  # spans written durably so far
        self.failed = 0  # spans an export could not write

    @property
    def directory(self):
        return self._writer.directory

    @property
    def writer(self) -> StoreWriter:
        return self._writer

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            self._log_once("shutdown", "agentotel: export after shutdown to %s: spans dropped", self._writer.directory)
            return SpanExportResult.FAILURE
        inputs: list[str | None] = []
        outputs: list[str | None] = []
        try:
            # The inputs stay Python strings: the writer converts only what it stores of each conversation.
            batch = _columns(spans).to_batch(inputs=inputs, outputs=outputs)
        except Exception as exc:  # noqa: BLE001 - a conversion bug must not take the batch processor down
            self.failed += len(spans)
            report_internal_error("ParquetSpanExporter.export", exc)
            return SpanExportResult.FAILURE
        try:
            self._writer.append(batch, inputs=[inputs], outputs=[outputs])
        except OSError as exc:
            self.failed += len(spans)
            self._log_once(
                "io", "agentotel: cannot write spans to %s: %s (spans dropped)", exc.filename or self._writer.wal_path, exc.strerror or exc
            )
            return SpanExportResult.FAILURE
        except Exception as exc:  # noqa: BLE001 - a bug storing conversations must not take the batch processor down
            self.failed += len(spans)
            report_internal_error("ParquetSpanExporter.export", exc)
            return SpanExportResult.FAILURE
        self.exported += len(spans)
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """True when nothing this exporter was given has failed: every exported span is already fsync'd."""
        return not self._shutdown and self.failed == 0

    def shutdown(self) -> None:
        with self._lock:
            if self._shutdown:
                return
            self._shutdown = True
        try:
            self._writer.close()
        except Exception as exc:  # noqa: BLE001 - shutdown never raises; the WAL stays for recovery
            self._log_once("close", "agentotel: cannot fold the WAL of %s into Parquet: %s (recovered at the next start)", self._writer.directory, exc)

    def _log_once(self, key: str, message: str, *args: Any) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.error(message, *args)
