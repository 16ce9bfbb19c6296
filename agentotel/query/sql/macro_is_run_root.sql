-- agentotel_is_run_root(operation, run_name, run_id, parent_span_id): whether a span is the root of a
-- run: the invoke_agent span run() opens (it carries the run's name), or, for spans recorded outside
-- any run, the trace's root span.
CREATE OR REPLACE TEMP MACRO agentotel_is_run_root(operation, run_name, run_id, parent_span_id) AS
    coalesce(operation = 'invoke_agent' AND run_name IS NOT NULL, false)
    OR (run_id IS NULL AND parent_span_id IS NULL)
