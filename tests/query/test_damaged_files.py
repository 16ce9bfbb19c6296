"""A damaged Parquet file never takes the store down: queries that hit it set it aside (with a warning)
and answer from the rest; its page checksums find damage DuckDB would read as other values."""

from __future__ import annotations

import random
import shutil
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spanbuild import SpanStore, assistant

import agentotel
from agentotel.store import compact, verify_store
from agentotel.store.integrity import check_file
from agentotel.store.writer import publish

_SORT = [("start_time", "ascending")]


def _build(directory) -> list[str]:
    """Four Parquet files published by the store's own writer (page checksums on), 12 runs each."""
    store = SpanStore(directory)
    for f in range(4):
        runs = []
        for r in range(12):
            run = store.run("agent", f"run-{f}-{r:02d}", user=f"user{r % 3}")
            for step in range(4):
                run.llm(assistant(calls=[(f"c{step}", "search", {"q": f"question {f}-{r}-{step} " * 8})]))
                run.tool("search", {"q": f"question {f}-{r}-{step}"}, {"hits": [f"doc {i} of {f}-{r}" for i in range(6)]}, call_id=f"c{step}")
            runs.append(run)
        publish(pa.Table.from_batches([store.batch(runs)]), directory / "spans" / "date=2026-05-28", f"file-{f}.parquet", sort_by=_SORT)
    return sorted(str(p) for p in (directory / "spans").rglob("*.parquet"))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pristine")
    files = _build(directory)
    with agentotel.open(directory) as traces:
        runs = {row["run_id"]: row for row in traces._rows("SELECT * FROM runs")}
        spans = traces._rows("SELECT span_id, start_time, name, attributes FROM spans ORDER BY span_id")
    return directory, files, runs, spans


def _damage(path: str, seed: int) -> None:
    """Flip one bit somewhere in the file's column chunks (its pages: headers and data).

    Not in the bloom filters and page indexes written after them: page checksums do not cover those
    (see docs/RELIABILITY.md).
    """
    metadata = pq.read_metadata(path)
    end = max(
        (column.dictionary_page_offset or column.data_page_offset) + column.total_compressed_size
        for group in range(metadata.num_row_groups)
        for column in (metadata.row_group(group).column(c) for c in range(metadata.num_columns))
    )
    data = bytearray(open(path, "rb").read())
    rng = random.Random(seed)
    data[rng.randrange(4, end)] ^= 1 << rng.randrange(8)
    open(path, "wb").write(bytes(data))


def _file_of(run_id: str) -> int:
    return int(run_id.split("-")[1])


@pytest.mark.parametrize("seed", range(16))
def test_one_damaged_file_never_fails_a_query_and_changes_no_value_once_checked(pristine, tmp_path, seed):
    source, files, runs, spans = pristine
    directory = tmp_path / "store"
    shutil.copytree(source, directory)
    shutil.rmtree(directory / ".index", ignore_errors=True)
    damaged = str(directory / "spans" / "date=2026-05-28" / "file-1.parquet")
    _damage(damaged, seed)
    if check_file(damaged) is None:
        # The checksums cover a page's data, not its header: a flip in a header's min/max statistics
        # (seeds 1 and 4 here) is not seen, and must then change no value.
        assert pq.read_table(damaged).equals(pq.read_table(files[1]))
        with agentotel.open(directory) as traces:
            assert traces._rows("SELECT span_id, start_time, name, attributes FROM spans ORDER BY span_id") == spans
        return

    # Queries straight away: none fails as a whole (a file a query cannot read is set aside, the rest
    # answers). (A relation from .sql() runs when fetched, outside Traces: it can still raise there.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with agentotel.open(directory) as traces:
            listed = {row["run_id"] for row in traces._rows("SELECT run_id FROM runs")}
            traces._rows("SELECT count(*), sum(epoch_ns(start_time)) FROM spans")
            assert traces.trajectory("run-0-00").steps
            traces._rows("SELECT name, count(*) FROM spans GROUP BY name")
    assert {r for r in runs if _file_of(r) != 1} <= listed  # every other file's runs still answer

    # Checked (agentotel.store.verify_store, compaction, or a query that failed): no value changed.
    assert list(verify_store(directory)) in ([damaged], [])  # [] when a failed query set it aside already
    assert (directory / "damaged" / "spans" / "date=2026-05-28" / "file-1.parquet").exists()
    with agentotel.open(directory) as traces:
        after = traces._rows("SELECT span_id, start_time, name, attributes FROM spans ORDER BY span_id")
        kept_runs = {row["run_id"]: row for row in traces._rows("SELECT * FROM runs")}
    assert after == [s for s in spans if s in after] and len(after) == len(spans) * 3 // 4
    assert kept_runs == {r: row for r, row in runs.items() if _file_of(r) != 1}


def test_compaction_sets_a_damaged_input_aside_instead_of_merging_it(pristine, tmp_path):
    source, files, runs, spans = pristine
    directory = tmp_path / "store"
    shutil.copytree(source, directory)
    damaged = directory / "spans" / "date=2026-05-28" / "file-2.parquet"
    _damage(str(damaged), 3)
    compact(directory, small_bytes=1 << 30)
    assert (directory / "damaged" / "spans" / "date=2026-05-28" / "file-2.parquet").exists()
    with agentotel.open(directory) as traces:
        kept = {row["run_id"] for row in traces._rows("SELECT run_id FROM runs")}
    assert kept == {r for r in runs if _file_of(r) != 2}


def test_parquet_files_carry_page_checksums(pristine):
    _source, files, _runs, _spans = pristine
    assert all(check_file(f) is None for f in files)
    # pyarrow writes a crc per page only when asked: a file without them fails this check.
    metadata = pq.ParquetFile(files[0], page_checksum_verification=True).metadata
    assert metadata.num_rows > 0
