"""`agentotel-collector --workers N`: N collector processes listening on the same ports.

Each worker is a whole collector (`python -m agentotel_collector … --worker I`) that binds its
listeners with SO_REUSEPORT, so Linux spreads new connections across them, and writes WAL files of its
own in the same store (writer id `<--writer-id>-<I>`, or a unique one per process). This process only
starts them, restarts one that dies, and on SIGTERM or Ctrl-C passes SIGTERM on and waits until each
has finished its requests and folded its WAL. Elsewhere than Linux it refuses to start: SO_REUSEPORT
does not spread connections there (on macOS the last process to bind gets them all).
"""

from __future__ import annotations

import ctypes
import fcntl
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from agentotel._config import ConfigError

from ._settings import Settings

log = logging.getLogger("agentotel_collector")

# A worker that exits with this status could not start (a bad setting, a port in use): stop them all.
_CANNOT_START = 2
# A worker that dies sooner than this after its start is started again only after a pause.
_FLAPPING_S = 5.0
_PR_SET_PDEATHSIG = 1
# The workers' shared metrics folder: <tempdir>/agentotel-collector-metrics-XXXX, holding a lock file its
# supervisor keeps locked while it lives. A supervisor killed with SIGKILL cannot remove its folder; the
# next supervisor to start removes every such folder whose lock nobody holds.
_METRICS_PREFIX = "agentotel-collector-metrics-"
_METRICS_LOCK = "supervisor.lock"


def check_platform() -> None:
    """ConfigError unless several processes can share a listening port with the kernel spreading connections."""
    if not sys.platform.startswith("linux") or not hasattr(socket, "SO_REUSEPORT"):
        raise ConfigError(f"--workers needs Linux (SO_REUSEPORT spreads connections across processes there); "
                          f"this is {sys.platform}: run one process per port instead")


def _check_free(what: str, address: tuple[str, int] | None) -> None:
    """OSError when something already listens on `address`: workers must not join another process's port."""
    if address is None:
        return
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:  # without SO_REUSEPORT: fails on any listener
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot listen for {what} on {address[0]}:{address[1]}: {exc.strerror}") from None


def _die_with_parent() -> None:  # in the child, before exec: SIGTERM when the supervisor dies, even by SIGKILL
    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # noqa: BLE001 - best effort
        pass


def supervise(settings: Settings, argv: list[str]) -> int:
    """Run `settings.workers` workers until SIGTERM / Ctrl-C; the exit status is 0 when every worker stopped cleanly."""
    check_platform()
    _check_free("OTLP/HTTP", settings.http)
    _check_free("OTLP/gRPC", settings.grpc)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    # Each worker's metrics go to a file here, so a /metrics scrape of any worker sums them all.
    _remove_orphaned_metrics()
    shared, lock = _metrics_folder()
    try:
        return _supervise(settings, argv, stop, shared)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
        os.close(lock)


def _metrics_folder() -> tuple[str, int]:
    """A new metrics folder and the descriptor holding its lock (closing it lets the next start remove it)."""
    # Made and locked under a name the orphan sweep ignores, then renamed: a folder under the swept
    # name always has its lock held, so a supervisor starting at the same moment cannot take it for dead.
    staging = tempfile.mkdtemp(prefix=f".{_METRICS_PREFIX}")
    lock = os.open(os.path.join(staging, _METRICS_LOCK), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    folder = os.path.join(os.path.dirname(staging), os.path.basename(staging)[1:])
    os.rename(staging, folder)
    return folder, lock


def _remove_orphaned_metrics() -> None:
    """Remove the metrics folders of supervisors that died without cleaning up (their lock is free)."""
    root = tempfile.gettempdir()
    try:
        names = [name for name in os.listdir(root) if name.startswith(_METRICS_PREFIX)]
    except OSError:
        return
    for name in names:
        folder = os.path.join(root, name)
        try:
            if not os.path.isdir(folder) or os.path.islink(folder) or os.lstat(folder).st_uid != os.getuid():
                continue  # another user's, or not one of ours
            lock = os.open(os.path.join(folder, _METRICS_LOCK), os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue  # gone meanwhile, or no lock file: not a folder this sweep knows
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live supervisor holds it
        finally:
            os.close(lock)
        shutil.rmtree(folder, ignore_errors=True)
        log.info("agentotel-collector: removed %s, left by a supervisor that was killed", folder)


def _supervise(settings: Settings, argv: list[str], stop: threading.Event, shared: str) -> int:
    def spawn(index: int) -> tuple[subprocess.Popen, float]:
        # The last --workers wins in argparse: the worker is one process.
        args = [sys.executable, "-m", "agentotel_collector", *argv, "--workers", "1", "--worker", str(index),
                "--worker-metrics", shared]
        return subprocess.Popen(args, preexec_fn=_die_with_parent), time.monotonic()

    workers = {index: spawn(index) for index in range(1, settings.workers + 1)}
    log.info("agentotel-collector: %d workers started (pids %s)", len(workers), ", ".join(str(p.pid) for p, _ in workers.values()))
    status = 0
    while not stop.wait(0.2):
        for index, (process, started) in list(workers.items()):
            code = process.poll()
            if code is None:
                continue
            if code == _CANNOT_START:
                log.error("agentotel-collector: worker %d could not start; stopping the others", index)
                status = code
                stop.set()
                break
            # Its WAL (acknowledged spans included) is folded by the worker started in its place: a dead
            # writer's lock is free, and every start folds the WAL files of dead writers.
            log.warning("agentotel-collector: worker %d (pid %d) exited with %d; starting it again", index, process.pid, code)
            if time.monotonic() - started < _FLAPPING_S:
                time.sleep(1.0)
            workers[index] = spawn(index)
    signalled = set()
    for index, (process, _) in workers.items():
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            signalled.add(index)
    for index, (process, _) in workers.items():
        code = process.wait()
        if code == -signal.SIGTERM and index in signalled:
            continue  # stopped before it installed its handler, which it does before it listens: it took nothing in
        if code != 0 and status == 0:
            log.error("agentotel-collector: worker %d exited with %d", index, code)
            status = code if code > 0 else 1
    return status


def worker_writer_id(settings: Settings, index: int) -> str | None:
    """Worker `index`'s writer id: `--writer-id` with the index appended, or None (unique per process)."""
    return f"{settings.writer_id}-{index}" if settings.writer_id else None
