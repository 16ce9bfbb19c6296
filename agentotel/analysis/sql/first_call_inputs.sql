-- The whole input of earlier runs' first model calls whose stored input is a continuation (NULL in the
-- file: see docs/STORE.md), rebuilt ({whole_input:...}, query/sql/_whole_input.sql) from those runs' spans up
-- to those calls. history_payloads.sql reads every other first call's input in its one pass; this runs only
-- when one came back NULL ($calls: {run_id, span_id, start_time}; $spans: their ids; $traces and the window
-- [$since, $before) skip every other row group; {spans}: the spans of that window, Traces._rows).
WITH first_calls AS (
    SELECT c.run_id, c.span_id, c.start_time::TIMESTAMPTZ_NS AS start_time
    FROM (SELECT unnest($calls, recursive := true)) AS c
), stored AS (  -- those runs' spans up to their first calls: a first call's input may continue an earlier one
    SELECT * FROM {spans}
    WHERE trace_id IN (SELECT unnest($traces)) AND start_time >= $since::TIMESTAMPTZ_NS AND start_time < $before
      AND run_id IN (SELECT run_id FROM first_calls) AND start_time <= (SELECT max(start_time) FROM first_calls)
)
SELECT s.span_id, any_value(s.input) AS input
FROM {whole_input:stored} AS s
JOIN first_calls AS f ON s.run_id = f.run_id AND s.span_id = f.span_id AND s.start_time = f.start_time
WHERE s.span_id IN (SELECT unnest($spans))
GROUP BY s.span_id
