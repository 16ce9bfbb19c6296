"""WAL framing: a damaged append costs that append's spans only, never the ones after it; WAL files
written before framing are still read."""

from __future__ import annotations

import random
import shutil

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute
import pyarrow.parquet as pq
import pytest

from agentotel.store import StoreWriter, parquet_files, spans_to_batch
from agentotel.store import wal as wal_module
from agentotel.store.schema import SPAN_SCHEMA
from agentotel.store.wal import FRAME_MAGIC, read_file, schema_message
from tests.store.conftest import make_spans


@pytest.fixture
def ten_batches(sdk):
    tracer, finished = sdk
    make_spans(tracer, 100)
    spans = finished()
    return [spans_to_batch(spans[i : i + 10]) for i in range(0, 100, 10)]


def _dead_wal(tmp_path, batches) -> bytes:
    """The WAL bytes a killed writer leaves: one frame per append."""
    writer = StoreWriter(tmp_path / "scratch", wal_max_bytes=1 << 30, wal_max_age_s=3600)
    for batch in batches:
        writer.append(batch)
    data = writer.wal_path.read_bytes()
    writer.close()
    shutil.rmtree(tmp_path / "scratch")
    return data


def _frame_starts(data: bytes) -> list[int]:
    starts, pos = [], data.find(FRAME_MAGIC)
    while pos >= 0:
        starts.append(pos)
        pos = data.find(FRAME_MAGIC, pos + 1)
    return starts


def _recover(tmp_path, data: bytes, name: str = "0000000000001-dead-000001.arrows") -> pa.Table:
    store = tmp_path / "store"
    (store / "wal").mkdir(parents=True)
    (store / "wal" / name).write_bytes(data)
    StoreWriter(store).close()  # recovery at start, then the fold at close
    files = parquet_files(store)
    table = pa.concat_tables([pq.read_table(f) for f in files]) if files else SPAN_SCHEMA.empty_table()
    return table.sort_by("span_id")


def _same_values(kept: pa.Table, batches) -> bool:
    """Whether `kept` holds exactly the rows of `batches` with its span ids, every value unchanged."""
    original = pa.Table.from_batches(batches).sort_by("span_id")
    ids = kept.column("span_id")
    original = original.filter(pa.compute.is_in(original.column("span_id"), value_set=ids.combine_chunks()))
    strip = lambda t: t.replace_schema_metadata(None).combine_chunks()  # noqa: E731
    return original.num_rows == kept.num_rows and strip(kept.cast(original.schema)).equals(strip(original))


def test_one_flipped_byte_in_batch_3_of_10_keeps_the_9_others(tmp_path, ten_batches, caplog):
    data = bytearray(_dead_wal(tmp_path, ten_batches))
    starts = _frame_starts(bytes(data))
    assert len(starts) == 11  # the schema frame, then one frame per append
    third = starts[3]
    data[(third + starts[4]) // 2] ^= 0x01  # one bit, in the middle of batch 3's bytes
    with caplog.at_level("WARNING", logger="agentotel.store"):
        table = _recover(tmp_path, bytes(data))
    assert table.num_rows == 90
    assert _same_values(table, ten_batches[:2] + ten_batches[3:])  # no value changed
    assert any("damaged" in r.getMessage() and "every intact batch was kept" in r.getMessage() for r in caplog.records)
    assert len(list((tmp_path / "store" / "wal" / "damaged").iterdir())) == 1  # the file is kept aside


@pytest.mark.parametrize("seed", range(12))
def test_random_damage_costs_at_most_the_frames_it_touches_and_changes_no_value(tmp_path, ten_batches, seed):
    rng = random.Random(seed)
    data = bytearray(_dead_wal(tmp_path, ten_batches))
    starts = _frame_starts(bytes(data)) + [len(data)]
    # 1 to 3 damaged bytes anywhere after the file magic (frame headers included), or a torn tail.
    if seed % 4 == 3:
        data = data[: rng.randrange(starts[1], len(data))]
        touched = {i for i in range(1, 11) if starts[i + 1] > len(data)}
    else:
        positions = [rng.randrange(8, len(data)) for _ in range(1 + seed % 3)]
        for pos in positions:
            data[pos] ^= 1 << rng.randrange(8)
        touched = {i for pos in positions for i in range(11) if starts[i] <= pos < starts[i + 1]}
    table = _recover(tmp_path, bytes(data))
    kept = set(table.column("span_id").to_pylist())
    assert _same_values(table, ten_batches)  # nothing silently changed
    lost_batches = {i for i, batch in enumerate(ten_batches, start=1) if batch.column("span_id")[0].as_py() not in kept}
    assert lost_batches <= touched  # only the frames the damage touched
    assert table.num_rows == 10 * (10 - len(lost_batches))


def test_a_wal_written_before_framing_is_still_read(tmp_path, ten_batches):
    # The earlier layout: a plain Arrow IPC stream (schema with the segment id, then the batches).
    sink = pa.BufferOutputStream()
    schema = pa.ipc.read_schema(pa.py_buffer(schema_message("0000000000001-old-000001")))
    with pa.ipc.new_stream(sink, schema) as writer:
        for batch in ten_batches[:3]:
            writer.write_batch(batch)
    old = sink.getvalue().to_pybytes()[: -len(wal_module._EOS)]  # a live writer never wrote the end marker
    path = tmp_path / "old.arrows"
    path.write_bytes(old)
    contents = read_file(path)
    assert contents.segment == "0000000000001-old-000001" and contents.damaged is None
    assert sum(b.num_rows for b in contents.batches) == 30
    assert _recover(tmp_path, old, name="old.arrows").num_rows == 30


def test_a_damaged_schema_frame_still_recovers_the_batches(tmp_path, ten_batches):
    data = bytearray(_dead_wal(tmp_path, ten_batches[:2]))
    starts = _frame_starts(bytes(data))
    data[starts[0] + 20] ^= 0xFF
    contents_path = tmp_path / "0000000000001-w-000001.arrows"
    contents_path.write_bytes(bytes(data))
    contents = read_file(contents_path)
    assert contents.segment == "0000000000001-w-000001"  # from the file name
    assert sum(b.num_rows for b in contents.batches) == 20
