"""`agentotel view`: the page and its JSON API over one store, served read-only by uvicorn.

Only GET and HEAD are answered. On a loopback address the Host header must name that address (a web
page elsewhere cannot reach the view through DNS rebinding); on any other address every request needs
the token printed at start, as `?token=` on the page's URL (the page then sends it as a header).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping
from urllib.parse import parse_qsl

from agentotel.view import _data, _page

_log = logging.getLogger(__name__)

_REFRESH_S = 2.0  # how often a changed store (new runs) is looked for, at most
_HEADER_TIMEOUT_S = 5.0  # longest a request line and its headers may take to arrive, or a new connection stay silent
_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or address) is this machine only."""
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Store:
    """The `Traces` the view reads, opened again when files were added, folded or compacted."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._traces: Any = None
        self._listing: tuple[Any, ...] | None = None
        self._checked = 0.0

    def _list(self) -> tuple[Any, ...]:
        out = []
        for part in ("spans", "wal"):
            for root, _dirs, files in os.walk(self.directory / part):
                out.extend((root, f) for f in files if not f.startswith("."))
        return tuple(sorted(out))

    def traces(self, *, fresh: bool = False) -> Any:
        from agentotel.query import Traces

        now = time.monotonic()
        if self._traces is None or (fresh and now - self._checked >= _REFRESH_S):
            self._checked = now
            listing = self._list()
            if self._traces is None or listing != self._listing:
                if self._traces is not None:
                    self._traces.close()
                self._traces, self._listing = Traces(self.directory), listing
        return self._traces


class ViewApp:
    """The ASGI application of `agentotel view` (a plain ASGI callable: uvicorn runs it)."""

    def __init__(self, directory: str | Path, *, token: str | None = None, allowed_hosts: tuple[str, ...] = ()) -> None:
        self.store = _Store(Path(directory))
        self.token = token
        self.allowed_hosts = {h.lower() for h in allowed_hosts}
        # One thread reads the store: a DuckDB connection is used by one thread at a time.
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentotel-view")
        self._routes: dict[str, Callable[[Mapping[str, str]], Any]] = {
            "/api/runs": lambda q: _data.runs_page(self.store.traces(fresh=True), q),
            "/api/choices": lambda q: _data.run_choices(self.store.traces(fresh=True)),
            "/api/run": lambda q: _data.run_payload(self.store.traces(), _required(q, "id"), findings=q.get("findings") != "0"),
            "/api/findings": lambda q: _data.findings_payload(self.store.traces(), _required(q, "id")),
            "/api/diff": lambda q: _data.diff_payload(self.store.traces(), _required(q, "a"), _required(q, "b")),
        }

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict]], send: Callable[[dict], Awaitable[None]]) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            self._reader.shutdown(wait=False)
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        status, headers, body = await self._answer(scope)
        await send({"type": "http.response.start", "status": status, "headers": headers + _HEADERS})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})

    async def _answer(self, scope: Mapping[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        if scope["method"] not in ("GET", "HEAD"):
            return _json(405, {"error": "the view is read-only: GET only"}, [(b"allow", b"GET, HEAD")])
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.allowed_hosts and headers.get("host", "").lower() not in self.allowed_hosts:
            return _json(421, {"error": "this view answers only on the address it was started on"})
        query = dict(parse_qsl(scope.get("query_string", b"").decode("utf-8", "replace")))
        if self.token is not None:
            given = query.get("token") or headers.get("authorization", "").removeprefix("Bearer ").strip()
            if not secrets.compare_digest(given.encode(), self.token.encode()):
                return _json(401, {"error": "a token is required: open the URL that `agentotel view` printed"})
        path = scope["path"]
        if path in ("/", "/index.html"):
            config = {"mode": "live", "token": self.token}
            text = _page.page(config, title="agentotel", connect="'self'")
            return 200, [(b"content-type", b"text/html; charset=utf-8")], text.encode("utf-8")
        if path == "/healthz":
            return _json(200, {"ok": True})
        handler = self._routes.get(path)
        if handler is None:
            return _json(404, {"error": f"no such page: {path}"})
        try:
            text = await asyncio.get_running_loop().run_in_executor(self._reader, lambda: _data.to_json(handler(query)))
        except _data.BadRequest as exc:
            return _json(400, {"error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - a query error is shown on the page, the view stays up
            from agentotel.query import QueryError

            if isinstance(exc, QueryError):
                return _json(404, {"error": str(exc)})
            # The exception's text may name files, queries or values of the store: it goes to the log only,
            # and the page gets an id to find it there by.
            incident = secrets.token_hex(4)
            _log.exception("the view failed on %s (error %s)", path, incident)
            return _json(500, {"error": f"the view failed (error {incident}: its log says why)"})
        return 200, [(b"content-type", b"application/json")], text.encode("utf-8")  # encoded in the try: its failure is one too


def _required(query: Mapping[str, str], name: str) -> str:
    value = query.get(name)
    if not value:
        raise _data.BadRequest(f"missing parameter {name!r}")
    return value


def _json(status: int, body: Any, extra: list[tuple[bytes, bytes]] | None = None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    return status, [(b"content-type", b"application/json"), *(extra or [])], json.dumps(body).encode()


def _protocol() -> type:
    """uvicorn's h11 protocol, with a deadline for a request's headers, and room made for a new connection.

    uvicorn waits for headers forever, and counts every open connection against limit_concurrency: 80
    connections each holding half a request (or silent) answered everyone else 503 until they closed.
    A client opening connections again as they are closed (or just keeping many alive) still filled every
    slot for good, so a connection arriving at the limit closes the oldest idle ones: no request in
    progress, or half a request's headers. A client whose idle keep-alive connection is closed opens another.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        _timer: Any = None
        _opened = 0.0

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._opened = self.loop.time()
            self._timer = self.loop.call_later(_HEADER_TIMEOUT_S, self._headers_late)
            excess = len(self.connections) - (self.limit_concurrency or len(self.connections)) + 1
            if excess > 0:
                idle = [c for c in self.connections if c is not self and isinstance(c, Protocol) and c._idle()]
                for connection in sorted(idle, key=lambda c: c._opened)[:excess]:
                    connection._close()

        def _idle(self) -> bool:
            return self.conn.their_state is h11.IDLE and not self.transport.is_closing()

        def _close(self) -> None:
            self.transport.close()
            self.connections.discard(self)  # now: the new connection's request is counted before connection_lost runs

        def data_received(self, data: bytes) -> None:
            if self._timer is None and self.conn.their_state is h11.IDLE:  # a next request on the connection
                self._timer = self.loop.call_later(_HEADER_TIMEOUT_S, self._headers_late)
            super().data_received(data)
            if self._timer is not None and self.conn.their_state is not h11.IDLE:
                self._timer.cancel()
                self._timer = None

        def connection_lost(self, exc: Exception | None) -> None:
            if self._timer is not None:
                self._timer.cancel()
            super().connection_lost(exc)

        def _headers_late(self) -> None:
            self._timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return Protocol


class ViewServer:
    """A running view: `url`, and `stop()`. `serve()` runs one in the foreground; tests start one in a thread."""

    def __init__(self, directory: str | Path, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        import uvicorn

        loopback = is_loopback(host)
        if not loopback and token is None:
            token = secrets.token_urlsafe(24)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host, port))
        except OSError as exc:
            self.socket.close()
            raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
        self.port = self.socket.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        allowed = (f"{shown}:{self.port}", f"localhost:{self.port}") if loopback else ()
        self.app = ViewApp(directory, token=token, allowed_hosts=allowed)
        self.token = token
        self.url = f"http://{shown}:{self.port}/" + (f"?token={token}" if token else "")
        config = uvicorn.Config(self.app, log_level="warning", lifespan="on", access_log=False,
                                timeout_keep_alive=5, limit_concurrency=64, http=_protocol())
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    def run(self) -> None:
        """Serve until interrupted (Ctrl-C)."""
        self._server.run(sockets=[self.socket])

    def start(self) -> "ViewServer":
        """Serve from a background thread; returns once the server answers."""
        self._server.capture_signals = contextlib.nullcontext  # signals belong to the main thread
        self._thread = threading.Thread(target=self.run, name="agentotel-view-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and time.monotonic() < deadline and self._thread.is_alive():
            time.sleep(0.02)
        if not self._server.started:
            raise RuntimeError("the view did not start")
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.socket.close()
