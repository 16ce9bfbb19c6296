-- What earlier runs of the same agent ($agent: the run name, else every run) saw of the given tools
-- ($names): the successful calls of the latest $runs runs that started before $before, newest first.
-- The baseline a tool's learned output schema and interface hash are measured against.
WITH earlier AS (
    SELECT run_id, any_value(start_time) AS start_time
    FROM _run_roots
    WHERE ($agent IS NULL OR run_name = $agent) AND start_time < $before AND run_id IS DISTINCT FROM $run
    GROUP BY run_id
    ORDER BY start_time DESC
    LIMIT $runs
)
SELECT s.run_id, s.tool_name, s.start_time, s.status_code, s.output, s.attributes[$hash] AS schema_hash
FROM _raw_spans AS s
WHERE s.operation = 'execute_tool'
  AND list_contains($names, s.tool_name)
  AND s.run_id IN (SELECT run_id FROM earlier)
  AND s.start_time < $before
  AND s.start_time >= (SELECT min(start_time) FROM earlier)  -- lets DuckDB skip older row groups
ORDER BY s.start_time DESC
