-- What earlier runs ($runs: their ids, earlier_runs.sql) saw of the given tools ($names): their successful
-- and failed calls that started in [$since, $before), newest first. The baseline a tool's learned output
-- schema and interface hash are measured against. {spans}: the spans of that window (Traces._rows);
-- $traces: every trace holding one of those spans (history_traces.sql), so only their row groups are read.
SELECT s.run_id, s.tool_name, s.start_time, s.status_code, s.output, s.attributes[$hash] AS schema_hash
FROM {spans} AS s
WHERE s.operation = 'execute_tool'
  AND list_contains($names, s.tool_name)
  AND list_contains($runs, s.run_id)
  AND list_contains($traces, s.trace_id)
  AND s.start_time < $before
  AND s.start_time >= $since::TIMESTAMPTZ_NS
ORDER BY s.start_time DESC
