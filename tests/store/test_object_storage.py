"""A store at `s3://bucket/prefix`: written by the embedded exporter, read, compacted and erased over the URI,
against a real S3 API (moto's server on 127.0.0.1, tests/s3_server.py)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import boto3
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import agentotel
from agentotel.cli import main
from agentotel.store import StoreWriter, fs, spans_to_batch
from agentotel.store.writer import fold_batches
from tests.store.conftest import T0, make_spans
from tests.store.test_erase import record

ROOT = Path(__file__).resolve().parents[2]
DAY_NS = 86_400 * 10**9


def bucket_rows(uri: str, where: str | None = None) -> int:
    """Rows of every Parquet object under spans/, read straight from the bucket (not through agentotel)."""
    remote = fs.open_remote(uri)
    keys = [remote.key(k) for k in remote.files("spans")]
    if not keys:
        return 0
    table = ds.dataset(keys, filesystem=remote.fs, format="parquet").to_table(columns=["user_id", "span_id"])
    if where is None:
        return table.num_rows
    return sum(1 for u in table.column("user_id").to_pylist() if u == where)


def objects(uri: str) -> list[str]:
    bucket, prefix = uri.removeprefix("s3://").split("/", 1)
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix + "/")
    # pyarrow keeps an emptied "folder" as a zero-byte `name/` marker object, which every reader skips.
    return sorted(o["Key"][len(prefix) + 1 :] for o in listed.get("Contents", []) if not o["Key"].endswith("/"))


def test_uri_forms_and_the_local_folder_for_the_wal(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert fs.remote_uri("s3://bucket/a/b/") == "s3://bucket/a/b"
    assert fs.remote_uri(Path("s3://bucket/a")) == "s3://bucket/a"  # a URI that went through a Path stays one
    assert fs.remote_uri("gs://b/p") == "gs://b/p" and fs.remote_uri("./s3/b") is None and fs.remote_uri(tmp_path) is None
    assert fs.local_root("s3://bucket/a") == tmp_path / "agentotel" / "stores" / "s3" / "bucket" / "a"


def test_the_writer_uploads_each_fold_whole_and_a_retry_overwrites_its_key(s3, sdk):
    tracer, finished = sdk
    make_spans(tracer, 30)
    make_spans(tracer, 10, start=T0 + DAY_NS, prefix="next-day")
    writer = StoreWriter(s3)
    writer.append(spans_to_batch(finished()))
    # Durable in the local WAL, nothing in the bucket yet.
    assert writer.wal_path.parent == fs.local_root(s3) / "wal" and writer.wal_path.exists()
    assert objects(s3) == []
    published = writer.fold()
    writer.close()
    assert len(published) == 2 and objects(s3) == sorted(p.removeprefix(s3 + "/") for p in published)
    assert all(name.startswith("spans/date=2026-01-0") and not Path(name).name.startswith(".") for name in objects(s3))
    assert bucket_rows(s3) == 40
    # A retried upload of the same segment (a crash after the PUT, before the WAL was removed) replaces the
    # same objects: no duplicate rows.
    segment = Path(published[0]).stem
    fold_batches(s3, segment, [spans_to_batch(finished())])
    assert len(objects(s3)) == 2 and bucket_rows(s3) == 40
    # And with skip_published (what recovery uses) nothing is uploaded again.
    assert fold_batches(s3, segment, [spans_to_batch(finished())], skip_published=True) == []


def test_a_store_written_with_instrument_is_read_and_erased_over_the_uri(s3, tmp_path):
    record(s3)  # a separate process: agentotel.instrument("s3://..."), three runs, shutdown
    assert bucket_rows(s3, "alice") == 6 and bucket_rows(s3, "bob") == 3
    assert not any(".tmp" in name for name in objects(s3))
    traces = agentotel.open(s3)
    runs = traces.sql("SELECT user_id, steps FROM runs ORDER BY user_id").fetchall()
    assert runs == [("alice", 2), ("alice", 2), ("bob", 1 + 1)]

    assert main(["forget", "--user", "alice", "--dir", s3, "--json"]) == 0
    assert bucket_rows(s3, "alice") == 0 and bucket_rows(s3, "bob") == 3
    # A reader that mirrored the store before sees the erasure at its next open.
    assert [r[0] for r in agentotel.open(s3).sql("SELECT user_id FROM runs").fetchall()] == ["bob"]


def test_cli_reads_and_maintains_a_store_over_the_uri(s3, capsys):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "collector")])}
    proc = subprocess.run([sys.executable, "-m", "agentotel.cli", "demo", "--dir", s3], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    record(s3)  # another process's file, so compaction has files to merge

    def cli_json(*argv: str):
        capsys.readouterr()
        assert main([*argv, "--dir", s3, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    runs = cli_json("runs")
    assert len(runs) == 5
    a, b = sorted((r for r in runs if r["name"] == "order-support"), key=lambda r: r["start_time"])
    trajectory = cli_json("trajectory", a["run_id"])
    assert trajectory["steps"] and trajectory["run"]["run_id"] == a["run_id"]
    diff = cli_json("diff", a["run_id"], b["run_id"])
    assert diff["first_divergence"] is not None
    total = cli_json("sql", "SELECT count(*) AS n FROM spans")[0]["n"]
    assert total == bucket_rows(s3)

    before = objects(s3)
    stats = cli_json("compact", "--grace", "0")
    after = objects(s3)
    assert stats["rows_after"] == total and len(after) < len(before)
    assert all(Path(name).name.startswith("c-") for name in after if name.startswith("spans/"))
    assert bucket_rows(s3) == total
    # The lease is released.
    assert ".lease/compact.json" not in after

    # Retention: everything the demo wrote is from today, so a 1-day window keeps it all.
    kept = cli_json("compact", "--retain", "1d")
    assert kept["partitions_dropped"] == 0 and bucket_rows(s3) == total


def test_retention_drops_old_partitions_in_the_bucket(s3, sdk):
    tracer, finished = sdk
    make_spans(tracer, 5)  # 2026-01-01
    old = StoreWriter(s3)
    old.append(spans_to_batch(finished()))
    old.close()
    now_ns = time.time_ns()
    tracer2, finished2 = sdk
    span = tracer2.start_span("today", start_time=now_ns)
    span.end(end_time=now_ns + 1000)
    new = StoreWriter(s3)
    new.append(spans_to_batch([s for s in finished2() if s.name == "today"]))
    new.close()
    assert main(["compact", "--retain", "30d", "--dir", s3, "--json"]) == 0
    assert bucket_rows(s3) == 1
    assert all("date=2026-01-01" not in name for name in objects(s3))


KILLED_WRITER = textwrap.dedent('''
    import sys
    from agentotel.store import StoreWriter
    from agentotel.store.schema import SPAN_SCHEMA
    import pyarrow as pa, os
    uri, count = sys.argv[1], int(sys.argv[2])
    writer = StoreWriter(uri, wal_max_bytes=1 << 40, wal_max_age_s=1e9)
    ids = [f"{i:016x}" for i in range(count)]
    rows = {name: [None] * count for name in SPAN_SCHEMA.names}
    rows["trace_id"] = [f"{i // 50:032x}" for i in range(count)]
    rows["span_id"] = ids
    rows["name"] = ["chat m"] * count
    rows["start_time"] = [1_767_225_600_000_000_000 + i for i in range(count)]
    # Incompressible payloads: a Parquet file of several parts, uploaded by a multipart upload.
    rows["output"] = [os.urandom(600).hex() for _ in range(count)]
    batch = pa.RecordBatch.from_pydict(rows, schema=SPAN_SCHEMA)
    writer.append(batch)
    print("durable", flush=True)
    writer.fold()
    print("folded", flush=True)
''')


def test_a_kill_mid_upload_loses_nothing_acknowledged_and_shows_no_partial_file(s3):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "collector")])}
    count = 40_000  # ~25 MB of Parquet: pyarrow uploads it in 10 MB parts
    bucket, prefix = s3.removeprefix("s3://").split("/", 1)
    client = boto3.client("s3")
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, s3, str(count)], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().strip() == "durable"  # acknowledged: in the local WAL, fsync'd
    # Kill it once its multipart upload has started, before it completes.
    deadline = time.monotonic() + 60
    started = False
    while time.monotonic() < deadline and proc.poll() is None:
        if client.list_multipart_uploads(Bucket=bucket, Prefix=prefix).get("Uploads"):
            started = True
            break
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert started, "the upload finished before the kill: no multipart upload was seen in progress"
    # No partial object is visible: the upload never completed.
    assert objects(s3) == []
    # The next writer on this machine folds the dead writer's WAL: every acknowledged span arrives, once.
    StoreWriter(s3).close()
    assert bucket_rows(s3) == count
    assert len(objects(s3)) == 1
    assert pq.ParquetFile(fs.open_remote(s3).fs.open_input_file(fs.open_remote(s3).key(objects(s3)[0]))).metadata.num_rows == count


def test_one_maintainer_at_a_time_by_the_lease(s3):
    remote = fs.open_remote(s3)
    with fs.lease(remote):
        with pytest.raises(fs.LeaseHeld):
            with fs.lease(remote):
                pass
        # compact over the URI waits for nobody: it refuses while another holds the lease.
        with pytest.raises(fs.LeaseHeld):
            agentotel.store.compact(s3)
    with fs.lease(remote, seconds=0.0):
        pass  # released on exit
    # A holder that died leaves an expired lease behind: the next one takes it over.
    bucket, prefix = s3.removeprefix("s3://").split("/", 1)
    boto3.client("s3").put_object(Bucket=bucket, Key=f"{prefix}/{fs.LEASE_KEY}",
                                  Body=json.dumps({"owner": "dead", "expires": time.time() - 1}).encode())
    with fs.lease(remote) as held:
        assert held["owner"] != "dead"


def test_the_duckdb_query_docs_store_md_shows_reads_the_partitions(s3, sdk):
    import duckdb

    tracer, finished = sdk
    make_spans(tracer, 3)
    make_spans(tracer, 2, start=T0 + DAY_NS, prefix="next-day")
    writer = StoreWriter(s3)
    writer.append(spans_to_batch(finished()))
    writer.close()
    root = fs.sync(s3)  # what `agentotel sql --dir s3://...` reads
    rows = duckdb.sql(f"""
        SELECT date, count(*) AS spans, sum(cost_usd) AS usd
        FROM read_parquet('{root}/spans/*/*.parquet', hive_partitioning = true)
        GROUP BY date ORDER BY date""").fetchall()
    assert [(str(d), n) for d, n, _usd in rows] == [("2026-01-01", 3), ("2026-01-02", 2)]


def lease_object(uri: str) -> dict:
    bucket, prefix = uri.removeprefix("s3://").split("/", 1)
    return json.loads(boto3.client("s3").get_object(Bucket=bucket, Key=f"{prefix}/{fs.LEASE_KEY}")["Body"].read())


def two_writers_files(uri: str, sdk, n: int = 7) -> None:
    """Two small files in one partition (two writers), so a compaction has something to merge."""
    tracer, finished = sdk
    make_spans(tracer, n, prefix="first")
    first = StoreWriter(uri)
    first.append(spans_to_batch(finished()))
    first.close()
    done = len(finished())
    make_spans(tracer, n + 2, prefix="second")
    second = StoreWriter(uri)
    second.append(spans_to_batch(finished()[done:]))
    second.close()


def test_a_long_maintenance_renews_its_lease_so_no_second_one_starts(s3):
    remote = fs.open_remote(s3)
    with fs.lease(remote, seconds=1.5) as held:
        first_expiry = lease_object(s3)["expires"]
        time.sleep(3.2)  # more than twice the lease's length
        held.check()  # still held
        assert lease_object(s3)["owner"] == held.owner and lease_object(s3)["expires"] > first_expiry + 1
        with pytest.raises(fs.LeaseHeld):  # the first expiry is long past, yet nobody can take it over
            with fs.lease(remote, seconds=1.5):
                pass
    assert ".lease/compact.json" not in objects(s3)


def test_a_maintenance_whose_lease_was_taken_over_stops_before_changing_the_bucket(s3, sdk, monkeypatch):
    two_writers_files(s3, sdk)
    before = objects(s3)
    monkeypatch.setattr(fs, "LEASE_S", 1.5)
    bucket, prefix = s3.removeprefix("s3://").split("/", 1)
    with pytest.raises(fs.LeaseLost):
        with fs.maintenance(s3) as mirror:
            for path in (mirror / "spans").glob("date=*/*.parquet"):
                path.unlink()  # the "work": every file removed, to be deleted in the bucket on leaving
            # A stalled holder's lease expired and another maintainer took it over (a PUT of its own body).
            boto3.client("s3").put_object(Bucket=bucket, Key=f"{prefix}/{fs.LEASE_KEY}",
                                          Body=json.dumps({"owner": "other", "expires": time.time() + 60}).encode())
            time.sleep(1.0)  # past the next renewal (every half second), which fails: the ETag changed
    assert objects(s3) == sorted([*before, fs.LEASE_KEY])  # nothing deleted; the other holder's lease left alone
    assert lease_object(s3)["owner"] == "other"


def test_a_bucket_compaction_keeps_the_files_it_replaced_readable_for_the_grace_period(s3, sdk, tmp_path):
    import threading

    two_writers_files(s3, sdk)
    remote = fs.open_remote(s3)
    inputs = sorted(k for k in remote.files() if k.endswith(".parquet"))
    assert len(inputs) == 2
    total = bucket_rows(s3)
    mirror = fs.sync(s3)  # a reader's mirror made before the compaction
    assert sorted(p.name for p in (mirror / "spans").glob("*/*.parquet")) == sorted(Path(k).name for k in inputs)
    # Another engine plans a query: it lists the input files now and reads them later.
    planned = [remote.key(k) for k in inputs]

    done = threading.Event()
    result = {}

    def run() -> None:
        result["stats"] = agentotel.store.compact(s3, grace_s=3)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    deadline = time.time() + 60
    while not any(Path(k).name.startswith("c-") for k in remote.files()) and time.time() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the marks follow the merged file
    assert not done.is_set()  # waiting out the grace, lease held
    # The engine's planned reads still succeed: the inputs are in the bucket, marked retired.
    assert ds.dataset(planned, filesystem=remote.fs, format="parquet").count_rows() == total
    assert sorted(fs.retired(remote)) == inputs
    # agentotel's readers skip marked files: the mirror holds the merged file only, and counts each span once.
    fs.sync(s3)
    assert [p.name[:2] for p in (mirror / "spans").glob("*/*.parquet")] == ["c-"]
    assert agentotel.open(s3).sql("SELECT count(*) FROM spans").fetchall()[0][0] == total
    # The mirror's old copies left spans/ by a rename: a query that listed them finds them in .replaced/.
    assert sorted(p.name for p in (mirror / ".replaced").glob("*/*.parquet")) == sorted(Path(k).name for k in inputs)
    assert done.wait(30) and result["stats"]["rows_after"] == total
    assert [Path(k).name[:2] for k in objects(s3)] == ["c-"]  # inputs and marks gone; the lease released
    assert bucket_rows(s3) == total


def test_marks_a_dead_maintainer_left_are_cleared_by_the_next_run(s3, sdk):
    two_writers_files(s3, sdk)
    remote = fs.open_remote(s3)
    stale, fresh = sorted(k for k in remote.files() if k.endswith(".parquet"))
    for relative, delete_after in ((stale, time.time() - 1), (fresh, time.time() + 600)):
        remote.put(f".replaced/{relative.removeprefix('spans/')}.retired", json.dumps({"delete_after": delete_after}).encode())
    agentotel.store.compact(s3, grace_s=0)
    left = objects(s3)
    assert stale not in left and f".replaced/{stale.removeprefix('spans/')}.retired" not in left
    assert fresh in left  # its grace is not over: left for a later run


def days_of_runs(tmp_path: Path, uri: str) -> Path:
    """Six days of runs of two agents (two a day) and one run that crosses midnight, laid out as the store
    does (a file per start date), uploaded to `uri` and written to a local folder for comparison."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.compute as pc

    from tests.query.spanbuild import MS, SpanStore, assistant

    day0 = int(dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc).timestamp()) * 1000 * MS
    hour = 3_600_000 * MS
    store = SpanStore(tmp_path / "built")
    for day in range(6):
        for hour_of_day, agent in ((9, "triage"), (15, "refunds")):
            run = store.run(agent, f"{agent}-d{day}", start=day0 + (day * 24 + hour_of_day) * hour, user=f"u{day % 3}")
            run.llm(assistant(calls=[(f"c{day}", "lookup", {"day": day})]))
            run.tool("lookup", {"day": day}, {"found": day})
            run.llm(assistant("done"))
    late = store.run("nightly", "nightly-d3", start=day0 + 4 * 24 * hour - 30 * MS)  # 23:59:59.970 on day 3
    for i in range(5):  # 11 ms apart: the last two start after midnight
        late.tool("sweep", {"i": i}, {"ok": True})
    table = pa.Table.from_batches([store.batch()])
    local, remote = tmp_path / "local", fs.open_remote(uri)
    dates = pc.strftime(table.column("start_time"), format="%Y-%m-%d")
    for date in sorted(set(dates.to_pylist())):
        part = table.filter(pc.equal(dates, date))
        folder = local / "spans" / f"date={date}"
        folder.mkdir(parents=True)
        pq.write_table(part, folder / "part-0.parquet")
        remote.put(f"spans/date={date}/part-0.parquet", (folder / "part-0.parquet").read_bytes())
    return local


def mirrored_dates(uri: str) -> list[str]:
    return sorted(p.name.removeprefix("date=") for p in (fs.local_root(uri) / "spans").glob("date=*") if any(p.glob("*.parquet")))


def test_an_open_over_a_bucket_fetches_only_the_partitions_each_query_needs(s3, tmp_path):
    local = agentotel.open(days_of_runs(tmp_path, s3))
    everything = ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06"]

    def rows(traces, **filters):
        return [(r["run_id"], r["steps"], r["status"]) for r in agentotel.query.pylist(traces.runs(**filters).to_arrow_table())]

    traces = agentotel.open(s3)
    assert mirrored_dates(s3) == everything[-2:]  # the newest day and the one before
    # The newest runs: only as many days as hold them, plus the day before the oldest (a run that started
    # then is whole, and left out by its start). Two days hold 2 runs past that margin; four hold 5.
    assert rows(traces, limit=2) == rows(local, limit=2)
    assert mirrored_dates(s3) == everything[-2:]
    assert rows(traces, limit=3) == rows(local, limit=3)
    assert mirrored_dates(s3) == everything[-4:]
    assert rows(traces, limit=5) == rows(local, limit=5)
    assert ("nightly-d3", 5, "ok") in rows(traces, limit=5)  # the run across midnight is whole: 5 steps
    assert mirrored_dates(s3) == everything[-4:]
    # A full run id of a run in a day not fetched: found, with its partitions.
    old = traces.trajectory("triage-d0")
    assert [s.type for s in old.steps] == [s.type for s in local.trajectory("triage-d0").steps]
    # Plain SQL may read anything: every partition.
    assert traces.sql("SELECT count(*) FROM spans").fetchall() == local.sql("SELECT count(*) FROM spans").fetchall()
    assert mirrored_dates(s3) == everything
    assert rows(traces) == rows(local)

    # A window of days, on a fresh machine: those days and one on each side.
    import datetime as dt

    shutil.rmtree(fs.local_root(s3))
    window = {"since": dt.datetime(2026, 3, 3, tzinfo=dt.timezone.utc), "until": dt.datetime(2026, 3, 4, 12, tzinfo=dt.timezone.utc)}
    assert rows(agentotel.open(s3), **window) == rows(local, **window)
    assert mirrored_dates(s3) == everything[1:]  # 02..05 asked for; 06 came with the open
    # A prefix may match runs in any partition: it is resolved over all of them.
    shutil.rmtree(fs.local_root(s3))
    with pytest.raises(agentotel.query.RunNotFound, match="ambiguous"):
        agentotel.open(s3).trajectory("triage-d")
    assert mirrored_dates(s3) == everything


# -- Google Cloud Storage and Azure Blob, each against an emulator on 127.0.0.1 ----------------------


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fresh_store(monkeypatch, tmp_path, scheme: str, filesystem) -> str:
    """A new bucket (container) on `filesystem`, and this test's own cache folder; the store's URI."""
    import uuid

    from agentotel import _config

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(_config, "_current", None)
    bucket = f"agentotel-{uuid.uuid4().hex[:12]}"
    filesystem.create_dir(bucket)
    return f"{scheme}://{bucket}/store"


@pytest.fixture(scope="module")
def gcs_port():
    """gcp-storage-emulator (PyPI), in memory, serving Google's JSON API in a thread."""
    from gcp_storage_emulator.server import create_server

    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    server.start()
    yield port
    server.stop()


@pytest.fixture
def gs(gcs_port, monkeypatch, tmp_path) -> str:
    import pyarrow.fs as pafs

    # Google's client libraries' emulator variable: what agentotel reads for gs:// (fs._filesystem).
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{gcs_port}")
    return fresh_store(monkeypatch, tmp_path, "gs", pafs.GcsFileSystem(
        anonymous=True, endpoint_override=f"127.0.0.1:{gcs_port}", scheme="http", project_id="agentotel-test"))


AZURITE = shutil.which("azurite-blob")


@pytest.fixture(scope="module")
def azurite_port():
    """Azurite's Blob service (npm `azurite`), in memory, in a process of its own."""
    import socket

    port = free_port()
    process = subprocess.Popen([AZURITE, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence",
                                "--skipApiVersionCheck", "--silent"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if time.time() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        yield port
    finally:
        process.kill()
        process.wait(10)


@pytest.fixture
def az(azurite_port, monkeypatch, tmp_path) -> str:
    import pyarrow.fs as pafs

    account, key = "devstoreaccount1", fs._AZURITE_KEY
    # Azure's standard connection string, as Azurite's documentation gives it.
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
                       f"BlobEndpoint=http://127.0.0.1:{azurite_port}/{account};")
    authority = f"127.0.0.1:{azurite_port}"
    filesystem = pafs.AzureFileSystem(account_name=account, account_key=key, blob_storage_authority=authority,
                                      dfs_storage_authority=authority, blob_storage_scheme="http", dfs_storage_scheme="http")
    return fresh_store(monkeypatch, tmp_path, "az", filesystem)


@pytest.mark.parametrize("scheme", ["gs", pytest.param("az", marks=pytest.mark.skipif(
    AZURITE is None, reason="Azurite's azurite-blob is not on PATH (`npm install azurite`; .ci/run installs it where npm can)"))])
def test_a_store_in_gcs_or_azure_blob_is_written_read_compacted_and_erased(scheme, request):
    uri = request.getfixturevalue(scheme)
    record(uri)  # a separate process: agentotel.instrument(uri), three runs
    record(uri)  # another one: a second file to merge
    remote = fs.open_remote(uri)
    assert len(remote.files()) == 2 and not any(".tmp" in name for name in remote.files())
    traces = agentotel.open(uri)
    assert traces.sql("SELECT user_id, count(*) FROM runs GROUP BY 1 ORDER BY 1").fetchall() == [("alice", 4), ("bob", 2)]
    stats = agentotel.store.compact(uri, grace_s=0)
    assert stats["files_after"] == 1 and [Path(k).name[:2] for k in remote.files()] == ["c-"]
    assert main(["forget", "--user", "alice", "--dir", uri, "--json"]) == 0
    assert agentotel.open(uri).sql("SELECT user_id, count(*) FROM runs GROUP BY 1").fetchall() == [("bob", 2)]
    assert fs.LEASE_KEY not in remote.files("")  # released
