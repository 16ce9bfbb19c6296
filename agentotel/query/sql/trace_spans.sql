-- Every span (each once) of one trace ($trace) that started within [$first, $last], for rebuilding a
-- run's trajectory: the tree links of all spans, plus the step columns and payloads of the steps.
-- The window (when the run's spans ran) lets DuckDB skip Parquet row groups by their start_time
-- statistics, since files hold traces in the order they started (older folds: spans in start order). The attribute maps are not read (they are the
-- costliest column): the roots index supplies what the root spans' attributes say. A span without run
-- attributes (another service's, joined by context propagation) belongs to the trace's outermost run.
-- `call_key` and `own` let build_trajectory find second records of a call across batches, by the rules
-- the writer marks them by within one (store/schema.py duplicate_calls; _duplicate_spans.sql for the views).
-- {spans}: the spans of that window's files (Traces._rows). {call_attributes} is NULL for a trajectory; a diff reads the model calls' maps in the same pass (what
-- each call was given: instructions, tools offered, request parameters), cheaper than a second query.
-- The rows placeholder is `stored` (Traces makes model calls' inputs whole in Python, store/messages.py whole_rows) or,
-- when that cannot, `stored` with every input made whole in SQL (_whole_input.sql): from the window's rows
-- alone either way, as a conversation never leaves its run.
WITH stored AS (
    SELECT * EXCLUDE (attributes, resource_attributes, events, links), {call_attributes} AS call_attributes
    FROM {spans}
    WHERE trace_id = $trace AND start_time BETWEEN $first AND $last
), t AS (
    SELECT * REPLACE (coalesce(run_id, (SELECT arg_min(run_id, start_time) FROM _run_roots
                                        WHERE trace_id = $trace AND run_name IS NOT NULL AND parent_run_id IS NULL)) AS run_id),
           agentotel_call_key(operation, tool_name, agent_name, scope_name) AS call_key,
           agentotel_own(scope_name) AS own
    FROM {rows}
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
), r AS (
    SELECT t.*, roots.run_name, roots.run_trigger, roots.env_hash, roots.parent_run_id,
           agentotel_is_run_root(t.operation, roots.run_name, t.run_id, t.parent_span_id) AS is_root
    FROM t
    LEFT JOIN _run_roots AS roots ON roots.trace_id = t.trace_id AND roots.span_id = t.span_id
)
SELECT
    *,
    epoch_ns(start_time) AS start_ns,
    epoch_ns(end_time) AS end_ns,
    agentotel_step_type(operation, agentotel_marked_duplicate(dialect)) AS step_type,
    agentotel_step_run(is_root, parent_run_id, run_id, trace_id, operation) AS step_run
FROM r
