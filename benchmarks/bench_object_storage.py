"""Object storage: collector ingest into s3:// against a local folder, and queries over s3:// at 100k spans.

The S3 API is moto's server on 127.0.0.1 (tests/s3_server.py), a Python process on the same cores: an
upload costs this machine CPU that a real bucket would not, so the ratios here are a floor.

- Ingest: two `agentotel-collector` processes, one writing `--dir <folder>`, one `--dir s3://…` (WAL on
  local disk), the same fold size (`--wal-max-bytes`), fed in turns the same pre-encoded OTLP requests as
  bench_collector (512-span gzip protobuf, 4 clients). The 200 comes after the WAL fsync on both sides;
  the folds (Parquet written locally, or uploaded) run in the background during the timed part.
- Queries: the same compacted 100k-span store, once on disk and once in the bucket. Ours over s3:// is
  `agentotel.open("s3://…")`, which mirrors the Parquet files to local disk (cold: everything downloaded;
  warm: only the listing is compared) and queries them as a local store. The alternative measured for
  the choice: DuckDB over a pyarrow dataset of the bucket's files (no httpfs extension offline), which
  reads only the columns and row groups it needs, but from the bucket at every query.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

import agentotel
from agentotel.store import ParquetSpanExporter, StoreWriter, compact, fs, spans_to_batch
from benchmarks import corpus
from benchmarks.bench_collector import BATCH, _free_port, _sender, _Server, _workload
from benchmarks.harness import Result, interleave

_ROOT = Path(__file__).resolve().parents[1]
FOLD_BYTES = 16 * 1024 * 1024


@contextmanager
def _bucket() -> Iterator[str]:
    """A fresh bucket on a moto S3 server process; the AWS_* variables point at it meanwhile."""
    process = subprocess.Popen([sys.executable, str(_ROOT / "tests" / "s3_server.py")], stdout=subprocess.PIPE, text=True)
    saved = dict(os.environ)
    try:
        port = int(process.stdout.readline())
        sys.path.insert(0, str(_ROOT))
        from tests.s3_server import aws_environment

        os.environ.update(aws_environment(port))
        import boto3

        name = f"bench-{uuid.uuid4().hex[:8]}"
        boto3.client("s3").create_bucket(Bucket=name)
        yield f"s3://{name}"
    finally:
        os.environ.clear()
        os.environ.update(saved)
        process.terminate()
        process.wait(10)


def _ingest(bucket: str, scratch: Path, quick: bool) -> list[Result]:
    repeats = 1 if quick else 5
    spans = corpus.generate(BATCH if quick else 24 * BATCH)
    name, bodies, raw_bytes, n_spans = _workload("agent corpus, content captured", spans, strip=False)
    common = ["--grpc", "off", "--log-level", "ERROR", "--wal-max-bytes", str(FOLD_BYTES)]
    local_port, s3_port = _free_port(), _free_port()
    servers = []
    try:
        local = _Server([sys.executable, "-m", "agentotel_collector", "--dir", str(scratch / "local"),
                         "--http", f"127.0.0.1:{local_port}", *common], local_port)
        servers.append(local)
        remote = _Server([sys.executable, "-m", "agentotel_collector", "--dir", f"{bucket}/ingest",
                          "--wal-dir", str(scratch / "s3-wal"), "--http", f"127.0.0.1:{s3_port}", *common], s3_port)
        servers.append(remote)
        cpu_local: list[float] = []
        cpu_s3: list[float] = []
        samples = interleave({"local": _sender(local_port, bodies, cpu_local, local.process.pid),
                              "s3": _sender(s3_port, bodies, cpu_s3, remote.process.pid)}, repeats=repeats, warmup=1)
    finally:
        for server in servers:
            server.stop()
    ours, peer = samples["s3"].per_second(n_spans), samples["local"].per_second(n_spans)
    uploaded = len(fs.open_remote(f"{bucket}/ingest").files())
    return [Result(
        benchmark="collector ingest into object storage",
        metric="spans per second acknowledged (WAL fsync'd before the 200), folds uploaded in the background",
        unit="spans/s", ours=ours.median, peer_name="the same collector writing a local folder", peer=peer.median,
        target=">= 0.8 of local disk at the same fold size", met=ours.median >= 0.8 * peer.median,
        notes=(f"fold size {FOLD_BYTES >> 20} MiB (--wal-max-bytes) on both; {uploaded} Parquet objects uploaded over the run; "
               f"S3 is moto on 127.0.0.1 sharing the {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at the end"),
        corpus=f"{name}: corpus seed={corpus.DEFAULT_SEED}, {n_spans:,} spans in {len(bodies)} gzip requests of {BATCH}",
        ours_spread=ours.spread, peer_spread=peer.spread, repeats=repeats,
    )]


def _store(scratch: Path, n_spans: int) -> tuple[Path, int]:
    store = scratch / "store"
    exporter = ParquetSpanExporter(store)
    for chunk in corpus.iter_chunks(n_spans):
        for i in range(0, len(chunk), BATCH):
            exporter.export(chunk[i : i + BATCH])
    exporter.shutdown()
    compact(store, grace_s=0)
    return store, sum(1 for _ in (store / "spans").rglob("*.parquet"))


_DAYS = 10


def _days_store(scratch: Path, n_spans: int) -> Path:
    """The same corpus laid over `_DAYS` days, as a bucket that keeps several days holds it: each chunk of
    whole runs moved on by a day more than the one before, written by the store's writer and compacted."""
    store = scratch / "days"
    writer = StoreWriter(store)
    chunks = list(corpus.iter_chunks(n_spans, chunk_size=max(1, n_spans // _DAYS)))
    for day, chunk in enumerate(chunks):
        batch = spans_to_batch(chunk)
        shift = pa.scalar(day * 86_400 * 10**9, pa.int64())
        for column in ("start_time", "end_time"):
            index = batch.schema.get_field_index(column)
            moved = pc.add(batch.column(index).cast(pa.int64()), shift).cast(batch.schema.field(index).type)
            batch = batch.set_column(index, batch.schema.field(index), moved)
        writer.append(batch)
    writer.close()
    compact(store, grace_s=0)
    return store


def _lazy_rows(bucket: str, scratch: Path, quick: bool) -> list[Result]:
    """Cold reads of a bucket holding several days: an open fetches only the partitions a query needs,
    against mirroring the whole bucket first (what every open did before partitions were fetched lazily)."""
    n_spans = 2_000 if quick else 100_000
    repeats, warmup = (1, 0) if quick else (3, 1)
    store = _days_store(scratch, n_spans)
    uri = f"{bucket}/days"
    remote = fs.open_remote(uri)
    for path in (store / "spans").rglob("*.parquet"):
        remote.put(path.relative_to(store).as_posix(), path.read_bytes())
    newest = agentotel.open(store).sql("SELECT run_id FROM runs WHERE parent_run_id IS NULL ORDER BY start_time DESC "
                                       "LIMIT 1 OFFSET 1").fetchall()[0][0]

    def cold() -> None:
        shutil.rmtree(fs.local_root(uri), ignore_errors=True)

    def whole() -> agentotel.Traces:
        return agentotel.open(fs.sync(uri))  # the mirror made complete, then opened as a local store

    runs = interleave({"lazy": lambda: agentotel.open(uri).runs(limit=50).fetchall(),
                       "whole": lambda: whole().runs(limit=50).fetchall()}, repeats=repeats, warmup=warmup, before=cold)
    trajectory = interleave({"lazy": lambda: agentotel.open(uri).trajectory(newest),
                             "whole": lambda: whole().trajectory(newest)}, repeats=repeats, warmup=warmup, before=cold)
    partitions = len(list((store / "spans").glob("date=*")))
    files = sum(1 for _ in (store / "spans").rglob("*.parquet"))
    described = f"corpus seed={corpus.DEFAULT_SEED}, {n_spans:,} spans over {partitions} days, compacted: {files} Parquet file(s)"
    notes = (f"cold: the local mirror emptied before each call; the lazy open fetches the newest two days, then what "
             f"the query needs; load average {os.getloadavg()[0]:.2f} at the end (the machine is shared)")
    peer_name = "mirror the whole bucket, then the same query"
    return [
        Result(benchmark="runs over s3:// (cold, several days)", metric="agentotel.open(uri).runs(limit=50), first open",
               unit="ms", ours=runs["lazy"].median * 1e3, peer_name=peer_name, peer=runs["whole"].median * 1e3,
               notes=notes, corpus=described, ours_spread=runs["lazy"].spread, peer_spread=runs["whole"].spread, repeats=repeats),
        Result(benchmark="trajectory over s3:// (cold, several days)",
               metric="agentotel.open(uri).trajectory(run) of a run of the newest day, first open", unit="ms",
               ours=trajectory["lazy"].median * 1e3, peer_name=peer_name, peer=trajectory["whole"].median * 1e3,
               notes=notes, corpus=described, ours_spread=trajectory["lazy"].spread,
               peer_spread=trajectory["whole"].spread, repeats=repeats),
    ]


def _queries(bucket: str, scratch: Path, quick: bool) -> list[Result]:
    n_spans = 2_000 if quick else 100_000
    repeats, warmup = (1, 0) if quick else (7, 1)  # quick: every call made once; its figures mean nothing
    store, n_files = _store(scratch, n_spans)
    uri = f"{bucket}/query"
    remote = fs.open_remote(uri)
    for path in (store / "spans").rglob("*.parquet"):
        remote.put(path.relative_to(store).as_posix(), path.read_bytes())
    local = agentotel.open(store)
    runs = local.sql("SELECT run_id, name, steps FROM runs WHERE parent_run_id IS NULL ORDER BY steps DESC, run_id").fetchall()
    run_a = runs[len(runs) // 3]
    run_b = next((r for r in runs if r[1] == run_a[1] and r[0] != run_a[0]), runs[len(runs) // 3 + 1])
    trace_a = local.sql("SELECT trace_id FROM runs WHERE run_id = $r", params={"r": run_a[0]}).fetchall()[0][0]

    def cold_open() -> None:
        shutil.rmtree(fs.local_root(uri), ignore_errors=True)
        agentotel.open(uri).close()

    cold = interleave({"s3": cold_open, "local": lambda: agentotel.open(store).close()}, repeats=repeats, warmup=warmup)
    over_s3 = agentotel.open(uri)
    warm = interleave({"s3": lambda: agentotel.open(uri).close(), "local": lambda: agentotel.open(store).close()},
                      repeats=repeats, warmup=warmup)
    trajectory = interleave({"s3": lambda: over_s3.trajectory(run_a[0]), "local": lambda: local.trajectory(run_a[0])},
                            repeats=repeats, warmup=warmup)
    diff = interleave({"s3": lambda: over_s3.diff(run_a[0], run_b[0]), "local": lambda: local.diff(run_a[0], run_b[0])},
                      repeats=repeats, warmup=warmup)
    # The alternative read path: DuckDB over a pyarrow dataset of the bucket (what the choice was measured against).
    keys = [remote.key(k) for k in remote.files()]
    con = duckdb.connect()
    con.register("bucket_spans", ds.dataset(keys, filesystem=remote.fs, format="parquet"))
    one_trace = "SELECT span_id, name, start_time, input, output FROM {} WHERE trace_id = $t ORDER BY start_time"
    fetch = interleave({"mirror": lambda: over_s3.sql(one_trace.format("spans"), params={"t": trace_a}).fetchall(),
                        "dataset": lambda: con.sql(one_trace.format("bucket_spans"), params={"t": trace_a}).fetchall()},
                       repeats=repeats, warmup=warmup)
    described = f"corpus seed={corpus.DEFAULT_SEED}, {n_spans:,} spans, compacted: {n_files} Parquet file(s)"
    load = f"load average {os.getloadavg()[0]:.2f} at the end (the machine is shared)"

    def row(name: str, metric: str, case: dict, notes: str, ours: str = "s3", peer: str = "local",
            peer_name: str = "the same store on local disk") -> Result:
        a, b = case[ours], case[peer]
        return Result(benchmark=name, metric=metric, unit="ms", ours=a.median * 1e3, peer_name=peer_name, peer=b.median * 1e3,
                      notes=f"{notes}; {load}", corpus=described, ours_spread=a.spread, peer_spread=b.spread, repeats=repeats)

    return [
        row("open over s3:// (cold)", "agentotel.open(uri) with an empty local mirror: list, download, validate",
            cold, "ours fetches the newest two days, which here is the whole store (one day); the local side "
            "validates footers (cached) and lists"),
        row("open over s3:// (warm)", "agentotel.open(uri) again: list the bucket, compare with the mirror", warm,
            "a warm open costs one LIST request per 1,000 objects plus what a local open costs"),
        row("trajectory over s3://", f"Traces.trajectory() of a {run_a[2]}-step run", trajectory,
            "the mirror is local files: the same work as on disk"),
        row("diff over s3://", f"Traces.diff() of two runs of the same agent ({run_a[2]} and {run_b[2]} steps)", diff,
            "as for trajectory"),
        row("one trace's spans: mirror vs pyarrow dataset over the bucket", "SELECT one trace's spans (with payloads)",
            fetch, "the dataset path reads footers and the needed row groups from the bucket at every query (range GETs), "
            "the mirror reads local files; DuckDB's httpfs extension cannot be installed offline",
            ours="mirror", peer="dataset", peer_name="DuckDB over a pyarrow dataset of the s3:// objects"),
    ]


def run(quick: bool) -> list[Result]:
    scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-objstore-"))
    saved_cache = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(scratch / "cache")
    try:
        with _bucket() as bucket:
            started = time.perf_counter()
            results = _ingest(bucket, scratch, quick)
            print(f"bench_object_storage: ingest measured in {time.perf_counter() - started:.0f} s", file=sys.stderr)
            results += _queries(bucket, scratch, quick)
            results += _lazy_rows(bucket, scratch, quick)
            return results
    finally:
        if saved_cache is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved_cache
        shutil.rmtree(scratch, ignore_errors=True)
