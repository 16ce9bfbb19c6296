-- The latest calls of the given tools in runs that started before a run (per tool: the latest that
-- succeeded and the latest that failed), most recent first: the baseline that tool output shape drift
-- and tool interface drift are measured against.
SELECT run_id, tool_name, start_time, status_code, output, schema_hash
FROM (
    SELECT
        run_id, tool_name, start_time, status_code, output,
        attributes[$hash] AS schema_hash,
        row_number() OVER (PARTITION BY tool_name, status_code = 'ERROR' ORDER BY start_time DESC) AS recency
    FROM tool_calls
    WHERE list_contains($names, tool_name)
      AND run_id IS DISTINCT FROM $run_id
      AND start_time < $before
)
WHERE recency = 1
ORDER BY start_time DESC
