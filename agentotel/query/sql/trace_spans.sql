-- Every span (each once) of one trace, for rebuilding one run's trajectory: the tree links of
-- all spans, plus the step columns and payloads of the spans that are steps (events and links left out).
SELECT
    * EXCLUDE (events, links, resource_attributes),
    epoch_ns(start_time) AS start_ns,
    agentotel_step_type(operation, scope_name) AS step_type,
    agentotel_step_run(operation, attributes, run_id, parent_span_id, trace_id) AS step_run,
    agentotel_is_run_root(operation, attributes, run_id, parent_span_id) AS is_root
FROM _raw_spans
WHERE trace_id = $trace
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
