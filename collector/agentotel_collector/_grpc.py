"""OTLP/gRPC: opentelemetry.proto.collector.trace.v1.TraceService/Export, with the HTTP semantics.

Back-pressure answers UNAVAILABLE with a RetryInfo (as `grpc-status-details-bin`, which the Go
Collector's exporters read, and as `google.rpc.retryinfo-bin`, which the Python exporter reads).
gzip is handled by gRPC itself; its message-size limit (checked against the message's length prefix,
before the message is buffered) applies to the decompressed message. The token is checked from the
metadata before the message is read, and a message is read only with a decoding slot held, so
memory is bounded by the slots: 12 concurrent unauthenticated 60 MiB requests cost ~2 MB, 12
authenticated ones ~300 MB (collector/tests/test_collector_reliability.py).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

import grpc
from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.duration_pb2 import Duration
from google.protobuf.message import DecodeError
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from ._convert import InvalidRequest, TooManySpans
from ._ingest import Busy
from ._service import UNAVAILABLE, Service, refusal_reason

log = logging.getLogger("agentotel_collector")


_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


class _Refused(Exception):
    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "malformed") -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason


class _TraceService(grpc.GenericRpcHandler):
    """TraceService/Export, handled as a request *stream*: gRPC then hands over the message only when the
    handler asks for it, so the token is checked from the metadata before the message is read, and the
    message is read only once a decoding slot is held (memory is bounded by the slots, not the callers).
    The message arrives as bytes and is parsed here: a malformed one is INVALID_ARGUMENT, as HTTP's 400."""

    def __init__(self, service: Service) -> None:
        self._service = service
        self._handler = grpc.stream_unary_rpc_method_handler(
            self._export, request_deserializer=None, response_serializer=ExportTraceServiceResponse.SerializeToString
        )

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        return self._handler if handler_call_details.method == _EXPORT else None

    def _export(self, messages: Iterator[bytes], context: grpc.ServicerContext) -> ExportTraceServiceResponse:
        service = self._service
        peer = context.peer()  # now: once gRPC has ended a call itself, the context no longer says
        metadata = dict(context.invocation_metadata())
        if not service.authorized(metadata.get("authorization")):
            self._rejected(peer, grpc.StatusCode.UNAUTHENTICATED, "unauthorized", None, "missing or wrong bearer token")
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        size: int | None = None
        try:
            with service.in_flight():
                with service.decoding():
                    message = _read(messages, context)
                    size = len(message)
                    converted = service.convert(_parse(message, service), "grpc")
                    del message
                return service.store(converted, "grpc")
        except _Refused as refused:
            code, message, reason = refused.code, refused.message, refused.reason
        except (TooManySpans, InvalidRequest) as exc:
            message, reason = str(exc), refusal_reason(exc)
            code = grpc.StatusCode.INVALID_ARGUMENT
        except Busy as exc:
            message, reason = f"{exc}; retry later", refusal_reason(exc)
            code = grpc.StatusCode.UNAVAILABLE
            context.set_trailing_metadata(_retry_metadata(service.settings.retry_after_s, message))
        except Exception:  # noqa: BLE001 - a bug must cost one request, not the server; the trace goes to the log only
            log.exception("agentotel-collector: internal error handling a gRPC export")
            message, reason = "internal error in agentotel-collector (see its log)", "internal"
            code = grpc.StatusCode.INTERNAL
        self._rejected(peer, code, reason, size, message)
        context.abort(code, message)
        raise AssertionError("unreachable: abort raises")

    def _rejected(self, peer: str, code: grpc.StatusCode, reason: str, size: int | None, detail: str) -> None:
        """Log (rate-limited) and count one refused export; never the metadata or the message."""
        self._service.metrics.rejected("grpc", code.name, reason, peer=peer, method=_EXPORT, bytes=size, detail=detail)


def _read(messages: Iterator[bytes], context: grpc.ServicerContext) -> bytes:
    """The request message; _Refused when gRPC itself ended the call before handing it over."""
    try:
        message = next(messages, None)
        if message is not None:
            return message
    except grpc.RpcError:
        pass
    # No message: gRPC ended the call itself (the iterator raises or just ends, depending on timing, and
    # the context may still say active): a message past --max-decompressed-bytes (answered
    # RESOURCE_EXHAUSTED), or the sender gave up (its deadline passed while the request waited for a
    # slot, or it cancelled). An OTLP sender never sends a unary call without its message.
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        raise _Refused(grpc.StatusCode.CANCELLED, "the sender's deadline passed before the message was read", "cancelled")
    raise _Refused(grpc.StatusCode.RESOURCE_EXHAUSTED, "gRPC refused the message: larger than the limit, or cancelled", "too_large")


def _parse(message: bytes, service: Service) -> ExportTraceServiceRequest:
    try:
        return service.parse(message, "grpc")
    except DecodeError as exc:
        raise _Refused(grpc.StatusCode.INVALID_ARGUMENT, f"message is not a protobuf ExportTraceServiceRequest: {exc}") from None


def _retry_metadata(seconds: int, message: str) -> tuple[tuple[str, bytes], ...]:
    retry = RetryInfo(retry_delay=Duration(seconds=seconds))
    detail = AnyMessage()
    detail.Pack(retry)
    status = Status(code=UNAVAILABLE, message=message, details=[detail])
    return (
        ("grpc-status-details-bin", status.SerializeToString()),
        ("google.rpc.retryinfo-bin", retry.SerializeToString()),
    )


def start_grpc(service: Service, address: tuple[str, int], credentials: grpc.ServerCredentials | None,
               *, reuse_port: bool = False) -> tuple[grpc.Server, int]:
    """A started gRPC server for the trace service, and the port it listens on."""
    settings = service.settings
    # Threads beyond the decoding slots wait for one and then answer UNAVAILABLE (retryable everywhere);
    # gRPC's own RESOURCE_EXHAUSTED past maximum_concurrent_rpcs is retried by the Collector only with RetryInfo,
    # so keep that limit well above what the slots let through.
    workers = settings.max_concurrent_requests * 2 + 2
    server = grpc.server(
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agentotel-collector-grpc"),
        maximum_concurrent_rpcs=workers * 4,
        options=[
            ("grpc.max_receive_message_length", settings.max_decompressed_bytes),
            ("grpc.so_reuseport", int(reuse_port)),  # off unless asked: a second collector on the port must fail
            # Without BDP probing a stream's window grows only for a message the handler asked for: a
            # request waiting for its token check or a slot is not buffered (12 x 60 MiB: +2 MB, not +590).
            ("grpc.http2.bdp_probe", 0),
        ],
    )
    server.add_generic_rpc_handlers((_TraceService(service),))
    host, port = address
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    bound = server.add_secure_port(target, credentials) if credentials is not None else server.add_insecure_port(target)
    if bound == 0:
        raise OSError(f"agentotel-collector: cannot listen for OTLP/gRPC on {target}")
    server.start()
    return server, bound
