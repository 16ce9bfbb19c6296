-- What the first model call of each model (a summariser on another model is another call) of each of
-- the latest $runs earlier runs of the same agent ($agent: the run name, else every run) was given: its
-- messages (for the instructions) and the tool definitions offered ($definitions, $instructions:
-- attribute names). The baseline a run's prompts and tools are compared with. The first calls are
-- found without their payloads, then only those are read.
WITH earlier AS (
    SELECT run_id, any_value(start_time) AS start_time
    FROM _run_roots
    WHERE ($agent IS NULL OR run_name = $agent) AND start_time < $before AND run_id IS DISTINCT FROM $run
    GROUP BY run_id
    ORDER BY start_time DESC
    LIMIT $runs
), first_calls AS (
    SELECT run_id, arg_min(span_id, start_time) AS span_id, min(start_time) AS start_time
    FROM _raw_spans
    WHERE agentotel_step_type(operation, false) = 'llm' AND run_id IN (SELECT run_id FROM earlier) AND start_time < $before
      AND start_time >= (SELECT min(start_time) FROM earlier)  -- lets DuckDB skip older row groups
    GROUP BY run_id, coalesce(response_model, request_model)
)
SELECT s.run_id, any_value(coalesce(s.response_model, s.request_model)) AS model, any_value(s.input) AS input,
       any_value(s.attributes[$definitions]) AS definitions, any_value(s.attributes[$instructions]) AS instructions
FROM _raw_spans AS s
JOIN first_calls AS f ON s.run_id = f.run_id AND s.span_id = f.span_id AND s.start_time = f.start_time
WHERE s.start_time >= (SELECT min(start_time) FROM first_calls)
GROUP BY s.run_id, s.span_id
ORDER BY min(s.start_time) DESC
