-- What earlier runs ($runs: their ids, earlier_runs.sql) saw, in one pass over their spans that started in
-- [$since, $before) and lie in $traces (history_spans.sql; DuckDB reads only those traces' row groups):
--   kind 'tool': every successful or failed call of the given tools ($names; NULL: of every tool), newest first: its output and
--     interface hash ($hash), the baseline a tool's learned output schema and interface are measured against;
--   kind 'call': the first model call of each model of each run ($calls: {run_id, span_id, start_time}),
--     its model, messages and the tool definitions and instructions it was given ($definitions,
--     $instructions): the baseline a run's prompt and tools are compared with. A call stored as a
--     continuation has a NULL input here: first_call_inputs.sql rebuilds those.
-- One pass, because a row group's payload and attribute columns cost far more to decompress than the few
-- rows wanted (two queries read them twice). {spans}: the spans of that window (Traces._rows).
WITH picked AS MATERIALIZED (
    SELECT s.run_id, s.span_id, s.tool_name, s.start_time, s.status_code, s.operation,
           coalesce(s.response_model, s.request_model) AS model, s.input, s.output, s.attributes
    FROM {spans} AS s
    WHERE s.trace_id IN (SELECT unnest($traces::VARCHAR[]))
      AND s.run_id IN (SELECT unnest($runs::VARCHAR[]))
      AND s.start_time < $before
      AND s.start_time >= $since::TIMESTAMPTZ_NS
      AND ((s.operation = 'execute_tool' AND ($names IS NULL OR s.tool_name IN (SELECT unnest($names::VARCHAR[]))))
           OR s.span_id IN (SELECT unnest($spans::VARCHAR[])))
), first_calls AS (
    SELECT c.run_id, c.span_id, c.start_time::TIMESTAMPTZ_NS AS start_time
    FROM (SELECT unnest($calls::STRUCT(run_id VARCHAR, span_id VARCHAR, start_time VARCHAR)[], recursive := true)) AS c
)
SELECT 'tool' AS kind, run_id, span_id, tool_name, start_time, status_code, output,
       attributes[$hash] AS schema_hash, NULL AS model, NULL AS input, NULL AS definitions, NULL AS instructions
FROM picked
WHERE operation = 'execute_tool' AND ($names IS NULL OR tool_name IN (SELECT unnest($names::VARCHAR[])))
UNION ALL
SELECT * FROM (
    SELECT 'call' AS kind, p.run_id, p.span_id, NULL AS tool_name, min(p.start_time) AS start_time, NULL AS status_code,
           NULL AS output, NULL AS schema_hash, any_value(p.model) AS model, any_value(p.input) AS input,
           any_value(p.attributes[$definitions]) AS definitions, any_value(p.attributes[$instructions]) AS instructions
    FROM picked AS p
    JOIN first_calls AS f ON p.run_id = f.run_id AND p.span_id = f.span_id AND p.start_time = f.start_time
    GROUP BY p.run_id, p.span_id
)
ORDER BY start_time DESC
