"""The write-ahead log: locking, recovery after a crash, and a truncated or corrupt tail."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from agentotel.store import StoreWriter, parquet_files, read_wal, spans_to_batch
from agentotel.store.wal import read_file
from tests.store.conftest import make_spans


def _eventually(condition, timeout_s: float = 20.0) -> None:
    """Wait for a background fold to have an effect."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def _no_fold_running() -> bool:
    return not any(t.name == "agentotel-store-fold" for t in threading.enumerate())


def _stored_ids(directory) -> list[str]:
    ids = []
    for path in parquet_files(directory):
        ids += pq.read_table(path, columns=["span_id"]).column(0).to_pylist()
    return sorted(ids)


@pytest.fixture
def batches(sdk):
    tracer, finished = sdk
    make_spans(tracer, 30)
    spans = finished()
    return [spans_to_batch(spans[i : i + 10]) for i in range(0, 30, 10)]


def _dead_writer_wal(directory, batches, name="dead.arrows"):
    """The WAL a writer leaves behind when it is killed: every appended batch, no fold."""
    writer = StoreWriter(directory / "scratch", wal_max_bytes=1 << 30, wal_max_age_s=3600)
    for batch in batches:
        writer.append(batch)
    (directory / "wal").mkdir(parents=True, exist_ok=True)
    target = directory / "wal" / name
    shutil.copyfile(writer.wal_path, target)
    writer.close()
    return target


def test_append_is_readable_from_the_wal_before_any_fold(tmp_path, batches):
    writer = StoreWriter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=3600)
    writer.append(batches[0])
    assert read_wal(tmp_path).num_rows == 10
    assert parquet_files(tmp_path) == []
    writer.close()


def test_a_live_writers_wal_is_not_recovered_by_another_writer(tmp_path, batches):
    live = StoreWriter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=3600)
    live.append(batches[0])
    other = StoreWriter(tmp_path)
    assert other.recover() == 0
    assert parquet_files(tmp_path) == []
    assert live.wal_path.exists()
    with pytest.raises(OSError, match="in use"):
        StoreWriter(tmp_path, writer_id=live.writer_id)
    live.close()
    other.close()
    assert len(_stored_ids(tmp_path)) == 10


def test_recovery_folds_a_dead_writers_wal(tmp_path, batches):
    wal = _dead_writer_wal(tmp_path, batches)
    writer = StoreWriter(tmp_path)
    assert not wal.exists()
    assert len(_stored_ids(tmp_path)) == 30
    assert read_wal(tmp_path).num_rows == 0
    writer.close()


def test_recovery_of_an_already_published_segment_writes_nothing_twice(tmp_path, batches):
    """The crash came after the Parquet files were published but before the WAL was restarted."""
    writer = StoreWriter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=3600)
    for batch in batches:
        writer.append(batch)
    leftover = tmp_path / "wal" / "crashed.arrows"
    shutil.copyfile(writer.wal_path, leftover)
    writer.fold()
    writer.close()
    StoreWriter(tmp_path).close()
    assert not leftover.exists()
    assert len(_stored_ids(tmp_path)) == 30


def test_truncated_tail_keeps_every_complete_batch_and_sets_the_file_aside(tmp_path, batches, caplog):
    wal = _dead_writer_wal(tmp_path, batches)
    data = wal.read_bytes()
    wal.write_bytes(data[: len(data) - 100])  # the process died in the middle of the third batch
    with caplog.at_level(logging.WARNING, logger="agentotel.store"):
        writer = StoreWriter(tmp_path)
    assert len(_stored_ids(tmp_path)) == 20
    assert not wal.exists()
    (aside,) = (tmp_path / "wal" / "damaged").iterdir()
    assert aside.read_bytes() == data[: len(data) - 100]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(wal) in warnings[0].getMessage()
    assert read_wal(tmp_path).num_rows == 0  # the damaged file is no longer read as WAL
    writer.close()


def test_garbage_and_empty_wal_files_never_crash_start_up(tmp_path, batches, caplog):
    (tmp_path / "wal").mkdir()
    (tmp_path / "wal" / "garbage.arrows").write_bytes(b"\x00not arrow at all" * 10)
    (tmp_path / "wal" / "empty.arrows").write_bytes(b"")
    flipped = _dead_writer_wal(tmp_path, batches[:1], name="flipped.arrows")
    data = bytearray(flipped.read_bytes())
    data[-200:-100] = b"\xff" * 100  # corrupt bytes inside the only batch
    flipped.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="agentotel.store"):
        writer = StoreWriter(tmp_path)
    writer.append(batches[1])
    writer.close()
    assert sorted(p.name for p in (tmp_path / "wal").glob("*.arrows")) == []
    assert len(list((tmp_path / "wal" / "damaged").iterdir())) >= 1
    assert 10 <= len(_stored_ids(tmp_path)) <= 20  # batch 1, and batch 0 if the flipped bytes were in padding


def test_explicit_writer_id_recovers_its_own_previous_wal(tmp_path, batches):
    _dead_writer_wal(tmp_path, batches, name="collector.arrows")
    writer = StoreWriter(tmp_path, writer_id="collector")
    assert len(_stored_ids(tmp_path)) == 30
    writer.append(batches[0])
    writer.close()
    assert len(_stored_ids(tmp_path)) == 40  # the new append is a new span row (same ids: a re-sent batch)


def test_size_and_age_thresholds_fold_in_the_background(tmp_path, batches):
    by_size = StoreWriter(tmp_path / "size", wal_max_bytes=1, wal_max_age_s=3600)
    by_size.append(batches[0])
    _eventually(lambda: len(parquet_files(tmp_path / "size")) == 1 and read_wal(tmp_path / "size").num_rows == 0)
    by_age = StoreWriter(tmp_path / "age", wal_max_bytes=1 << 30, wal_max_age_s=0)
    by_age.append(batches[0])
    by_age.append(batches[1])
    _eventually(lambda: len(parquet_files(tmp_path / "age")) >= 1)
    by_size.close()
    by_age.close()
    assert len(_stored_ids(tmp_path / "age")) == 20
    assert read_wal(tmp_path / "age").num_rows == 0


def test_a_list_of_batches_is_appended_at_once_and_read_back_batch_by_batch(tmp_path, batches):
    writer = StoreWriter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=3600)
    writer.append(batches)  # group commit: one write and one fsync for all three
    writer.append([])  # nothing to write
    contents = read_file(writer.wal_path)
    assert [b.num_rows for b in contents.batches] == [10, 10, 10] and contents.damaged is None
    assert sorted(read_wal(tmp_path).column("span_id").to_pylist()) == sorted(
        s for b in batches for s in b.column("span_id").to_pylist()
    )
    with pytest.raises(ValueError, match="SPAN_SCHEMA"):
        writer.append([batches[0], pa.record_batch({"x": [1]})])  # one foreign batch refuses the lot
    assert read_wal(tmp_path).num_rows == 30
    writer.close()
    assert len(_stored_ids(tmp_path)) == 30


def test_an_idle_writer_folds_its_wal_once_it_is_old_enough(tmp_path, batches):
    writer = StoreWriter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=2.0)
    writer.append(batches[0])
    writer.append(batches[1])
    assert parquet_files(tmp_path) == []  # younger than wal_max_age_s: still only in the WAL
    # No further append, no close: the age timer alone publishes the spans and empties the WAL.
    _eventually(lambda: len(parquet_files(tmp_path)) >= 1 and read_wal(tmp_path).num_rows == 0)
    assert len(_stored_ids(tmp_path)) == 20
    assert [p.name for p in (tmp_path / "wal").glob("*.arrows")] == [writer.wal_path.name]  # the new, empty segment
    writer.append(batches[2])  # the writer goes on appending to the new segment
    writer.close()
    assert len(_stored_ids(tmp_path)) == 30


@pytest.mark.parametrize("never", [1e12, float("inf")])
def test_an_age_that_never_comes_keeps_the_age_timer_alive(tmp_path, batches, monkeypatch, never):
    failures = []
    monkeypatch.setattr(threading, "excepthook", failures.append)
    writer = StoreWriter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=never)
    writer.append(batches[0])
    time.sleep(0.3)  # the timer's first look comes after 0.05 s; its next wait must not overflow
    assert failures == []
    assert parquet_files(tmp_path) == []
    writer.close()
    assert len(_stored_ids(tmp_path)) == 10


def test_a_forked_child_writes_its_own_wal_and_never_touches_the_parents(tmp_path, batches):
    writer = StoreWriter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=3600)
    writer.append(batches[0])
    pid = os.fork()
    if pid == 0:  # the child: append, fold and close, as a forked worker process would
        code = 0
        try:
            writer.append(batches[1])
            writer.close()
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert read_wal(tmp_path).num_rows == 10  # the parent's durable batch is still in its WAL
    assert len(_stored_ids(tmp_path)) == 10  # the child's batch, folded from the child's own WAL
    writer.append(batches[2])
    writer.close()
    assert len(_stored_ids(tmp_path)) == 30


def test_a_fold_that_fails_keeps_the_batches_durable_in_the_wal(tmp_path, batches, caplog):
    writer = StoreWriter(tmp_path, wal_max_bytes=1, wal_max_age_s=3600)  # fold after every append
    blocker = tmp_path / "spans" / "date=2026-01-01"
    blocker.write_text("a file where the partition folder should be")
    with caplog.at_level(logging.WARNING, logger="agentotel.store"):
        writer.append(batches[0])  # durable, even though it cannot be folded
        _eventually(_no_fold_running)
        writer.append(batches[1])  # retries the failed fold, which fails again
        writer.append(batches[2])
    assert len([r for r in caplog.records if "cannot fold" in r.getMessage()]) == 1
    assert read_wal(tmp_path).num_rows == 30
    assert parquet_files(tmp_path) == []
    blocker.unlink()
    writer.append(batches[0])
    _eventually(lambda: read_wal(tmp_path).num_rows == 0)
    assert len(_stored_ids(tmp_path)) == 40
    writer.close()


def test_a_batch_of_another_schema_is_refused(tmp_path):
    import pyarrow as pa

    writer = StoreWriter(tmp_path)
    with pytest.raises(ValueError, match="SPAN_SCHEMA"):
        writer.append(pa.record_batch({"x": [1]}))
    writer.close()


def test_a_partial_write_is_cut_off_so_later_batches_stay_readable(tmp_path, batches):
    import resource
    import signal

    writer = StoreWriter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=3600)
    writer.append(batches[0])
    limit = writer.wal_path.stat().st_size + 100  # the next batch can only be written in part
    previous_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, previous_limit[1]))
        with pytest.raises(OSError):
            writer.append(batches[1])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, previous_limit)
        signal.signal(signal.SIGXFSZ, previous_handler)
    writer.append(batches[2])
    wal = read_wal(tmp_path)
    assert wal.num_rows == 20
    assert wal.column("span_id").to_pylist() == batches[0].column("span_id").to_pylist() + batches[2].column("span_id").to_pylist()
    writer.close()
