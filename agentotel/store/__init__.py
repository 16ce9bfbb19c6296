"""The Parquet span store: a WAL for durability, immutable Hive-partitioned Parquet files for queries.

    <dir>/spans/date=YYYY-MM-DD/<unique>.parquet    published by write-temp, fsync, rename
    <dir>/wal/<ms>-<writer>-<seq>.arrows            Arrow IPC segments: the durable tail not yet folded
    <dir>/.replaced/date=YYYY-MM-DD/<unique>.parquet files a compaction merged, kept out of spans/ for a
                                                    grace period, then deleted (see compact.py)
    <dir>/damaged/spans/date=YYYY-MM-DD/<unique>.parquet files whose page checksums failed (integrity.py)
"""

from agentotel.store.compact import compact
from agentotel.store.integrity import verify_store
from agentotel.store.exporter import ParquetSpanExporter, spans_to_batch
from agentotel.store.schema import SCHEMA_VERSION, SPAN_SCHEMA
from agentotel.store.wal import read_wal
from agentotel.store.writer import StoreWriter, parquet_files

__all__ = [
    "SCHEMA_VERSION",
    "SPAN_SCHEMA",
    "ParquetSpanExporter",
    "StoreWriter",
    "compact",
    "parquet_files",
    "read_wal",
    "spans_to_batch",
    "verify_store",
]
