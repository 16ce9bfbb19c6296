-- What the first model call of each of the latest $runs earlier runs of the same agent ($agent: the
-- run name, else every run) was given: its messages (for the instructions) and the tool definitions
-- offered ($definitions, $instructions: attribute names). The baseline a run's prompt and tools are
-- compared with.
WITH earlier AS (
    SELECT run_id, any_value(start_time) AS start_time
    FROM _run_roots
    WHERE ($agent IS NULL OR run_name = $agent) AND start_time < $before AND run_id IS DISTINCT FROM $run
    GROUP BY run_id
    ORDER BY start_time DESC
    LIMIT $runs
)
SELECT s.run_id, s.input, s.attributes[$definitions] AS definitions, s.attributes[$instructions] AS instructions
FROM _raw_spans AS s
WHERE agentotel_step_type(s.operation, false) = 'llm'
  AND s.run_id IN (SELECT run_id FROM earlier)
  AND s.start_time < $before
QUALIFY row_number() OVER (PARTITION BY s.run_id ORDER BY s.start_time) = 1
