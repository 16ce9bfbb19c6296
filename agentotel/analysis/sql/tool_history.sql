-- What earlier runs ($runs: their ids, earlier_runs.sql) saw of the given tools ($names): their successful
-- and failed calls that started in [$since, $before), newest first. The baseline a tool's learned output
-- schema and interface hash are measured against. {spans}: the spans of that window (Traces._rows);
-- $traces: every trace holding one of those spans (history_spans.sql), so only their row groups are read.
-- Lists are matched with `IN (SELECT unnest(...))`, which DuckDB filters inside the Parquet scan before
-- it decodes the payload columns (list_contains is checked only after: twice the time at 1M spans).
SELECT s.run_id, s.tool_name, s.start_time, s.status_code, s.output, s.attributes[$hash] AS schema_hash
FROM {spans} AS s
WHERE s.operation = 'execute_tool'
  AND s.tool_name IN (SELECT unnest($names))
  AND s.run_id IN (SELECT unnest($runs))
  AND s.trace_id IN (SELECT unnest($traces))
  AND s.start_time < $before
  AND s.start_time >= $since::TIMESTAMPTZ_NS
ORDER BY s.start_time DESC
