"""The running receiver: both listeners, the write path, and an orderly stop."""

from __future__ import annotations

import ipaddress
import logging
import ssl
import sys
import threading
from pathlib import Path
from typing import Any

import grpc

from ._grpc import start_grpc
from ._http import HttpServer
from ._ingest import Ingest, SpanStore
from ._service import Service
from ._settings import Settings
from ._watch import Metrics, WorkerShare, wal_bytes

log = logging.getLogger("agentotel_collector")


class Collector:
    """An OTLP receiver writing the agentotel store; `start()`, then `stop()` (or use it as a context manager).

    `Collector(dir="traces", http=("127.0.0.1", 0), grpc=None).start()` listens on an ephemeral port;
    `http_address` / `grpc_address` say where. Keyword options are `Settings` fields; anything not given
    comes from AGENTOTEL_COLLECTOR_* variables, then the defaults.
    """

    def __init__(self, settings: Settings | None = None, *, store: SpanStore | None = None, reuse_port: bool = False,
                 shared_metrics: tuple[Path, int] | None = None, **options: Any) -> None:
        if settings is not None and options:
            raise TypeError("pass either settings or keyword options, not both")
        self.settings = settings or Settings.resolve(**options)
        self._store = store
        self._reuse_port = reuse_port  # several processes share the ports (`--workers`, Linux's SO_REUSEPORT)
        self._shared_metrics = shared_metrics  # `--workers`: (the workers' metrics folder, this worker's index)
        self._share: WorkerShare | None = None
        self._http: HttpServer | None = None
        self._grpc: grpc.Server | None = None
        self.http_address: tuple[str, int] | None = None
        self.grpc_address: tuple[str, int] | None = None
        self._stopped = threading.Event()
        self._stop_lock = threading.Lock()

    def start(self) -> "Collector":
        """Open the store and start listening; returns self."""
        settings = self.settings
        if self._store is None:
            from agentotel.store import StoreWriter

            self._store = StoreWriter(
                settings.dir,
                writer_id=settings.writer_id,
                wal_max_bytes=settings.wal_max_bytes,
                wal_max_age_s=settings.wal_max_age_s,
                wal_dir=settings.wal_dir,
            )
        self.metrics = metrics = Metrics()
        if hasattr(self._store, "on_fold"):
            self._store.on_fold = metrics.folded
        self._ingest = Ingest(
            self._store,
            max_queue_bytes=settings.queue_bytes,
            write_timeout_s=settings.write_timeout_s,
            on_write=metrics.wal_written,
        )
        self.service = Service(settings, self._ingest, metrics)
        ingest = self._ingest
        metrics.gauge("agentotel_collector_queue_bytes", "Converted spans in the write queue (waiting for, or being written to, the WAL), bytes.",
                      lambda: ingest.queued_bytes, per_process=True)
        metrics.gauge("agentotel_collector_queue_max_bytes", "The write queue's limit (--queue-bytes); beyond it 503.",
                      lambda: settings.queue_bytes, per_process=True)
        if self._shared_metrics is not None:
            self._share = WorkerShare(metrics, *self._shared_metrics).start()
        # The folder the store's WAL segments are in (the store says where, when it can).
        wal_path = getattr(self._store, "wal_path", None)
        wal_dir = Path(wal_path).parent if wal_path is not None else Path(settings.dir) / "wal"
        metrics.gauge("agentotel_collector_wal_bytes", "Size of the write-ahead log on disk (live and orphaned segments), bytes.",
                      wal_bytes(wal_dir))
        try:
            if settings.http is not None:
                self._http = _listening("OTLP/HTTP", settings.http,
                                        lambda: HttpServer(settings.http, self.service, self._ssl_context(), reuse_port=self._reuse_port))
                self.http_address = self._http.server_address[:2]
                self._http.start()
                log.info("agentotel-collector: OTLP/HTTP on %s:%d%s (%s; thread switch interval %g ms)", *self.http_address,
                         " (TLS)" if settings.tls_cert else "", self._http.runtime, sys.getswitchinterval() * 1000)
            if settings.grpc is not None:
                self._grpc, port = _listening("OTLP/gRPC", settings.grpc,
                                              lambda: start_grpc(self.service, settings.grpc, self._grpc_credentials(),
                                                                 reuse_port=self._reuse_port))
                self.grpc_address = (settings.grpc[0], port)
                log.info("agentotel-collector: OTLP/gRPC on %s:%d%s", *self.grpc_address, " (TLS)" if settings.tls_cert else "")
        except BaseException:
            self.stop()
            raise
        exposed = [f"{host}:{port}" for host, port in filter(None, (self.http_address, self.grpc_address)) if not _loopback(host)]
        if exposed and self.service.open_to_all:
            # Whoever can send spans chooses run names, users and payloads that people then read and act on.
            log.warning("agentotel-collector: listening on %s with no token: anyone who can reach it can write spans "
                        "(give --token-file)", ", ".join(exposed))
        log.info("agentotel-collector: writing to %s", settings.dir)
        self._serving = True
        return self

    def stop(self, grace_s: float = 30.0) -> None:
        """Stop accepting, finish requests in progress, fold the WAL into Parquet, release the store."""
        with self._stop_lock:
            if self._stopped.is_set():
                return
            service = getattr(self, "service", None)
            if service is not None:
                service.stopping = True  # new requests get 503 (they will be retried elsewhere or later)
            grpc_stopped = self._grpc.stop(grace_s) if self._grpc is not None else None
            if self._http is not None:
                self._http.stop(grace_s)
            if service is not None:
                service.wait_idle(grace_s)
            if grpc_stopped is not None:
                grpc_stopped.wait(grace_s)
            ingest = getattr(self, "_ingest", None)
            if ingest is not None:
                ingest.close()
            if self._store is not None:
                self._store.close()
            if self._share is not None:
                self._share.stop()  # its last counts, for the scrapes of the workers still running
            self._stopped.set()
            if getattr(self, "_serving", False):
                log.info("agentotel-collector: stopped; WAL folded into Parquet")

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until `stop()` has finished; False on timeout."""
        return self._stopped.wait(timeout_s)

    def __enter__(self) -> "Collector":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _ssl_context(self) -> ssl.SSLContext | None:
        if self.settings.tls_cert is None:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(str(self.settings.tls_cert), str(self.settings.tls_key))
        return context

    def _grpc_credentials(self) -> grpc.ServerCredentials | None:
        if self.settings.tls_cert is None or self.settings.tls_key is None:
            return None
        return grpc.ssl_server_credentials([(self.settings.tls_key.read_bytes(), self.settings.tls_cert.read_bytes())])


def _loopback(host: str) -> bool:
    """Whether a listening address is this machine only ("0.0.0.0" and "::" are every interface)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def _listening(what: str, address: tuple[str, int], start: Any) -> Any:
    """`start()`, with an address that cannot be bound named in the error (the port is taken, say)."""
    try:
        return start()
    except OSError as exc:
        if exc.errno is None:  # already says where (gRPC's own bind failure)
            raise
        raise OSError(exc.errno, f"cannot listen for {what} on {address[0]}:{address[1]}: {exc.strerror}") from None
