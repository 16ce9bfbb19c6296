-- Every span (each once) of one trace ($trace) that started within [$first, $last], for rebuilding a
-- run's trajectory: the tree links of all spans, plus the step columns and payloads of the steps.
-- The window (when the run's spans ran) lets DuckDB skip Parquet row groups by their start_time
-- statistics, since files are in start-time order. The attribute maps are not read (they are the
-- costliest column): the roots index supplies what the root spans' attributes say. {call_attributes}
-- is NULL for a trajectory; a diff reads the model calls' maps in the same pass (what each call was
-- given: instructions, tools offered, request parameters), cheaper than a second query.
WITH t AS (
    SELECT * EXCLUDE (attributes, resource_attributes, events, links), {call_attributes} AS call_attributes
    FROM _raw_spans
    WHERE trace_id = $trace AND start_time BETWEEN $first AND $last
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
), own_calls AS (  -- the parents of agentotel's model-call spans (macro_duplicates.sql)
    SELECT DISTINCT parent_span_id AS span_id FROM t
    WHERE agentotel_own_model_call(operation, scope_name) AND parent_span_id IS NOT NULL
), r AS (
    SELECT t.*, roots.run_name, roots.run_trigger, roots.env_hash, roots.parent_run_id,
           agentotel_is_run_root(t.operation, roots.run_name, t.run_id, t.parent_span_id) AS is_root,
           agentotel_duplicates(t.scope_name, t.operation, p.operation, p.scope_name, w.span_id IS NOT NULL) AS duplicate
    FROM t
    LEFT JOIN t AS p ON p.span_id = t.parent_span_id
    LEFT JOIN own_calls AS w ON w.span_id = t.span_id
    LEFT JOIN _run_roots AS roots ON roots.trace_id = t.trace_id AND roots.span_id = t.span_id
)
SELECT
    * EXCLUDE (duplicate),
    epoch_ns(start_time) AS start_ns,
    agentotel_step_type(operation, duplicate) AS step_type,
    agentotel_step_run(is_root, parent_run_id, run_id, trace_id) AS step_run
FROM r
