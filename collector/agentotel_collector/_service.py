"""What an export means, independent of the protocol: authorise, admit, convert, write durably."""

from __future__ import annotations

import contextlib
import hmac
import threading
from typing import Iterator

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from ._convert import Converted, InvalidRequest, TooManySpans, convert, parse_protobuf
from ._ingest import Busy, Ingest
from ._otlp_json import parse_request
from ._settings import Settings
from ._watch import Metrics

# google.rpc.Code numbers, used in Status bodies (HTTP) and as gRPC status codes.
INVALID_ARGUMENT = 3
NOT_FOUND = 5
RESOURCE_EXHAUSTED = 8
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
UNAUTHENTICATED = 16


class Service:
    """The receiver's behaviour shared by OTLP/HTTP and OTLP/gRPC."""

    def __init__(self, settings: Settings, ingest: Ingest, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.ingest = ingest
        self.metrics = metrics or Metrics()
        self._tokens = settings.tokens()
        self._slots = threading.BoundedSemaphore(settings.max_concurrent_requests)
        self._inflight = 0
        self._idle = threading.Condition()
        self.stopping = False

    @property
    def open_to_all(self) -> bool:
        """No token is configured: every sender that reaches a listener may write spans."""
        return not self._tokens

    def authorized(self, header: str | None) -> bool:
        """Whether an Authorization header carries an accepted bearer token (always, when none is configured)."""
        if not self._tokens:
            return True
        scheme, _, presented = (header or "").strip().partition(" ")
        candidate = presented.strip().encode("utf-8") if scheme.lower() == "bearer" else b""
        # Compare against every token, without stopping early, so timing says nothing about which matched.
        matched = False
        for token in self._tokens:
            matched |= hmac.compare_digest(candidate, token)
        return matched and bool(candidate)

    @contextlib.contextmanager
    def in_flight(self) -> Iterator[None]:
        """Count a request from arrival to answer, so a stop can wait for it; Busy once stopping."""
        with self._idle:
            if self.stopping:
                raise Busy("the collector is shutting down", "shutting_down")
            self._inflight += 1
        try:
            yield
        finally:
            with self._idle:
                self._inflight -= 1
                self._idle.notify_all()

    @contextlib.contextmanager
    def decoding(self) -> Iterator[None]:
        """Hold one of the slots that bound decoding memory; Busy when none frees up in time.

        A request holds its slot while it reads, decompresses, parses and converts, and gives it up
        before waiting for the disk: the write queue (`queue_bytes`) bounds what waits there.
        """
        if not self.take_slot():
            raise Busy("too many requests in progress")
        try:
            yield
        finally:
            self.give_slot()

    def take_slot(self, wait: bool = True) -> bool:
        """Take a decoding slot, waiting up to `admission_timeout_s` for one (or, without `wait`, only if one is free now).

        Whether one was taken; `give_slot()` gives it back. `decoding()` is the usual way to hold one.
        """
        return self._slots.acquire(timeout=self.settings.admission_timeout_s) if wait else self._slots.acquire(blocking=False)

    def give_slot(self) -> None:
        self._slots.release()

    def parse(self, data: bytes, protocol: str, *, otlp_json: bool = False) -> ExportTraceServiceRequest:
        """A body as a request: protobuf (DecodeError when it is none) or OTLP/JSON (JsonError); TooManySpans,
        counted, past the per-request limit, before any span is built."""
        try:
            if otlp_json:
                return parse_request(data, max_spans=self.settings.max_spans_per_request)
            return parse_protobuf(data, max_spans=self.settings.max_spans_per_request)
        except TooManySpans as exc:
            self.metrics.rejected_spans(protocol, refusal_reason(exc), exc.spans)
            raise

    def convert(self, request: ExportTraceServiceRequest, protocol: str) -> Converted:
        """The request's usable spans as rows (TooManySpans past the per-request limit); refused spans are counted."""
        try:
            converted = convert(request, max_spans=self.settings.max_spans_per_request)
        except (TooManySpans, InvalidRequest) as exc:
            spans = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
            self.metrics.rejected_spans(protocol, refusal_reason(exc), spans)
            raise
        self.metrics.rejected_spans(protocol, "invalid_id", converted.rejected)
        return converted

    def store(self, converted: Converted, protocol: str) -> ExportTraceServiceResponse:
        """Write the rows durably and build the answer, reporting rejected spans; Busy when the store cannot take them now."""
        if converted.batches:
            self.ingest.write(converted)
        return self.accepted(converted, protocol)

    def accepted(self, converted: Converted, protocol: str) -> ExportTraceServiceResponse:
        """Count the request's spans as accepted and build its answer (rejected spans reported); once they are durable."""
        self.metrics.accepted(protocol, converted.accepted)
        response = ExportTraceServiceResponse()
        if converted.rejected:
            response.partial_success.rejected_spans = converted.rejected
            response.partial_success.error_message = converted.error_message
        return response

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until no request is in progress; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._inflight == 0, timeout_s)


def refusal_reason(exc: BaseException) -> str:
    """The stable reason token of a refusal raised by the shared write path."""
    if isinstance(exc, Busy):
        return exc.reason
    if isinstance(exc, TooManySpans):
        return "too_many_spans"
    if isinstance(exc, InvalidRequest):
        return "invalid_timestamp"  # the one value the conversion refuses a whole request for
    return "internal"


__all__ = ["Busy", "Service", "refusal_reason"]
