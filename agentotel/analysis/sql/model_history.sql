-- What the first model call of each earlier run ($runs: their ids, earlier_runs.sql) was given: its
-- messages (for the instructions) and the tool definitions offered ($definitions, $instructions:
-- attribute names). The baseline a run's prompt and tools are compared with. The
-- first calls (started in [$since, $before)) are found without their payloads, then only those are
-- read. {spans}: the spans of that window (Traces._rows); $traces: every trace holding a span of those
-- runs then (history_traces.sql), so only their row groups are read.
WITH first_calls AS (
    SELECT run_id, arg_min(span_id, start_time) AS span_id, min(start_time) AS start_time
    FROM {spans}
    WHERE agentotel_step_type(operation, false) = 'llm' AND list_contains($runs, run_id) AND list_contains($traces, trace_id)
      AND start_time < $before
      AND start_time >= $since::TIMESTAMPTZ_NS
    GROUP BY run_id
)
SELECT s.run_id, any_value(s.input) AS input, any_value(s.attributes[$definitions]) AS definitions,
       any_value(s.attributes[$instructions]) AS instructions
FROM {spans} AS s
JOIN first_calls AS f ON s.run_id = f.run_id AND s.span_id = f.span_id AND s.start_time = f.start_time
WHERE list_contains($traces, s.trace_id) AND s.start_time >= $since::TIMESTAMPTZ_NS AND s.start_time < $before
GROUP BY s.run_id
