-- The `steps` view: one row per trajectory step of every run, numbered from 1 by start time within its
-- run (the same numbering as Traces.trajectory()).
SELECT
    step_run AS run_id,
    row_number() OVER (PARTITION BY step_run ORDER BY start_time, span_id) AS "index",
    step_type AS type,
    name,
    trace_id,
    span_id,
    parent_span_id,
    CASE WHEN status_code = 'ERROR' THEN 'error' ELSE 'ok' END AS status,
    start_time::TIMESTAMPTZ AS start_time,  -- microseconds: what Python's datetime holds
    duration_ns / 1e6 AS duration_ms,
    coalesce(response_model, request_model) AS model,
    tool_name,
    tool_call_id,
    input_tokens,
    output_tokens,
    cost_usd,
    error_type,
    CASE WHEN status_code = 'ERROR' THEN coalesce(nullif(status_message, ''), error_type) END AS error,
    user_id,
    session_id,
    input,
    output
FROM (SELECT m.* REPLACE (coalesce(m.input, w.input) AS input)  -- a model call's input whole (_whole_inputs.sql)
      FROM _spans_marked AS m
      LEFT JOIN _whole_inputs AS w ON w.trace_id = m.trace_id AND w.span_id = m.span_id)
WHERE step_type IS NOT NULL AND step_run IS NOT NULL
