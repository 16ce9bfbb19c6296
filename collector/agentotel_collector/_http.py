"""OTLP/HTTP: POST /v1/traces (protobuf or JSON, gzip or zstd), GET /health and GET /metrics (Prometheus).

A thread per connection (bounded in all and per client address), HTTP/1.1 keep-alive. Slow or idle
peers cannot starve the others: a request's line and headers must arrive within `header_timeout_s`,
its body within `body_timeout_s` and then at `min_body_rate` at least, and a body is read before a
decoding slot is taken (a slow sender holds no slot). Every refusal drains the request body when it
is small enough, so the sender reads the answer and the connection stays usable. Error bodies are
`google.rpc.Status` in the request's content type; no traceback ever reaches a body.
"""

from __future__ import annotations

import io
import json
import logging
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.message import DecodeError
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from . import _body, _otlp_json
from ._convert import InvalidRequest, TooManySpans
from ._ingest import Busy
from ._service import (
    INTERNAL,
    INVALID_ARGUMENT,
    NOT_FOUND,
    RESOURCE_EXHAUSTED,
    UNAUTHENTICATED,
    UNAVAILABLE,
    UNIMPLEMENTED,
    Service,
    refusal_reason,
)
from ._watch import CONTENT_TYPE as METRICS_CONTENT_TYPE

log = logging.getLogger("agentotel_collector")

TRACES_PATH = "/v1/traces"
HEALTH_PATH = "/health"
METRICS_PATH = "/metrics"
PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_FORMATS = {"application/x-protobuf": PROTOBUF, "application/protobuf": PROTOBUF, "application/json": JSON}
# A refused body up to this size is read and dropped so the connection stays usable; bigger ones close it.
_DRAIN_LIMIT = 4 * 1024 * 1024


class _Refusal(Exception):
    def __init__(self, status: int, code: int, message: str, reason: str, *, retry: bool = False) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.reason, self.retry = status, code, message, reason, retry


class _Deadline(io.RawIOBase):
    """The connection's reads, each bounded by what is left of the current phase's time allowance.

    A phase (waiting for a request, its headers, its body) allows `grace` seconds plus one second per
    `rate` bytes received in it; a peer sending slower than that is cut off, however it spaces its bytes.
    """

    def __init__(self, sock: socket.socket, idle_s: float) -> None:
        self._sock, self._idle_s = sock, idle_s
        self.phase(None)

    def phase(self, grace_s: float | None, rate: int = 0) -> None:
        self._start, self._grace_s, self._rate, self._received = time.monotonic(), grace_s, rate, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # noqa: ANN001 - a writable buffer
        wait = self._idle_s
        if self._grace_s is not None:
            allowed = self._grace_s + (self._received / self._rate if self._rate else 0.0)
            left = self._start + allowed - time.monotonic()
            if left <= 0:
                raise TimeoutError("the peer sends too slowly")
            wait = min(wait, left)
        self._sock.settimeout(wait)
        count = self._sock.recv_into(buffer)
        self._received += count
        return count


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "agentotel-collector"
    sys_version = ""
    timeout = 30  # idle keep-alive connections and stalled bodies free their thread after this
    server: "HttpServer"

    def setup(self) -> None:
        self.request.settimeout(self.server.service.settings.header_timeout_s)
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()  # here, in the connection's thread, not in the accept loop
        super().setup()
        self.rfile.close()  # the plain file over the socket: replaced by one that keeps the deadlines
        self._clock = _Deadline(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self._clock, 64 * 1024)

    def handle_one_request(self) -> None:
        self._clock.phase(None)  # an idle keep-alive connection waits up to `timeout` for its next request
        try:
            if not self.rfile.peek(1):
                self.close_connection = True
                return
        except OSError:  # TimeoutError included
            self.close_connection = True
            return
        self._clock.phase(self.server.service.settings.header_timeout_s)
        super().handle_one_request()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        log.debug("http %s: " + format, self.address_string(), *args)

    def log_error(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        # The base class's only report of a request line or headers that did not arrive in time.
        if format.startswith("Request timed out"):
            self._rejected("closed", "slow_sender", "request line and headers did not arrive in time")
        self.log_message(format, *args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # Used only by the base class, for a request it cannot parse (bad request line, too many or too long headers).
        self._rejected(code, "method_not_allowed" if code == 501 else "bad_request", message or "")
        super().send_error(code, message, explain)

    def _rejected(self, status: int | str, reason: str, detail: str) -> None:
        """Log (rate-limited) and count one refused request; never a header value or the body."""
        try:
            size: int | None = int(self.headers.get("Content-Length") or "")
        except (AttributeError, ValueError):  # no headers parsed yet, or no usable length
            size = None
        self.server.service.metrics.rejected(
            "http",
            status,
            reason,
            peer=f"{self.client_address[0]}:{self.client_address[1]}",
            method=getattr(self, "command", None) or None,
            path=(getattr(self, "path", "") or "").split("?", 1)[0] or None,
            bytes=size,
            detail=detail,
        )

    # -- routes -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._drained = False
        path = self.path.split("?", 1)[0]
        if path == TRACES_PATH:
            self._not_allowed()
            return
        if path == METRICS_PATH:
            self._metrics()
            return
        if path != HEALTH_PATH:
            message = f"no such endpoint {path!r}; POST spans to {TRACES_PATH}"
            self._rejected(404, "not_found", message)
            self._answer_error(404, NOT_FOUND, message, JSON)
            return
        service = self.server.service
        ok = not service.stopping and service.ingest.healthy
        body = json.dumps({"status": "ok" if ok else "unavailable"}).encode()
        self._answer(200 if ok else 503, JSON, body, retry=not ok)

    def _metrics(self) -> None:
        """The Prometheus exposition; the ingestion token is required when one is configured. Takes no decoding slot."""
        service = self.server.service
        if not service.authorized(self.headers.get("Authorization")):
            self._rejected(401, "unauthorized", "missing or wrong bearer token")
            self._answer_error(401, UNAUTHENTICATED, "missing or wrong bearer token", JSON)
            return
        self._answer(200, METRICS_CONTENT_TYPE, service.metrics.render())

    def do_POST(self) -> None:
        self._drained = False
        fmt = _FORMATS.get(self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower())
        try:
            self._export(fmt)
        except _Refusal as refusal:
            self._rejected(refusal.status, refusal.reason, refusal.message)
            self._answer_error(refusal.status, refusal.code, refusal.message, fmt or JSON, retry=refusal.retry)
        except (TimeoutError, socket.timeout):
            self._rejected("closed", "slow_sender", "the body did not arrive in time")
            self.close_connection = True
        except ConnectionError:
            self._rejected("closed", "disconnected", "the peer closed the connection mid-request")
            self.close_connection = True
        except Exception:  # noqa: BLE001 - a bug must cost one request, not the server; the trace goes to the log only
            log.exception("agentotel-collector: internal error handling a request")
            self._rejected(500, "internal", "internal error")
            self.close_connection = True  # the body may be half read: start the next request on a new connection
            self._answer_error(500, INTERNAL, "internal error in agentotel-collector (see its log)", fmt or JSON)

    def do_PUT(self) -> None:
        self._not_allowed()

    do_DELETE = do_PATCH = do_PUT

    def _not_allowed(self) -> None:
        self._drained = False
        self._drain()
        message = f"method {self.command} not allowed; POST spans to {TRACES_PATH}"
        self._rejected(405, "method_not_allowed", message)
        self._answer_error(405, UNIMPLEMENTED, message, JSON)

    # -- export -------------------------------------------------------------------------------

    def _export(self, fmt: str | None) -> None:
        service = self.server.service
        settings = service.settings
        path = self.path.split("?", 1)[0]
        if path != TRACES_PATH:
            self._refuse(404, NOT_FOUND, f"no such endpoint {path!r}; POST spans to {TRACES_PATH}", "not_found")
        if not service.authorized(self.headers.get("Authorization")):
            self._refuse(401, UNAUTHENTICATED, "missing or wrong bearer token", "unauthorized")
        if fmt is None:
            got = self.headers.get("Content-Type", "")
            self._refuse(415, INVALID_ARGUMENT, f"unsupported Content-Type {got!r}; use {PROTOBUF} or {JSON}", "bad_content_type")
        encoding = self.headers.get("Content-Encoding", "").strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "zstd"):
            self._refuse(415, INVALID_ARGUMENT, f"unsupported Content-Encoding {encoding!r}; use gzip, zstd or none", "bad_content_encoding")
        chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
        length = self._content_length()
        if chunked and length is not None:  # RFC 9112 6.1: a request framed two ways (request smuggling)
            self.close_connection = True
            raise _Refusal(400, INVALID_ARGUMENT, "both Transfer-Encoding and Content-Length are set", "bad_framing")
        if not chunked and length is None:
            self._refuse(411, INVALID_ARGUMENT, "Content-Length is required", "length_required")
        if length is not None and length > settings.max_request_bytes:
            self._refuse(413, RESOURCE_EXHAUSTED, f"request body of {length} bytes exceeds {settings.max_request_bytes}", "too_large")
        try:
            with service.in_flight():
                # The body is read before a decoding slot is taken: a slow sender holds only its own
                # connection and its share of the body budget, and is cut off at the minimum rate.
                with service.receiving(settings.max_request_bytes if chunked else length or 0):
                    self._clock.phase(settings.body_timeout_s, settings.min_body_rate)
                    raw = (
                        _body.read_chunked(self.rfile, settings.max_request_bytes)
                        if chunked
                        else _body.read_exact(self.rfile, length or 0)
                    )
                    self._drained = True
                    with service.decoding():
                        data = _body.decompress(raw, encoding, settings.max_decompressed_bytes)
                        del raw
                        request = self._parse(data, fmt)
                        del data
                        converted = service.convert(request, "http")
                        del request  # only the rows wait for the disk, not the decoded request
                response = service.store(converted, "http")
        except _body.BodyError as exc:
            # A body we stopped reading half-way leaves the connection out of step: close it.
            self.close_connection = self.close_connection or not self._drained
            reason = {413: "too_large", 415: "bad_content_encoding"}.get(exc.status, "malformed")
            raise _Refusal(exc.status, RESOURCE_EXHAUSTED if exc.status == 413 else INVALID_ARGUMENT, str(exc), reason) from None
        except TooManySpans as exc:
            raise _Refusal(413, RESOURCE_EXHAUSTED, str(exc), refusal_reason(exc)) from None
        except InvalidRequest as exc:
            raise _Refusal(400, INVALID_ARGUMENT, str(exc), refusal_reason(exc)) from None
        except Busy as exc:
            self._drain()  # harmless when the body was already read: the length is then zero
            raise _Refusal(503, UNAVAILABLE, f"{exc}; retry later", refusal_reason(exc), retry=True) from None
        body = response.SerializeToString() if fmt == PROTOBUF else _otlp_json.dump_message(response)
        self._answer(200, fmt, body)

    def _parse(self, data: bytes, fmt: str) -> ExportTraceServiceRequest:
        if fmt == JSON:
            try:
                return _otlp_json.parse_request(data)
            except _otlp_json.JsonError as exc:
                raise _Refusal(400, INVALID_ARGUMENT, str(exc), "malformed") from None
        try:
            return ExportTraceServiceRequest.FromString(data)
        except DecodeError as exc:
            raise _Refusal(400, INVALID_ARGUMENT, f"body is not a protobuf ExportTraceServiceRequest: {exc}", "malformed") from None

    # -- plumbing -----------------------------------------------------------------------------

    def _content_length(self) -> int | None:
        values = self.headers.get_all("Content-Length") or []
        if not values:
            return None
        # RFC 9112 6.3: differing lengths (in several fields, or a list in one) frame the body two ways.
        distinct = {v.strip() for value in values for v in value.split(",")}
        if len(distinct) > 1:
            self.close_connection = True
            raise _Refusal(400, INVALID_ARGUMENT, f"conflicting Content-Length values {sorted(distinct)}", "bad_framing")
        raw = distinct.pop()
        try:
            length = int(raw)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            raise _Refusal(400, INVALID_ARGUMENT, f"bad Content-Length {raw!r}", "bad_framing")
        return length

    def _refuse(self, status: int, code: int, message: str, reason: str) -> None:
        self._drain()
        raise _Refusal(status, code, message, reason)

    def _drain(self) -> None:
        """Read and drop an unread body so the answer reaches the sender; close instead if it is large."""
        if self._drained:
            return
        self._drained = True
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower() or length > _DRAIN_LIMIT:
            self.close_connection = True
        elif length > 0:
            _body.discard(self.rfile, length)

    def _answer_error(self, status: int, code: int, message: str, fmt: str, *, retry: bool = False) -> None:
        if fmt == PROTOBUF:
            body = Status(code=code, message=message).SerializeToString()
        else:
            body = json.dumps({"code": code, "message": message}).encode()
        self._answer(status, fmt, body, retry=retry)

    def _answer(self, status: int, content_type: str, body: bytes, *, retry: bool = False) -> None:
        self._drained = True  # the body has been consumed (or abandoned) by now
        if self.server.service.stopping:
            self.close_connection = True
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if retry:
            self.send_header("Retry-After", str(self.server.service.settings.retry_after_s))
        if status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="agentotel-collector"')
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


class HttpServer(ThreadingHTTPServer):
    """The OTLP/HTTP listener: one thread per connection, at most `max_connections` of them."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], service: Service, ssl_context: ssl.SSLContext | None) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.service = service
        self._ssl_context = ssl_context
        self._connections = threading.BoundedSemaphore(service.settings.max_connections)
        self._per_address: dict[str, int] = {}
        self._per_address_lock = threading.Lock()
        super().__init__(address, _Handler)

    def get_request(self):
        sock, address = super().get_request()
        if self._ssl_context is not None:
            sock = self._ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def process_request(self, request, client_address) -> None:
        # Over a connection limit (in all, or from this client address, so that one peer's idle or slow
        # connections cannot fill the server): refuse at once; senders retry a closed connection.
        address = client_address[0]
        with self._per_address_lock:
            count = self._per_address.get(address, 0)
            over = count >= self.service.settings.max_connections_per_address
            if not over:
                self._per_address[address] = count + 1
        if over:
            self._refuse_connection(request, client_address, "too many connections from this address")
            return
        if not self._connections.acquire(blocking=False):
            self._release_address(address)
            self._refuse_connection(request, client_address, "too many connections")
            return
        super().process_request(request, client_address)

    def _refuse_connection(self, request, client_address, detail: str) -> None:
        self.service.metrics.rejected(
            "http", "closed", "too_many_connections", peer=f"{client_address[0]}:{client_address[1]}", detail=detail
        )
        self.shutdown_request(request)

    def _release_address(self, address: str) -> None:
        with self._per_address_lock:
            count = self._per_address.pop(address, 1) - 1
            if count > 0:
                self._per_address[address] = count

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connections.release()
            self._release_address(client_address[0])

    def handle_error(self, request, client_address) -> None:
        # TLS handshakes that fail, clients that vanish: worth a debug line, not a traceback on stderr.
        log.debug("agentotel-collector: connection from %s failed", client_address, exc_info=True)
