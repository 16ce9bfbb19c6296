-- The span rows of `_one_trace` for rebuilding a trajectory: the tree links of all spans, plus the step
-- columns and payloads of the spans that are steps.
SELECT
    *,
    epoch_ns(start_time) AS start_ns,
    agentotel_step_type(operation, scope_name) AS step_type,
    agentotel_step_run(operation, attributes, run_id, parent_span_id, trace_id) AS step_run,
    agentotel_is_run_root(operation, attributes, run_id, parent_span_id) AS is_root
FROM _one_trace
