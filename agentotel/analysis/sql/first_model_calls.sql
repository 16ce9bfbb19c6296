-- The first model call of each earlier run ($runs: their ids, earlier_runs.sql) among its spans started
-- in [$since, $before): ids and start only (its start as text, to the nanosecond); model_history.sql
-- then reads those calls' payloads alone. {spans}: the spans of that window (Traces._rows); $traces:
-- every trace holding a span of those runs then (history_traces.sql), so only their row groups are read.
SELECT run_id, arg_min(span_id, start_time) AS span_id, min(start_time)::VARCHAR AS start_time
FROM {spans}
WHERE agentotel_step_type(operation, false) = 'llm' AND run_id IN (SELECT unnest($runs)) AND trace_id IN (SELECT unnest($traces))
  AND start_time < $before AND start_time >= $since::TIMESTAMPTZ_NS
GROUP BY run_id
