-- The temp table `_one_trace`: every span of one trace ($trace) starting within [$first, $last], each
-- once, for rebuilding a run. The window (when the run's own spans ran, from run_lookup.sql) lets
-- DuckDB skip Parquet row groups by their start_time statistics, since files are in start-time order.
CREATE OR REPLACE TEMP TABLE _one_trace AS
SELECT * EXCLUDE (resource_attributes, events, links) FROM _raw_spans  -- not needed: less to decompress
WHERE trace_id = $trace AND start_time BETWEEN $first AND $last
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
