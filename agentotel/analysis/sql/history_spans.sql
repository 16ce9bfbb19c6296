-- For each earlier run ($runs: their ids, earlier_runs.sql), among its spans started in [$since, $before):
-- the traces holding them, and the first model call of each model it used (a summariser on another
-- model is another first call): span id, and start as text to the nanosecond. From the cheap columns
-- alone: history_payloads.sql then decodes payloads only in those traces (a compacted
-- file keeps each trace together, traces in start order, so DuckDB skips its other row groups) and of those calls. {spans}: the
-- spans of that window (Traces._rows).
WITH window_spans AS (
    SELECT run_id, trace_id, span_id, start_time, coalesce(response_model, request_model) AS model,
           agentotel_step_type(operation, false) = 'llm' AS is_llm
    FROM {spans}
    WHERE run_id IN (SELECT unnest($runs)) AND start_time >= $since::TIMESTAMPTZ_NS AND start_time < $before
), first_calls AS (
    SELECT run_id, arg_min(span_id, start_time) AS span_id, min(start_time)::VARCHAR AS start_time
    FROM window_spans
    WHERE is_llm
    GROUP BY run_id, model
)
SELECT t.run_id, t.traces, f.calls
FROM (SELECT run_id, list(DISTINCT trace_id) AS traces FROM window_spans GROUP BY run_id) AS t
LEFT JOIN (SELECT run_id, list({'span_id': span_id, 'start_time': start_time}) AS calls FROM first_calls GROUP BY run_id) AS f
    USING (run_id)
