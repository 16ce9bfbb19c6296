-- The traces that hold spans of the earlier runs ($runs, earlier_runs.sql) started in [$since, $before).
-- Read from the cheap columns alone: the history queries then read payloads only in those traces, which
-- lets DuckDB skip every other row group of a compacted file (sorted by trace, not by time).
SELECT DISTINCT trace_id
FROM {spans}
WHERE run_id IN (SELECT unnest($runs)) AND start_time >= $since::TIMESTAMPTZ_NS AND start_time < $before
