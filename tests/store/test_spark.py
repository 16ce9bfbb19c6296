"""Spark (local mode) reads a store's Hive partitions and counts what DuckDB and agentotel count.

Slow (a JVM starts; a minute or two): selected with `-m slow`. Needs pyspark and Java 17, which are not
agentotel dependencies.
"""

from __future__ import annotations

import duckdb
import pytest

import agentotel
from agentotel.store import StoreWriter, compact, spans_to_batch
from tests.store.conftest import T0, make_spans

pytestmark = pytest.mark.slow
DAY_NS = 86_400 * 10**9


@pytest.fixture
def spark(request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("slow (starts a Spark JVM, 1-2 minutes): select it with -m slow")
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark is not an agentotel dependency: pip install pyspark (needs Java 17)")
    session = (pyspark_sql.SparkSession.builder.master("local[1]").appName("agentotel-store")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1").getOrCreate())
    # As docs/STORE.md says: Spark refuses nanosecond Parquet timestamps unless read as integers.
    session.conf.set("spark.sql.legacy.parquet.nanosAsLong", "true")
    yield session
    session.stop()


def test_spark_reads_the_partitions_and_counts_what_duckdb_counts(tmp_path, sdk, spark):
    tracer, finished = sdk
    make_spans(tracer, 30)
    make_spans(tracer, 12, start=T0 + DAY_NS, prefix="next-day")
    spans = finished()
    for i in range(0, len(spans), 7):  # several folded files per partition, then a compaction's merge
        writer = StoreWriter(tmp_path)
        writer.append(spans_to_batch(spans[i : i + 7]))
        writer.close()
    compact(tmp_path, grace_s=60)  # the merged inputs wait in .replaced/, outside spans/
    (tmp_path / "spans" / "date=2026-01-01" / ".half-written.parquet.1234.tmp").write_bytes(b"PAR1 not yet")

    by_spark = {str(r["date"]): r["count"] for r in spark.read.parquet(str(tmp_path / "spans")).groupBy("date").count().collect()}
    by_duckdb = dict(duckdb.sql(f"""SELECT date::VARCHAR, count(*) FROM read_parquet('{tmp_path}/spans/*/*.parquet',
                                    hive_partitioning = true) GROUP BY 1""").fetchall())
    assert by_spark == by_duckdb == {"2026-01-01": 30, "2026-01-02": 12}
    assert agentotel.open(tmp_path).sql("SELECT count(*) FROM spans").fetchall()[0][0] == sum(by_spark.values())
    first = spark.read.parquet(str(tmp_path / "spans")).orderBy("start_time").first()
    assert first["start_time"] == T0 and first["name"] == "span-0"  # nanoseconds since 1970, as the docs say
