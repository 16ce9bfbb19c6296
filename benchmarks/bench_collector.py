"""Collector: OTLP/HTTP ingest rate (durable) and CPU per 10,000 spans, against a decode-only receiver.

The corpus's spans are encoded once, as an OTLP exporter sends them: `ExportTraceServiceRequest`
protobuf, batches of 512, gzip. Four client threads (keep-alive connections) post every batch and wait
for each answer. Ours is `agentotel-collector` in its own process with the real store: a 200 comes back
only after the batch is converted, in the WAL and fsync'd; the final fold to Parquet at shutdown is not
in the timed part. The comparison is the ceiling: a minimal receiver in its own process (the standard
library's thread-per-connection `http.server`) that gunzips, parses the protobuf and throws it away. Both take turns within each
repeat on the same pre-encoded bodies, so the client costs the same on both sides. CPU is the server
process's user+system time (from /proc) per 10,000 spans.

`python -m benchmarks.bench_collector --front-doors` compares HTTP front doors on the same bodies:
the collector on uvicorn in one process, with `--workers 2`, and its receiver served by hypercorn.
`--workers` measures `--workers 2` against one process alone, with the CPU each spends.
`--baseline <checkout> [...]` runs this checkout's collector and other checkouts' (their own agentotel too, say
`git worktree add --detach ../old <commit>`) side by side on the same bodies, taking turns: rate, CPU
per 10,000 spans split into user and system time, the CPU of each thread (which names where a
difference goes: decoding threads, the event loop, the WAL writer, folds) and context switches per request
(a voluntary one is a thread that blocked: each GIL hand-off is one).
`--instructions [<checkout> ...]` counts, with callgrind, the instructions per span of parsing and converting
the same requests (no server, no I/O): the conversion's cost whatever the machine's load.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

import requests
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from agentotel import semconv
from benchmarks import corpus
from benchmarks.harness import Result, Sample, interleave

BATCH = 512
CLIENTS = 4
_ROOT = Path(__file__).resolve().parents[1]
_COLLECTOR = _ROOT / "collector"

DECODE_ONLY = r"""
import gzip, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        ExportTraceServiceRequest.FromString(body)  # decode, then discard
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
server.daemon_threads = True
server.serve_forever()
"""


# The same receiver (agentotel_collector._http._Receiver: body budget, deadlines, decoding pool, the
# fsync wait) served by hypercorn instead of uvicorn: the front doors compared on equal terms.
HYPERCORN = r"""
import asyncio, signal, sys
from pathlib import Path
from hypercorn.asyncio import serve
from hypercorn.config import Config
from agentotel.store import StoreWriter
from agentotel_collector._http import _Receiver
from agentotel_collector._ingest import Ingest
from agentotel_collector._service import Service
from agentotel_collector._settings import Settings

settings = Settings.resolve(dir=Path(sys.argv[2]), http=("127.0.0.1", int(sys.argv[1])), grpc="off")
store = StoreWriter(settings.dir)
ingest = Ingest(store, max_queue_bytes=settings.queue_bytes, write_timeout_s=settings.write_timeout_s)
receiver = _Receiver(Service(settings, ingest))

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await receiver.handle(None, scope, receive, send)

async def main():
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    config = Config()
    config.bind = [f"127.0.0.1:{sys.argv[1]}"]
    config.accesslog = config.errorlog = None
    await serve(app, config, shutdown_trigger=stop.wait)

asyncio.run(main())
ingest.close()
store.close()
"""


# The conversion alone (protobuf parse + `convert` to Arrow batches: what a decoding thread does with an
# inflated body), counted by callgrind in a checkout's own process: `--instructions`.
INSTRUCTIONS_WORKER = r"""
import gc, gzip, operator, os, pickle, subprocess, sys
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from agentotel_collector._convert import convert
raw = [gzip.decompress(body) for body in pickle.loads(open(sys.argv[1], "rb").read())]
for body in raw[:2]:  # warm: imports, caches, and CPython's specialisation of the hot loops
    for _ in range(3):
        convert(ExportTraceServiceRequest.FromString(body))
gc.collect()
gc.freeze()

def work():
    for body in raw:
        convert(ExportTraceServiceRequest.FromString(body))

subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True, capture_output=True, timeout=600)
operator.call(work)
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_seconds(pid: int) -> float:
    """User+system CPU of the process and its live children (the workers of `--workers`)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    for child in children:
        try:
            total += _cpu_seconds(int(child))
        except OSError:  # exited meanwhile
            pass
    return total


def _user_system_seconds(pid: int) -> tuple[float, float]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _thread_seconds(pid: int) -> dict[int, float]:
    """User+system CPU of each live thread of `pid`, by thread id."""
    seconds = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        seconds[int(tid)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


def _context_switches(pid: int) -> tuple[int, int]:
    """Voluntary and involuntary context switches of every live thread of `pid`, summed. A voluntary one is a
    thread that blocked: on I/O, or waiting for the GIL or a lock (each GIL hand-off costs one)."""
    voluntary = involuntary = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        except OSError:  # ended meanwhile
            continue
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                voluntary += int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                involuntary += int(line.split()[1])
    return voluntary, involuntary


class _Server:
    def __init__(self, args: list[str], port: int, collector: Path = _COLLECTOR, root: Path = _ROOT) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(collector), str(root), env.get("PYTHONPATH", "")])
        self.port = port
        # `python -m` puts the working directory ahead of PYTHONPATH: run from the checkout, so the server
        # imports the agentotel named above, not whichever tree the benchmark was started in.
        self.process = subprocess.Popen(args, env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server {args[:3]} did not start") from None
                time.sleep(0.05)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _sender(port: int, bodies: Sequence[bytes], cpu: list[float], pid: int,
            latencies: list[float] | None = None) -> Callable[[], None]:
    """Post every body from CLIENTS keep-alive sessions, retrying 503s; the server's CPU is appended to `cpu`,
    and with `latencies`, each acknowledged request's seconds from its send to its 200."""
    url = f"http://127.0.0.1:{port}/v1/traces"
    headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}
    sessions = [requests.Session() for _ in range(CLIENTS)]

    def post_all() -> None:
        before = _cpu_seconds(pid)

        def client(i: int) -> None:
            for body in bodies[i::CLIENTS]:
                while True:
                    sent = time.perf_counter()
                    response = sessions[i].post(url, data=body, headers=headers, timeout=120)
                    if response.status_code == 200:
                        if latencies is not None:
                            latencies.append(time.perf_counter() - sent)
                        break
                    if response.status_code != 503:
                        raise RuntimeError(f"HTTP {response.status_code}: {response.content[:200]!r}")
                    time.sleep(float(response.headers.get("Retry-After", "1")))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        cpu.append(_cpu_seconds(pid) - before)

    return post_all


def _without_content(request):
    """The request as a sender with content capture off would send it: no messages, arguments or results."""
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                kept = [kv for kv in span.attributes if kv.key not in _CONTENT]
                del span.attributes[:]
                span.attributes.extend(kept)
    return request


_CONTENT = frozenset(semconv.PAYLOAD_COLUMNS) | {semconv.GEN_AI_SYSTEM_INSTRUCTIONS}


def _workload(name: str, spans, strip: bool) -> tuple[str, list[bytes], int, int]:
    raw = []
    for i in range(0, len(spans), BATCH):
        request = encode_spans(spans[i : i + BATCH])
        raw.append((_without_content(request) if strip else request).SerializeToString())
    return name, [gzip.compress(body) for body in raw], sum(map(len, raw)), len(spans)


def _workloads(quick: bool) -> list[tuple[str, list[bytes], int, int]]:
    """The two workloads every comparison measures: the agent corpus with its content (fewer, heavier
    requests), and the same spans with content capture off."""
    spans = corpus.generate(BATCH if quick else 40 * BATCH)
    return [
        _workload("agent corpus, content captured", spans[: (1 if quick else 12) * BATCH], strip=False),
        _workload("agent corpus, content capture off", spans, strip=True),
    ]


def run(quick: bool) -> list[Result]:
    """Both servers run once; each workload is measured on both, taking turns within each repeat."""
    repeats = 1 if quick else 5  # the machine is shared: more turns make the medians steadier
    workloads = _workloads(quick)
    scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-collector-"))
    ours_port, peer_port = _free_port(), _free_port()
    ours = peer = None
    results: list[Result] = []
    try:
        ours = _Server(
            [sys.executable, "-m", "agentotel_collector", "--dir", str(scratch / "store"), "--http", f"127.0.0.1:{ours_port}",
             "--grpc", "off", "--log-level", "ERROR"],
            ours_port,
        )
        peer = _Server([sys.executable, "-c", DECODE_ONLY, str(peer_port)], peer_port)
        for name, bodies, raw_bytes, n_spans in workloads:
            ours_cpu: list[float] = []
            peer_cpu: list[float] = []
            samples = interleave(
                {
                    "ours": _sender(ours_port, bodies, ours_cpu, ours.process.pid),
                    "peer": _sender(peer_port, bodies, peer_cpu, peer.process.pid),
                },
                repeats=repeats,
                warmup=1,
            )
            # The warm-up's CPU is the first entry of each list: leave it out.
            results += _results(name, samples, ours_cpu[1:], peer_cpu[1:], n_spans, len(bodies), raw_bytes, repeats)
        peak = _peak_rss_mb(ours.process.pid)
        results = [
            dataclasses.replace(r, notes=f"{r.notes}; collector peak RSS {peak:,.0f} MB over the whole run")
            if r.benchmark.startswith("collector CPU") else r
            for r in results
        ]
    finally:
        for server in (ours, peer):
            if server is not None:
                server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def _results(name, samples, ours_cpu, peer_cpu, n_spans, n_bodies, raw_bytes, repeats) -> list[Result]:
    rate_ours: Sample = samples["ours"].per_second(n_spans)
    rate_peer: Sample = samples["peer"].per_second(n_spans)
    cpu_ours = Sample(tuple(c * 10_000 / n_spans for c in ours_cpu))
    cpu_peer = Sample(tuple(c * 10_000 / n_spans for c in peer_cpu))
    described = (
        f"{name}: corpus seed={corpus.DEFAULT_SEED}, {n_spans:,} spans in {n_bodies} gzip requests of {BATCH} "
        f"({raw_bytes / n_spans:,.0f} B/span before gzip), {CLIENTS} clients, {os.cpu_count()} cores"
    )
    ratio = rate_ours.median / rate_peer.median
    mb_s = rate_ours.median * raw_bytes / n_spans / 1e6
    per_span = raw_bytes / n_spans
    # What the numbers can and cannot show, in the row itself (the targets are fixed by the issue).
    if per_span > 8_000:
        limits = (
            f"20,000 spans/s of these spans is {20_000 * per_span / 1e6:,.0f} MB/s of OTLP, "
            f"{20_000 / rate_peer.median:.2f}x what the decode-only ceiling itself reaches here (that receiver's CPU "
            "is mostly gunzip); beyond the ceiling's work ours converts every span in Python and compresses it "
            "twice (WAL zstd-1, Parquet zstd-3), so the ratio is the reachable target"
        )
    else:
        limits = (
            "at this span size the ceiling spends a few µs of C per span (upb parse), while turning a span into a "
            "row costs a Python receiver far more than that (see the CPU row), so within-3x (>= 1/3 of the "
            "ceiling) is out of reach for any Python conversion; the absolute rate is the reachable target"
        )
    return [
        Result(
            benchmark=f"collector ingest rate ({name})",
            metric="spans per second acknowledged, OTLP/HTTP protobuf gzip, durable (WAL fsync'd) before the 200",
            unit="spans/s",
            ours=rate_ours.median,
            peer_name="decode-only receiver (gunzip + protobuf parse, discard)",
            peer=rate_peer.median,
            target=">= 20,000 spans/s and within 3x of the decode-only ceiling (ratio >= 0.33)",
            met=rate_ours.median >= 20_000 and ratio >= 1 / 3,
            notes=(
                f"one collector process; {mb_s:,.1f} MB/s of uncompressed OTLP; the ceiling does no conversion and "
                f"no I/O; {limits}; load average {os.getloadavg()[0]:.2f} at the end (the machine is shared)"
            ),
            corpus=described,
            ours_spread=rate_ours.spread,
            peer_spread=rate_peer.spread,
            repeats=repeats,
        ),
        Result(
            benchmark=f"collector CPU cost ({name})",
            metric="server CPU seconds (user+system) per 10,000 spans ingested",
            unit="s",
            ours=cpu_ours.median if len(cpu_ours) else None,
            peer_name="decode-only receiver",
            peer=cpu_peer.median if len(cpu_peer) else None,
            notes=(
                "both include HTTP handling and gunzip; ours adds conversion to Arrow, WAL write, fsync and folds to "
                + (f"Parquet; ours = {10_000 / cpu_ours.median:,.0f} spans per CPU-second" if len(cpu_ours) and cpu_ours.median else "Parquet")
            ),
            corpus=described,
            ours_spread=cpu_ours.spread,
            peer_spread=cpu_peer.spread,
            repeats=repeats,
        ),
    ]


def front_doors(quick: bool) -> list[Result]:
    """The HTTP front door compared: one uvicorn process, `--workers 2`, and the same receiver on hypercorn.

    `AGENTOTEL_BENCH_BASELINE_COLLECTOR=<checkout>/collector` adds that checkout's collector (say, the
    `http.server` one before issue 20) as one more server.
    """
    import importlib.util

    repeats = 1 if quick else 3
    workloads = _workloads(quick)
    scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-front-doors-"))
    commands: dict[str, tuple[list[str], Path]] = {}

    def collector(name: str, *extra: str, package: Path = _COLLECTOR) -> None:
        port = _free_port()
        commands[name] = ([sys.executable, "-m", "agentotel_collector", "--dir", str(scratch / name.replace(" ", "_")),
                           "--http", f"127.0.0.1:{port}", "--grpc", "off", "--log-level", "ERROR", *extra], package)

    collector("uvicorn, 1 process")
    collector("uvicorn, --workers 2", "--workers", "2")
    if importlib.util.find_spec("hypercorn") is not None:
        port = _free_port()
        commands["hypercorn, 1 process"] = ([sys.executable, "-c", HYPERCORN, str(port), str(scratch / "hypercorn")], _COLLECTOR)
    baseline = os.environ.get("AGENTOTEL_BENCH_BASELINE_COLLECTOR")
    if baseline:
        collector("baseline checkout", package=Path(baseline))
    servers: dict[str, _Server] = {}
    results: list[Result] = []
    try:
        for name, (args, package) in commands.items():
            port = int(args[args.index("--http") + 1].rsplit(":", 1)[1]) if "--http" in args else int(args[3])
            servers[name] = _Server(args, port, package)
        for workload, bodies, raw_bytes, n_spans in workloads:
            cpu: dict[str, list[float]] = {name: [] for name in servers}
            samples = interleave(
                {name: _sender(server.port, bodies, cpu[name], server.process.pid) for name, server in servers.items()},
                repeats=repeats, warmup=1,
            )
            first = next(iter(servers))
            for name in servers:
                rate = samples[name].per_second(n_spans)
                reference = samples[first].per_second(n_spans)
                spent = Sample(tuple(c * 10_000 / n_spans for c in cpu[name][1:]))
                results.append(Result(
                    benchmark=f"collector front door: {name} ({workload})",
                    metric="spans per second acknowledged, OTLP/HTTP protobuf gzip, durable before the 200",
                    unit="spans/s",
                    ours=rate.median,
                    peer_name=first,
                    peer=reference.median,
                    notes=(f"server CPU {spent.median:.2f} s per 10,000 spans (all its processes); {CLIENTS} clients; "
                           f"load average {os.getloadavg()[0]:.2f} at the end (the machine is shared)"),
                    corpus=f"{workload}: {n_spans:,} spans in {len(bodies)} gzip requests of {BATCH}",
                    ours_spread=rate.spread,
                    peer_spread=reference.spread,
                    repeats=repeats,
                ))
    finally:
        for server in servers.values():
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def workers(quick: bool) -> list[Result]:
    """`agentotel-collector --workers 2` against one process, side by side on the same bodies: the ingest
    rate each acknowledges and the CPU each spends (all its processes) per 10,000 spans.

    Two workers can only help where a core is free: on a shared machine, read the rate ratio with the
    load average in the notes; the CPU ratio says what the second process costs either way.
    """
    repeats = 1 if quick else 5
    workloads = _workloads(quick)
    scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-workers-"))
    servers: dict[int, _Server] = {}
    results: list[Result] = []
    try:
        for count in (1, 2):
            port = _free_port()
            servers[count] = _Server([sys.executable, "-m", "agentotel_collector", "--dir", str(scratch / f"w{count}"),
                                      "--http", f"127.0.0.1:{port}", "--grpc", "off", "--log-level", "ERROR",
                                      "--workers", str(count)], port)
        for workload, bodies, _raw_bytes, n_spans in workloads:
            cpu: dict[int, list[float]] = {count: [] for count in servers}
            samples = interleave({count: _sender(server.port, bodies, cpu[count], server.process.pid)
                                  for count, server in servers.items()}, repeats=repeats, warmup=1)
            two, one = samples[2].per_second(n_spans), samples[1].per_second(n_spans)
            spent = {count: Sample(tuple(c * 10_000 / n_spans for c in cpu[count][1:])).median for count in servers}
            results.append(Result(
                benchmark=f"collector --workers 2 against 1 ({workload})",
                metric="spans per second acknowledged, OTLP/HTTP protobuf gzip, durable before the 200",
                unit="spans/s", ours=two.median, peer_name="the same collector, one process", peer=one.median,
                notes=(f"server CPU per 10,000 spans: {spent[2]:.2f} s with 2 workers, {spent[1]:.2f} s with 1 "
                       f"(ratio {spent[2] / spent[1]:.2f}); {CLIENTS} clients; {os.cpu_count()} cores; load average "
                       f"{os.getloadavg()[0]:.2f} at the end (the machine is shared)"),
                corpus=f"{workload}: {n_spans:,} spans in {len(bodies)} gzip requests of {BATCH}",
                ours_spread=two.spread, peer_spread=one.spread, repeats=repeats,
            ))
    finally:
        for server in servers.values():
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def _thread_names(pid: int) -> dict[int, str]:
    """Thread id -> Python thread name, from py-spy when it is installed (Python 3.11 names no OS thread)."""
    if shutil.which("py-spy") is None:
        return {}
    try:
        dump = subprocess.run(["py-spy", "dump", "-p", str(pid)], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    names = {}
    for line in dump.splitlines():
        if line.startswith("Thread ") and '"' in line:
            names[int(line.split()[1])] = line.split('"')[1]
    return names


def baseline(checkouts: Sequence[Path], quick: bool) -> list[Result]:
    """This checkout's collector against each of `checkouts`' (its collector and its agentotel), taking turns on
    the same bodies: rate, CPU per 10,000 spans (user and system) and where the CPU went, thread by thread."""
    repeats = 1 if quick else 6
    workloads = _workloads(quick)
    scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-baseline-"))
    roots = {"this checkout": _ROOT, **{f"baseline {checkout.name}": checkout.resolve() for checkout in checkouts}}
    servers: dict[str, _Server] = {}
    results: list[Result] = []
    try:
        for name, root in roots.items():
            port = _free_port()
            servers[name] = _Server([sys.executable, "-m", "agentotel_collector", "--dir", str(scratch / name.replace(" ", "_")),
                                     "--http", f"127.0.0.1:{port}", "--grpc", "off", "--log-level", "ERROR"],
                                    port, root / "collector", root)
        for workload, bodies, _raw_bytes, n_spans in workloads:
            cpu: dict[str, list[float]] = {name: [] for name in servers}
            split = {name: [0.0, 0.0] for name in servers}
            threads: dict[str, dict[int, float]] = {name: {} for name in servers}
            latencies: dict[str, list[float]] = {name: [] for name in servers}
            switches = {name: [0, 0] for name in servers}

            def measured(name: str) -> Callable[[], None]:
                server = servers[name]
                counted: list[float] = []
                post = _sender(server.port, bodies, cpu[name], server.process.pid, counted)

                def once() -> None:
                    pid = server.process.pid
                    user, system, before = *_user_system_seconds(pid), _thread_seconds(pid)
                    switched = _context_switches(pid)
                    counted.clear()
                    post()
                    if len(cpu[name]) == 1:  # the warm-up turn: not counted
                        return
                    switched_after = _context_switches(pid)
                    switches[name][0] += switched_after[0] - switched[0]
                    switches[name][1] += switched_after[1] - switched[1]
                    latencies[name].extend(counted)
                    after = _thread_seconds(pid)
                    user2, system2 = _user_system_seconds(pid)
                    split[name][0] += user2 - user
                    split[name][1] += system2 - system
                    for tid, seconds in after.items():
                        threads[name][tid] = threads[name].get(tid, 0.0) + seconds - before.get(tid, 0.0)
                return once

            samples = interleave({name: measured(name) for name in servers}, repeats=repeats, warmup=1)
            per = 10_000 / n_spans / repeats
            reference = next(iter(servers))
            for name, server in servers.items():
                rate = samples[name].per_second(n_spans)
                spent = Sample(tuple(c * 10_000 / n_spans for c in cpu[name][1:]))
                names = _thread_names(server.process.pid)
                busiest = sorted(threads[name].items(), key=lambda item: -item[1])[:6]
                by_thread = ", ".join(f"{names.get(tid, tid)} {seconds * per:.3f}" for tid, seconds in busiest)
                waits = sorted(latencies[name])
                latency = f"request to 200 p50 {waits[len(waits) // 2] * 1e3:.1f} ms, p90 {waits[int(len(waits) * 0.9)] * 1e3:.1f} ms; " if waits else ""
                results.append(Result(
                    benchmark=f"collector A/B: {name} ({workload})",
                    metric="spans per second acknowledged, OTLP/HTTP protobuf gzip, durable before the 200",
                    unit="spans/s", ours=rate.median, peer_name=reference, peer=samples[reference].per_second(n_spans).median,
                    notes=(f"CPU per 10,000 spans {spent.median:.3f} s" + (f" (±{spent.spread:.0%})" if spent.spread is not None else "")
                           + f": user {split[name][0] * per:.3f}, "
                           f"system {split[name][1] * per:.3f}; by thread: {by_thread}; {latency}"
                           f"context switches per request: {switches[name][0] / repeats / len(bodies):,.0f} voluntary, "
                           f"{switches[name][1] / repeats / len(bodies):,.0f} involuntary; {CLIENTS} clients; "
                           f"load average {os.getloadavg()[0]:.2f} at the end (the machine is shared)"),
                    corpus=f"{workload}: {n_spans:,} spans in {len(bodies)} gzip requests of {BATCH}",
                    ours_spread=rate.spread, peer_spread=samples[reference].per_second(n_spans).spread, repeats=repeats,
                ))
    finally:
        for server in servers.values():
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def instructions(checkouts: Sequence[Path], quick: bool) -> dict[str, dict[str, float]]:
    """{workload: {checkout: instructions per span}} of parsing and converting the workloads' requests
    (`INSTRUCTIONS_WORKER` under callgrind: deterministic whatever the machine's load; ~50x slower than a
    plain run). The bodies are made once here and read by every checkout's worker."""
    import pickle
    import re

    python = os.path.realpath(sys.executable)  # the interpreter itself: valgrind must not trace a pyenv shim
    table: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="agentotel-bench-instructions-") as tmp:
        for name, bodies, _raw_bytes, n_spans in _workloads(quick):
            if not quick:  # a fixed slice keeps each callgrind run to minutes
                bodies = bodies[: max(1, len(bodies) // 4)]
                n_spans = min(n_spans, len(bodies) * BATCH)
            corpus_file = Path(tmp) / "bodies.pickle"
            corpus_file.write_bytes(pickle.dumps(bodies))
            row = table[f"{name} ({n_spans:,} spans)"] = {}
            for root in checkouts:
                env = {**os.environ, "PYTHONHASHSEED": "0",
                       "PYTHONPATH": os.pathsep.join([str(root / "collector"), str(root), os.environ.get("PYTHONPATH", "")])}
                out_file = Path(tmp) / "callgrind.out"
                run = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
                                      "--toggle-collect=_operator_call", f"--callgrind-out-file={out_file}", python, "-c",
                                      INSTRUCTIONS_WORKER, str(corpus_file)],
                                     capture_output=True, text=True, cwd=root, env=env, timeout=3600)  # fmt: skip
                found = re.search(r"^summary:\s*(\d+)", out_file.read_text(), re.M) if out_file.exists() else None
                if run.returncode != 0 or found is None:
                    raise RuntimeError(f"{root}: callgrind run failed: {run.stderr.strip()[-500:]}")
                if os.environ.get("AGENTOTEL_CALLGRIND_KEEP"):
                    keep = Path(os.environ["AGENTOTEL_CALLGRIND_KEEP"]) / f"callgrind.{root.name}.{name.split()[-1]}.out"
                    keep.parent.mkdir(parents=True, exist_ok=True)
                    keep.write_bytes(out_file.read_bytes())
                out_file.unlink()
                row[str(root)] = int(found.group(1)) / n_spans
    return table


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    if "--instructions" in sys.argv:
        # --instructions [checkout ...]: parse + convert instructions per span, this checkout and each named one
        others = [Path(a).resolve() for a in sys.argv[sys.argv.index("--instructions") + 1:] if not a.startswith("--")]
        for workload, row in instructions([_ROOT, *others], quick).items():
            print(workload, {root: f"{count:,.0f}" for root, count in row.items()})
        sys.exit(0)
    if "--baseline" in sys.argv:
        # --baseline <checkout> [<checkout> ...]: each taking turns with this one
        chosen = baseline([Path(a) for a in sys.argv[sys.argv.index("--baseline") + 1:] if not a.startswith("--")], quick)
    else:
        chosen = (front_doors if "--front-doors" in sys.argv else workers if "--workers" in sys.argv else run)(quick)
    for result in chosen:
        print(result.to_dict())
