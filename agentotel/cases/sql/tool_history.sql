-- Calls of the given tools in runs that started before a run, most recent first: the baseline that
-- tool output shape drift and tool interface drift are measured against.
SELECT run_id, tool_name, start_time, status_code, output, attributes[$hash] AS schema_hash
FROM tool_calls
WHERE list_contains($names, tool_name)
  AND run_id IS DISTINCT FROM $run_id
  AND start_time < $before
ORDER BY start_time DESC
