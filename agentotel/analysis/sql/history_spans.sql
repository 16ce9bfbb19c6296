-- For each earlier run ($runs: their ids, earlier_runs.sql), among its spans started in [$since, $before):
-- the traces holding them, and its first model call (span id, and start as text to the nanosecond).
-- From the cheap columns alone: tool_history.sql and model_history.sql then decode payloads only in
-- those traces (a compacted file is sorted by trace, so DuckDB skips its other row groups) and of those
-- calls. {spans}: the spans of that window (Traces._rows).
SELECT run_id, list(DISTINCT trace_id) AS traces,
       arg_min(span_id, start_time) FILTER (WHERE agentotel_step_type(operation, false) = 'llm') AS span_id,
       (min(start_time) FILTER (WHERE agentotel_step_type(operation, false) = 'llm'))::VARCHAR AS start_time
FROM {spans}
WHERE run_id IN (SELECT unnest($runs)) AND start_time >= $since::TIMESTAMPTZ_NS AND start_time < $before
GROUP BY run_id
