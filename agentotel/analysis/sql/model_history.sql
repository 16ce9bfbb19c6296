-- What the first model call of each model of each earlier run ($calls: {run_id, span_id, start_time},
-- from history_spans.sql) was given, and its model: its messages (for the instructions) and the tool definitions offered
-- ($definitions, $instructions: attribute names). The baseline a run's prompt and tools are compared
-- with. Only those spans' payloads are decoded ($spans: their ids; $traces and the window
-- [$since, $before) skip every other row group; {spans}: the spans of that window, Traces._rows). Inputs
-- are the rebuilt ones ({whole_input:...}, query/sql/_whole_input.sql): a stored continuation's is NULL.
WITH first_calls AS (
    SELECT c.run_id, c.span_id, c.start_time::TIMESTAMPTZ_NS AS start_time
    FROM (SELECT unnest($calls, recursive := true)) AS c
), stored AS (  -- those runs' spans up to their first calls: a first call's input may continue an earlier one
    SELECT * FROM {spans}
    WHERE trace_id IN (SELECT unnest($traces)) AND start_time >= $since::TIMESTAMPTZ_NS AND start_time < $before
      AND run_id IN (SELECT run_id FROM first_calls) AND start_time <= (SELECT max(start_time) FROM first_calls)
)
SELECT s.run_id, any_value(coalesce(s.response_model, s.request_model)) AS model, min(s.start_time) AS start_time,
       any_value(s.input) AS input, any_value(s.attributes[$definitions]) AS definitions,
       any_value(s.attributes[$instructions]) AS instructions
FROM {whole_input:stored} AS s
JOIN first_calls AS f ON s.run_id = f.run_id AND s.span_id = f.span_id AND s.start_time = f.start_time
WHERE s.span_id IN (SELECT unnest($spans))
GROUP BY s.run_id, s.span_id
