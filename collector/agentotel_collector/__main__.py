"""`agentotel-collector`: run the OTLP receiver until SIGTERM or Ctrl-C.

Example: agentotel-collector --dir /var/lib/agentotel --http 0.0.0.0:4318 --grpc 0.0.0.0:4317 --token-file /etc/agentotel/tokens
"""

# ruff: noqa: E402 - Arrow's allocator options are set before the imports below load pyarrow

from __future__ import annotations

from ._memory import set_arrow_allocator_options

set_arrow_allocator_options()  # before anything below loads pyarrow (its allocator reads them as it loads)

import argparse
import dataclasses
import gc
import logging
import signal
import sys
import threading
from pathlib import Path

from agentotel._config import ConfigError

from . import _workers
from ._collector import Collector
from ._memory import keep_freed_memory
from ._settings import Settings, env_name

# The event loop and the WAL writer give up the GIL at every system call (a socket read, the write, the
# fsync) and must take it back from a decoding thread that is converting: each take waits up to the switch
# interval, several times per request and in series (the writer's group commit waited 28 ms per append at
# 5 ms, 18-20 ms at 1 ms; content-off ingest +20-35 %, content on +17 %, measured under load 14 on 2 cores).
# 0.5 ms spent more CPU on switching for no further gain.
_SWITCH_INTERVAL_S = 0.001


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentotel-collector",
        description="Receive OTLP spans (HTTP and gRPC) and write them to an agentotel Parquet store.",
        epilog="Every option also reads AGENTOTEL_COLLECTOR_<OPTION> (e.g. AGENTOTEL_COLLECTOR_HTTP=0.0.0.0:4318). "
        "Example: agentotel-collector --dir /var/lib/agentotel --http 0.0.0.0:4318 --token-file tokens.txt",
    )
    for f in dataclasses.fields(Settings):
        default = f.default if f.default is not None else "none"
        if isinstance(default, tuple):
            default = f"{default[0]}:{default[1]}"
        parser.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            default=None,
            metavar=f.name.upper().removesuffix("_S").removesuffix("_BYTES") if f.name not in {"http", "grpc"} else "HOST:PORT",
            help=f"{f.metadata['help']} [${env_name(f.name)}; default {default}]",
        )
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)  # set by --workers for each process
    parser.add_argument("--worker-metrics", default=None, help=argparse.SUPPRESS)  # the workers' shared metrics folder
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the collector in the foreground; exit status 0 after an orderly stop, 2 on a bad setting."""
    argv = sys.argv[1:] if argv is None else argv
    args = vars(_parser().parse_args(argv))
    logging.basicConfig(level=args.pop("log_level"), format="%(asctime)s %(levelname)s %(message)s")
    worker = args.pop("worker")
    worker_metrics = args.pop("worker_metrics")
    try:
        settings = Settings.resolve(**args)
        if settings.workers > 1:
            return _workers.supervise(settings, argv)
        if worker is not None:  # one of --workers: the ports are shared, the WAL files are its own
            settings = dataclasses.replace(settings, writer_id=_workers.worker_writer_id(settings, worker))
        keep_freed_memory()
        sys.setswitchinterval(_SWITCH_INTERVAL_S)  # this process only: an embedding program keeps its own
        stop = _stop_on_signals()  # before the listeners open: a SIGTERM right after the start still drains
        shared = (Path(worker_metrics), worker) if worker is not None and worker_metrics else None
        collector = Collector(settings, reuse_port=worker is not None, shared_metrics=shared)
        collector.start()
    except (ConfigError, OSError) as exc:
        print(f"agentotel-collector: {exc}", file=sys.stderr)
        return 2

    # Everything alive now (modules, settings, servers) lives as long as the process: keep the cyclic
    # garbage collector from re-scanning it on every collection while requests churn through objects.
    gc.collect()
    gc.freeze()
    while not stop.wait(1.0):
        pass
    collector.stop()
    return 0


def _stop_on_signals() -> threading.Event:
    """An event set by SIGTERM or SIGINT (Ctrl-C)."""
    stop = threading.Event()

    def _on_signal(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    return stop


if __name__ == "__main__":
    sys.exit(main())
