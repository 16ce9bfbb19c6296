"""OTLP/HTTP: POST /v1/traces (protobuf or JSON, gzip or zstd), GET /health and GET /metrics (Prometheus).

Served by uvicorn (HTTP/1.1 parsed by h11) on its own event loop, so an idle or slow connection costs a
few kilobytes, not a thread. The connection policy lives in `_Connection`, uvicorn's h11 protocol with
our limits: connections in all and per client address, a deadline for a request's line and headers,
and framing errors (two different Content-Length values, say) answered and logged as ours. The request
itself is `_Receiver.handle`, an ASGI callable: a body is read before a decoding slot is taken (a slow
sender holds no slot), within a byte budget, a body deadline and a minimum rate; decoding holds one
of the shared decoding slots, on the event loop for a small body (no hand-off between threads) and on
a small thread pool for a large one; the wait for the WAL's fsync holds no thread. A refused request's
small body is read and dropped before the answer, so the sender reads the answer and the connection
stays usable. Error bodies are `google.rpc.Status` in the request's content type; no traceback ever
reaches a body.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import json
import logging
import socket
import ssl
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Awaitable, Callable

import h11
import uvicorn
from google.protobuf.message import DecodeError
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from uvicorn.protocols.http.h11_impl import H11Protocol

from . import _body, _otlp_json
from ._convert import Converted, InvalidRequest, TooManySpans
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
# A body this small once inflated is decoded on the event loop (`_Receiver._decode_here`).
_INLINE_BYTES = 2 * 1024 * 1024
# The longest the loop decodes bodies one after another before it polls its sockets again.
_INLINE_BURST_S = 0.1
# The loop judges the CPU share it gets over this much decoding; below _CROWDED_SHARE of it, the pool
# decodes for _POOL_FOR_S (`_Receiver._note_share`).
_SHARE_WINDOW_S = 0.05
_CROWDED_SHARE = 0.6
_POOL_FOR_S = 1.0
# An idle keep-alive connection (or a new one that sends nothing) is closed after this long.
IDLE_TIMEOUT_S = 30.0

Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]


class _Refusal(Exception):
    def __init__(self, status: int, code: int, message: str, reason: str, *, retry: bool = False) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.reason, self.retry = status, code, message, reason, retry


class _Dropped(Exception):
    """The request ends without an answer: the connection is closed (`reason`: slow_sender, disconnected)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason, self.detail = reason, detail


# -- the connection: uvicorn's h11 protocol with our limits ------------------------------------

# uvicorn's own messages: errors (an exception escaping a request) still show; its warnings repeat our refusal lines.
_UVICORN_LOG = logging.getLogger("agentotel_collector.uvicorn")
_UVICORN_LOG.setLevel(logging.ERROR)


class _Connection(H11Protocol):
    """One HTTP/1.1 connection; refused at once past the connection limits, cut off when its headers are slow."""

    def __init__(self, *args: Any, front: "HttpServer", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._front = front
        self.app = functools.partial(front.receiver.handle, self)
        self._address: str | None = None  # set once the connection is counted against the limits
        self._refused = False
        self._header_timer: asyncio.TimerHandle | None = None
        self._protocol_error: h11.RemoteProtocolError | None = None
        self._eof = False
        self._handshake: asyncio.Task | None = None  # TLS: the handshake, before the connection is served
        self._early: list[bytes] | None = None  # TLS: request bytes that came with the handshake's end
        self.logger = _UVICORN_LOG  # its "Invalid HTTP request received." is our refusal line instead
        next_event = self.conn.next_event

        def next_event_noting_errors() -> Any:
            # uvicorn answers a request h11 cannot parse with its own plain 400: keep the reason for ours.
            try:
                return next_event()
            except h11.RemoteProtocolError as exc:
                self._protocol_error = exc
                raise

        self.conn.next_event = next_event_noting_errors  # type: ignore[method-assign]

    @property
    def peer(self) -> str:
        return f"{self.client[0]}:{self.client[1]}" if self.client else "unknown"

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if peer else ""
        refusal = self._front.admit(address)
        if refusal is not None:
            self._refused, self.transport = True, transport
            where = f"{peer[0]}:{peer[1]}" if peer else "unknown"
            self._front.service.metrics.rejected("http", "closed", "too_many_connections", peer=where, detail=refusal)
            transport.close()  # senders retry a closed connection
            return
        self._address = address
        if self._front.ssl_context is None:
            self._serve(transport)
            return
        # TLS is started here, not by the listener, so a connection still in its handshake is counted
        # against the limits and held to the header deadline like one still sending its headers.
        transport.pause_reading()  # the ClientHello is for the TLS layer, not for h11
        self._early = []
        self._handshake = self.loop.create_task(self._start_tls(transport, where=f"{peer[0]}:{peer[1]}" if peer else "unknown"))

    def _serve(self, transport: asyncio.BaseTransport) -> None:
        early, self._early = self._early, None
        super().connection_made(transport)  # type: ignore[arg-type]
        # A new connection that sends nothing is an idle one: closed after IDLE_TIMEOUT_S.
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)
        for data in early or ():
            self.data_received(data)

    async def _start_tls(self, transport: asyncio.Transport, where: str) -> None:
        timeout = self._front.service.settings.header_timeout_s
        started = self.loop.time()
        try:
            secure = await self.loop.start_tls(transport, self, self._front.ssl_context, server_side=True,
                                               ssl_handshake_timeout=timeout)
        except BaseException as exc:  # a failed, slow or cancelled handshake: the connection is gone
            transport.abort()
            self._release()
            if self.loop.time() - started >= timeout:  # (asyncio reports it as ConnectionAbortedError)
                self._front.service.metrics.rejected("http", "closed", "slow_sender", peer=where,
                                                     detail="TLS handshake did not finish in time")
            if not isinstance(exc, Exception):
                raise
            return
        if secure is None:  # the peer left as the handshake ended
            self._release()
            return
        self._serve(secure)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._cancel_header_timer()
        self._release()
        super().connection_lost(exc)

    def _release(self) -> None:
        if self._address is not None:
            self._front.release(self._address)
            self._address = None

    def data_received(self, data: bytes) -> None:
        if self._early is not None:  # TLS delivers what came with the handshake's last message before it returns
            self._early.append(data)
            return
        # The first byte of a request starts its header deadline; parsed headers end it.
        if self._header_timer is None and self.conn.their_state is h11.IDLE:
            self._header_timer = self.loop.call_later(self._front.service.settings.header_timeout_s, self._headers_late)
        super().data_received(data)
        if self._header_timer is not None and self.conn.their_state is not h11.IDLE:
            self._cancel_header_timer()

    def eof_received(self) -> bool | None:
        # A sender may shut down its side once the request is sent (half-close): answer it, then close.
        # Mid-request, the request can never complete: close now (the receiver sees a disconnect).
        # (A request asking for a protocol switch, which is never granted, is complete in MIGHT_SWITCH_PROTOCOL.)
        if (self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.MIGHT_SWITCH_PROTOCOL) and self.cycle is not None
                and not self.cycle.response_complete):
            self._eof = True
            return True
        return None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._eof:
            self.transport.close()

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._front.service.metrics.rejected(
                "http", "closed", "slow_sender", peer=self.peer, detail="request line and headers did not arrive in time"
            )
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot parse: answered (400, 414 or 431) with a Status body, logged and counted, then closed."""
        error = self._protocol_error
        status = getattr(error, "error_status_hint", 400) or 400
        detail = str(error) if error is not None and str(error) else "malformed HTTP request"
        reason = "bad_framing" if "content-length" in detail.lower() or "transfer-encoding" in detail.lower() else "bad_request"
        self._front.service.metrics.rejected("http", status, reason, peer=self.peer, detail=detail)
        body = json.dumps({"code": INVALID_ARGUMENT, "message": detail}).encode()
        head = (
            f"HTTP/1.1 {status} {_phrase(status)}\r\nContent-Type: {JSON}\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n"
        ).encode("latin-1")
        self.transport.write(head + body)  # h11 is in its error state: the answer is written by hand
        self.transport.close()

    def shutdown(self) -> None:
        """The server stops: an idle connection is closed at once. Over TLS, asyncio would wait up to 30 s
        for the peer's close_notify, which an idle pooled client connection never sends: it is aborted."""
        idle = self.cycle is None or self.cycle.response_complete
        super().shutdown()
        if idle and self.transport is not None and _tls(self.transport):
            self.transport.abort()

    def drop(self) -> None:
        """Close the connection without an answer (the request is abandoned)."""
        if self.cycle is not None:
            self.cycle.disconnected = True  # uvicorn then sends nothing more for this request
        self.transport.close()


def _tls(transport: Any) -> bool:
    try:
        return transport.get_extra_info("sslcontext") is not None
    except AttributeError:  # a TLS transport whose connection is already gone has let go of its SSL protocol
        return False


def _phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


# -- one request: the ASGI callable ------------------------------------------------------------


class _Quota:
    """Units taken on the event loop and given back from any thread: pool threads, bytes of request bodies.

    Taking is immediate while enough is free; otherwise the request waits (up to a timeout) until a
    give-back makes room. Giving back wakes the loop only when a request is waiting, so the usual
    request costs no turn of the loop: each turn makes the loop's thread take the GIL back, which
    costs up to the switch interval while other threads decode.
    """

    def __init__(self, total: int) -> None:
        self.total, self.used = total, 0
        self._lock = threading.Lock()
        self._waiting: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future]] = []

    async def take(self, size: int, timeout_s: float, busy: str) -> None:
        """Take `size` units, waiting up to `timeout_s` for them; Busy(`busy`) when they do not free up in time."""
        with self._lock:
            if self.used + size <= self.total:  # the usual case: no waiting
                self.used += size
                return
            loop = asyncio.get_running_loop()
            entry = (size, loop, loop.create_future())
            self._waiting.append(entry)
        try:
            await asyncio.wait_for(entry[2], timeout_s)
        except BaseException as exc:  # timed out, or the request was cancelled
            with self._lock:
                if entry in self._waiting:
                    self._waiting.remove(entry)
                # else a give-back granted it meanwhile: its grant finds the future cancelled and gives it back
            if isinstance(exc, asyncio.TimeoutError):
                raise Busy(busy) from None
            raise

    def give(self, size: int) -> None:
        """Give back `size` units (from any thread); waiting requests that now fit are let in."""
        granted = []
        with self._lock:
            self.used -= size
            for entry in list(self._waiting):
                if self.used + entry[0] <= self.total:
                    self._waiting.remove(entry)
                    self.used += entry[0]
                    granted.append(entry)
        for units, loop, future in granted:
            try:
                loop.call_soon_threadsafe(self._grant, units, future)
            except RuntimeError:  # the loop has closed: nobody waits any more
                self.give(units)

    def _grant(self, size: int, future: asyncio.Future) -> None:
        if future.done():  # it stopped waiting (timed out) before the grant arrived
            self.give(size)
        else:
            future.set_result(None)


class _Held:
    """One request's share of the body budget: taken on the loop as its bytes arrive, given back once (any thread).

    A request takes its share as its bytes arrive, not its declared length up front: a slow sender
    holds only what it has sent, so slow peers declaring big bodies cannot starve the others.
    """

    __slots__ = ("budget", "size")

    def __init__(self, budget: _Quota) -> None:
        self.budget, self.size = budget, 0

    async def take(self, size: int, timeout_s: float) -> None:
        size = min(size, self.budget.total - self.size)  # one request alone always fits
        await self.budget.take(size, timeout_s, "too many request bodies being received")
        self.size += size

    def give_back(self) -> None:
        size, self.size = self.size, 0
        if size:
            self.budget.give(size)


class _Job:
    """One request's body on its way through decoding (on the loop or a pool thread) and the store (`Ingest.submit`).

    The decoding settles `future` itself when the request ends before the store; otherwise the
    store's writer does, once the batches are durable. Either way the loop wakes once for it.
    """

    __slots__ = ("raw", "encoding", "fmt", "held", "loop", "future", "converted", "submitted", "timer")

    def __init__(self, raw: bytes, encoding: str, fmt: str, held: _Held, loop: asyncio.AbstractEventLoop) -> None:
        self.raw: list[bytes] = [raw]  # a list, so the pool thread can drop the body as soon as it is inflated
        self.encoding, self.fmt, self.held, self.loop = encoding, fmt, held, loop
        self.future: asyncio.Future = loop.create_future()
        self.converted: Converted | None = None
        self.submitted: float | None = None  # time.monotonic() when the batches were queued for the store
        self.timer: asyncio.TimerHandle | None = None

    def settle(self, error: BaseException | None) -> None:
        """From the pool thread: the request ends without waiting for the store (refused, or nothing to write)."""
        try:
            self.loop.call_soon_threadsafe(_settle_job, self.future, error)
        except RuntimeError:  # the loop has closed: nobody waits any more
            pass


def _settle_job(future: asyncio.Future, error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


class _Request:
    """What the receiver needs of one request: its headers, its connection, and the ASGI channels."""

    __slots__ = ("connection", "scope", "receive", "send", "headers", "path", "method", "close", "body_done")

    def __init__(self, connection: _Connection | None, scope: dict, receive: Receive, send: Send) -> None:
        self.connection, self.scope, self.receive, self.send = connection, scope, receive, send
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1")
            headers[key] = f"{headers[key]}, {value.decode('latin-1')}" if key in headers else value.decode("latin-1")
        self.headers = headers
        self.path = scope["path"]
        self.method = scope["method"]
        self.close = False  # answer with Connection: close
        self.body_done = False  # the body has been read (or given up on)

    @property
    def peer(self) -> str:
        client = self.scope.get("client")
        return f"{client[0]}:{client[1]}" if client else "unknown"

    def declared_length(self) -> int | None:
        try:
            return int(self.headers.get("content-length", ""))
        except ValueError:
            return None

    @property
    def chunked(self) -> bool:
        return "chunked" in self.headers.get("transfer-encoding", "").lower()


class _Receiver:
    """The OTLP/HTTP endpoints as an ASGI callable, with the connection handed in (see `_Connection`)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        settings = service.settings
        # Bodies are read before a decoding slot is taken (a slow sender then holds no slot); what is
        # received and not yet decoded is bounded by this many bytes.
        self.budget = _Quota((settings.max_concurrent_requests + 2) * settings.max_request_bytes)
        # A small body is decoded on the loop (`_decode_here`). Any other read body goes to a pool thread
        # at once, which then waits for a decoding slot (`Service.take_slot`, shared with gRPC): when a
        # decode ends, the next one starts on a thread already waiting, with no round trip through the
        # event loop (each hand-off waits for the GIL, up to the switch interval while the other decode
        # holds it). With one thread per slot, a slot stood free while a read body waited 9-12 % of the
        # time (bench_collector's content-off bodies, load 15); with two more threads, 5-6 %. They hold
        # bodies the body budget counts already; decoding memory stays bounded by the slots.
        # The pool thread also queues the rows for the store, so the writer starts without a turn of
        # the loop in between; the loop wakes once per request, when the writer reports the fsync.
        threads = settings.max_concurrent_requests + 2
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="agentotel-collector-http")
        self._free_threads = _Quota(threads)  # a pool thread for each request handed over: none waits in its queue
        self._inline_since: float | None = None  # when the loop began decoding bodies without polling its sockets
        self._share = [0.0, 0.0]  # the loop's recent decoding: CPU seconds it got, seconds it took (`_note_share`)
        self._pool_until = 0.0  # time.monotonic() until which bodies go to the pool: the loop found the cores busy

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    async def handle(self, connection: _Connection | None, scope: dict, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan is off; nothing else is expected
            return
        request = _Request(connection, scope, receive, send)
        fmt = _FORMATS.get(request.headers.get("content-type", "").split(";", 1)[0].strip().lower())
        try:
            if request.method == "POST":
                await self._export(request, fmt)
            elif request.method == "GET" and request.path == HEALTH_PATH:
                await self._health(request)
            elif request.method == "GET" and request.path == METRICS_PATH:
                await self._metrics(request)
            elif request.method == "GET" and request.path != TRACES_PATH:
                await self._refuse(request, 404, NOT_FOUND, f"no such endpoint {request.path!r}; POST spans to {TRACES_PATH}", "not_found")
            else:
                message = f"method {request.method} not allowed; POST spans to {TRACES_PATH}"
                await self._refuse(request, 405, UNIMPLEMENTED, message, "method_not_allowed")
        except _Refusal as refusal:
            self._rejected(request, refusal.status, refusal.reason, refusal.message)
            await self._answer_error(request, refusal.status, refusal.code, refusal.message, fmt or JSON, retry=refusal.retry)
        except _Dropped as dropped:
            self._rejected(request, "closed", dropped.reason, dropped.detail)
            if connection is not None:
                connection.drop()
        except Exception:  # noqa: BLE001 - a bug must cost one request, not the server; the trace goes to the log only
            log.exception("agentotel-collector: internal error handling a request")
            self._rejected(request, 500, "internal", "internal error")
            request.close = True  # the body may be half read: start the next request on a new connection
            await self._answer_error(request, 500, INTERNAL, "internal error in agentotel-collector (see its log)", fmt or JSON)

    def _rejected(self, request: _Request, status: int | str, reason: str, detail: str) -> None:
        """Log (rate-limited) and count one refused request; never a header value or the body."""
        self.service.metrics.rejected(
            "http", status, reason, peer=request.peer, method=request.method or None, path=request.path or None,
            bytes=request.declared_length(), detail=detail,
        )

    # -- routes -------------------------------------------------------------------------------

    async def _health(self, request: _Request) -> None:
        ok = not self.service.stopping and self.service.ingest.healthy
        body = json.dumps({"status": "ok" if ok else "unavailable"}).encode()
        await self._answer(request, 200 if ok else 503, JSON, body, retry=not ok)

    async def _metrics(self, request: _Request) -> None:
        """The Prometheus exposition; the ingestion token is required when one is configured. Takes no decoding slot."""
        if not self.service.authorized(request.headers.get("authorization")):
            await self._refuse(request, 401, UNAUTHENTICATED, "missing or wrong bearer token", "unauthorized")
        await self._answer(request, 200, METRICS_CONTENT_TYPE, self.service.metrics.render())

    async def _export(self, request: _Request, fmt: str | None) -> None:
        service = self.service
        settings = service.settings
        if request.path != TRACES_PATH:
            await self._refuse(request, 404, NOT_FOUND, f"no such endpoint {request.path!r}; POST spans to {TRACES_PATH}", "not_found")
        if not service.authorized(request.headers.get("authorization")):
            await self._refuse(request, 401, UNAUTHENTICATED, "missing or wrong bearer token", "unauthorized")
        if fmt is None:
            got = request.headers.get("content-type", "")
            await self._refuse(request, 415, INVALID_ARGUMENT, f"unsupported Content-Type {got!r}; use {PROTOBUF} or {JSON}", "bad_content_type")
        encoding = request.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "deflate", "zstd"):
            await self._refuse(request, 415, INVALID_ARGUMENT, f"unsupported Content-Encoding {encoding!r}; use gzip, deflate, zstd or none", "bad_content_encoding")
        # h11 has refused conflicting or malformed lengths already (`_Connection.send_400_response`).
        length = request.declared_length()
        if request.chunked and "content-length" in request.headers:  # RFC 9112 6.1: framed two ways (request smuggling)
            request.close = request.body_done = True
            raise _Refusal(400, INVALID_ARGUMENT, "both Transfer-Encoding and Content-Length are set", "bad_framing")
        if not request.chunked and length is None:
            await self._refuse(request, 411, INVALID_ARGUMENT, "Content-Length is required", "length_required")
        if length is not None and length > settings.max_request_bytes:
            await self._refuse(request, 413, RESOURCE_EXHAUSTED, f"request body of {length} bytes exceeds {settings.max_request_bytes}", "too_large")
        try:
            with service.in_flight():
                # The body is read before a decoding slot is taken: a slow sender holds only its own
                # connection and its share of the body budget, and is cut off at the minimum rate.
                held = _Held(self.budget)
                try:
                    raw = await self._read_body(request, settings.max_request_bytes, held)
                except BaseException:
                    held.give_back()
                    raise
                converted = await self._run(_Job(raw, encoding, fmt, held, asyncio.get_running_loop()))
                response = service.accepted(converted, "http")
        except _body.BodyError as exc:
            # A body we stopped reading half-way leaves the connection out of step: close it.
            request.close = request.close or not request.body_done
            reason = {413: "too_large", 415: "bad_content_encoding"}.get(exc.status, "malformed")
            raise _Refusal(exc.status, RESOURCE_EXHAUSTED if exc.status == 413 else INVALID_ARGUMENT, str(exc), reason) from None
        except TooManySpans as exc:
            raise _Refusal(413, RESOURCE_EXHAUSTED, str(exc), refusal_reason(exc)) from None
        except InvalidRequest as exc:
            raise _Refusal(400, INVALID_ARGUMENT, str(exc), refusal_reason(exc)) from None
        except Busy as exc:
            await self._drain(request)  # harmless when the body was already read
            raise _Refusal(503, UNAVAILABLE, f"{exc}; retry later", refusal_reason(exc), retry=True) from None
        body = response.SerializeToString() if fmt == PROTOBUF else _otlp_json.dump_message(response)
        await self._answer(request, 200, fmt, body)

    async def _run(self, job: _Job) -> Converted:
        """Decode, convert and store the body (on the loop when it is small, else on a pool thread); the rows once durable.

        Busy when the store has not confirmed the write `write_timeout_s` after the rows were queued
        (the time spent decoding does not count); the decoding's refusals are raised here. From here
        on the decoding gives the body budget back.
        """
        if not self._decode_here(job):
            try:
                await self._free_threads.take(1, self.service.settings.admission_timeout_s, "too many requests in progress")
            except BaseException:
                job.held.give_back()
                raise
            try:
                self._pool.submit(self._decode_on_pool_thread, job)
            except BaseException:  # the pool is shut down (the collector stops)
                job.held.give_back()
                self._free_threads.give(1)
                raise
        job.timer = job.loop.call_later(self.service.ingest.write_timeout_s, self._check_write, job)
        try:
            await job.future
        finally:
            job.timer.cancel()
            # A refusal's traceback holds the decoding's frames, which hold this job: while the job holds
            # the refusal (through its future) they are a cycle, and the inflated body (up to the limit)
            # stays alive until the garbage collector happens to run (eight bombs in a row: 100 MB -> 1.3 GB).
            job.future = None  # type: ignore[assignment]
        assert job.converted is not None
        return job.converted

    def _check_write(self, job: _Job) -> None:
        """On the loop, when the write timeout may have passed: refuse the request, or look again later."""
        if job.future.done():
            return
        timeout = self.service.ingest.write_timeout_s
        submitted = job.submitted
        waited = 0.0 if submitted is None else time.monotonic() - submitted
        if submitted is not None and waited >= timeout:
            job.future.set_exception(self.service.ingest.slow())  # the writer then leaves this request alone
        else:  # still decoding (not the store's time), or queued less than the timeout ago
            job.timer = job.loop.call_later(timeout - waited, self._check_write, job)

    def _decode_here(self, job: _Job) -> bool:
        """Decode a small body on the event loop itself when a decoding slot is free now; whether it did.

        A hand-off to a pool thread costs every request turns of the GIL between threads (the loop's
        submit, the pool thread taking the GIL from the other decoder, up to the switch interval each
        time) and two decoders converting at once take the GIL from each other every switch interval.
        A body of at most _INLINE_BYTES once inflated (about 1,000 spans without content, tens of ms
        of conversion) is decoded where it was read instead; the loop reads nothing else meanwhile,
        which the slow-sender deadlines (seconds) do not notice. A bigger body, or one that inflates
        past _INLINE_BYTES, goes to the pool, so a small compressed body cannot hold the loop for long;
        so do the bodies found ready once the loop has decoded for _INLINE_BURST_S without polling its
        sockets: many senders at once wait for a pool thread, and get 503 past the admission timeout,
        instead of waiting unseen behind each other's decoding.
        """
        raw = job.raw[0]
        if len(raw) > (_INLINE_BYTES if job.encoding in ("", "identity") else _INLINE_BYTES // 8):
            return False
        now, cpu = time.monotonic(), time.thread_time()
        if now < self._pool_until:
            return False
        if self._inline_since is None:
            self._inline_since = now
            job.loop.call_soon(self._back_to_io)
        elif now - self._inline_since > _INLINE_BURST_S:
            return False
        service = self.service
        if not service.take_slot(wait=False):
            return False
        try:
            data = _body.decompress(raw, job.encoding, min(_INLINE_BYTES, service.settings.max_decompressed_bytes))
        except _body.BodyError as exc:
            service.give_slot()
            if exc.status == 413:  # bigger than it looked: a pool thread decodes it (within the real limit)
                return False
            job.held.give_back()
            job.future.set_exception(exc)
            return True
        except BaseException:
            service.give_slot()
            raise
        job.raw.clear()
        self._decode_and_store(job, data)
        self._note_share(time.thread_time() - cpu, time.monotonic() - now)
        return True

    def _note_share(self, cpu_s: float, wall_s: float) -> None:
        """Count one decoding on the loop: the CPU time the loop's thread got, and the time it took.

        When the loop got less than _CROWDED_SHARE of the time it spent decoding, the machine's cores are
        busy with other work (or a pool thread converts a large body meanwhile): for the next _POOL_FOR_S
        bodies go to the pool. On a crowded machine several threads taking turns at the GIL are given
        more of the cores than one thread is (bench_collector's content-off bodies at load 8.5 on 2 cores:
        0.82 of a core to the pool's decoders, 0.67 to the loop decoding alone); with cores to spare, the
        loop decoding alone spends less CPU per span and does not wait for the GIL.
        """
        self._share[0] += cpu_s
        self._share[1] += wall_s
        if self._share[1] < _SHARE_WINDOW_S:
            return
        if self._share[0] < _CROWDED_SHARE * self._share[1]:
            self._pool_until = time.monotonic() + _POOL_FOR_S
        self._share = [0.0, 0.0]

    def _back_to_io(self) -> None:
        # Runs once the loop has polled its sockets again: the requests it read then may be decoded here.
        self._inline_since = None

    def _decode_on_pool_thread(self, job: _Job) -> None:
        try:
            # The slot is shared with gRPC: it bounds decoding memory across both protocols.
            if self.service.take_slot():
                self._decode_and_store(job)
            else:
                job.held.give_back()
                job.settle(Busy("too many requests in progress"))
        finally:
            self._free_threads.give(1)

    def _decode_and_store(self, job: _Job, data: bytes | None = None) -> None:
        """Decompress (unless `data` is the body inflated already), parse and convert holding a decoding slot the caller
        took (given back here), then queue the rows for the store; the outcome goes to `job.future`."""
        service = self.service
        try:
            try:
                try:
                    if data is None:
                        data = _body.decompress(job.raw.pop(), job.encoding, service.settings.max_decompressed_bytes)
                    request = _parse(data, job.fmt, service)
                    del data
                    converted = service.convert(request, "http")
                    del request
                finally:
                    service.give_slot()
            finally:
                job.held.give_back()
            job.converted = converted
            if not converted.batches:
                job.settle(None)
                return
            job.submitted = time.monotonic()
            service.ingest.submit(converted, job.loop, job.future)  # Busy when the queue is full
        except BaseException as exc:  # noqa: BLE001 - every outcome is the request's, raised on the loop
            job.settle(exc)

    async def _read_body(self, request: _Request, limit: int, held: _Held | None = None) -> bytes:
        """The whole body, within `--body-timeout-s` and then at `--min-body-rate`; _Dropped when slower.

        With `held`, the bytes are kept (and counted against the body budget); without, they are dropped.
        """
        settings = self.service.settings
        started, received = time.monotonic(), 0
        chunks: list[bytes] = []
        more = True
        while more:
            # Allowed so far: the grace period, plus one second per `min_body_rate` bytes received.
            left = started + settings.body_timeout_s + received / settings.min_body_rate - time.monotonic()
            if left <= 0:
                raise _Dropped("slow_sender", "the body did not arrive in time")
            try:
                message = await _within(request.receive(), left)
            except asyncio.TimeoutError:
                raise _Dropped("slow_sender", "the body did not arrive in time") from None
            if message["type"] == "http.disconnect":
                request.body_done = True
                raise _Dropped("disconnected", "the peer closed the connection mid-request")
            chunk = message.get("body", b"")
            if chunk:
                received += len(chunk)
                if received > limit:  # a chunked body (a declared length was checked before)
                    raise _body.BodyError(413, f"request body exceeds {limit} bytes")
                if held is not None:
                    await held.take(len(chunk), settings.admission_timeout_s)
                    chunks.append(chunk)
            more = message.get("more_body", False)
        request.body_done = True
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)  # (the join briefly holds one body twice)

    async def _refuse(self, request: _Request, status: int, code: int, message: str, reason: str) -> None:
        await self._drain(request)
        raise _Refusal(status, code, message, reason)

    async def _drain(self, request: _Request) -> None:
        """Read and drop an unread body so the answer reaches the sender; close instead if it is large."""
        if request.body_done:
            return
        length = request.declared_length() or 0
        if request.chunked or length > _DRAIN_LIMIT:
            request.close = request.body_done = True
        elif length > 0:
            try:
                await self._read_body(request, _DRAIN_LIMIT)
            except (_Dropped, _body.BodyError):
                request.close = request.body_done = True

    async def _answer_error(self, request: _Request, status: int, code: int, message: str, fmt: str, *, retry: bool = False) -> None:
        if fmt == PROTOBUF:
            body = Status(code=code, message=message).SerializeToString()
        else:
            body = json.dumps({"code": code, "message": message}).encode()
        await self._answer(request, status, fmt, body, retry=retry)

    async def _answer(self, request: _Request, status: int, content_type: str, body: bytes, *, retry: bool = False) -> None:
        headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
        if retry:
            headers.append((b"retry-after", str(self.service.settings.retry_after_s).encode()))
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="agentotel-collector"'))
        if request.close or self.service.stopping:
            headers.append((b"connection", b"close"))  # h11 closes the connection after the answer
        await request.send({"type": "http.response.start", "status": status, "headers": headers})
        await request.send({"type": "http.response.body", "body": body})


if sys.version_info >= (3, 11):

    async def _within(awaitable: Awaitable[dict], seconds: float) -> dict:
        """`awaitable`'s result, or TimeoutError after `seconds`. A body already received costs no turn of
        the loop (asyncio.wait_for runs the awaitable as a task of its own: three turns per chunk)."""
        async with asyncio.timeout(seconds):
            return await awaitable

else:  # pragma: no cover - Python 3.10 has no asyncio.timeout

    async def _within(awaitable: Awaitable[dict], seconds: float) -> dict:
        return await asyncio.wait_for(awaitable, seconds)


def _parse(data: bytes, fmt: str, service: Service) -> ExportTraceServiceRequest:
    try:
        return service.parse(data, "http", otlp_json=fmt == JSON)
    except _otlp_json.JsonError as exc:
        raise _Refusal(400, INVALID_ARGUMENT, str(exc), "malformed") from None
    except DecodeError as exc:
        raise _Refusal(400, INVALID_ARGUMENT, f"body is not a protobuf ExportTraceServiceRequest: {exc}", "malformed") from None


# -- the listener --------------------------------------------------------------------------------


def _event_loop() -> str:
    """uvloop when it is installed, else asyncio's own loop (the same choice as uvicorn's "auto", made here to be logged)."""
    return "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"


class HttpServer:
    """The OTLP/HTTP listener: uvicorn on its own thread and event loop; `start()`, then `stop()`.

    The socket is bound at construction (so a taken port fails there, and port 0 is resolved);
    `reuse_port` lets several processes listen on the same port (`--workers`, Linux).
    """

    def __init__(self, address: tuple[str, int], service: Service, ssl_context: ssl.SSLContext | None,
                 *, reuse_port: bool = False) -> None:
        self.service = service
        self.receiver = _Receiver(service)
        self.ssl_context = ssl_context  # started by each connection once counted (see `_Connection`)
        self._per_address: dict[str, int] = {}
        self._open = 0
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            self.socket.bind(address)
        except BaseException:
            self.socket.close()
            raise
        self.server_address: tuple[str, int] = self.socket.getsockname()[:2]
        loop = _event_loop()
        self.runtime = f"uvicorn, HTTP/1.1 by h11, {loop} event loop"  # what the start-up log line says
        config = uvicorn.Config(
            self.receiver.handle,  # not called: every connection calls the receiver with itself
            http=functools.partial(_Connection, front=self),
            loop=loop,
            ws="none",  # no WebSocket upgrades: an Upgrade header is answered as plain HTTP
            lifespan="off",
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            timeout_keep_alive=int(IDLE_TIMEOUT_S),
            backlog=1024,
        )
        config.load()
        self._server = uvicorn.Server(config)
        self._server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign] # signals belong to the main thread
        self._thread: threading.Thread | None = None

    def admit(self, address: str) -> str | None:
        """Count a new connection from `address`; why it is refused instead (over a limit), or None."""
        settings = self.service.settings
        # One peer's idle or slow connections cannot fill the server: each address has its own limit.
        count = self._per_address.get(address, 0)
        if count >= settings.max_connections_per_address:
            return "too many connections from this address"
        if self._open >= settings.max_connections:
            return "too many connections"
        self._per_address[address] = count + 1
        self._open += 1
        return None

    def release(self, address: str) -> None:
        self._open -= 1
        count = self._per_address.pop(address, 1) - 1
        if count > 0:
            self._per_address[address] = count

    def start(self) -> None:
        """Serve from a background thread; returns once the listener accepts connections."""
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self.socket]},
                                        name="agentotel-collector-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise OSError(f"the OTLP/HTTP server on {self.server_address[0]}:{self.server_address[1]} did not start")
            time.sleep(0.01)

    def stop(self, grace_s: float) -> None:
        """Stop accepting, let requests in progress finish (up to `grace_s`), close every connection."""
        self._server.config.timeout_graceful_shutdown = max(1, int(grace_s))
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(grace_s + 5)
        self.socket.close()
        self.receiver.close()
