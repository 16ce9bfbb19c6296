-- Every span (each once) of one trace ($trace) that started within [$first, $last], for rebuilding a
-- run's trajectory: the tree links of all spans, plus the step columns and payloads of the steps.
-- The window (when the run's spans ran) lets DuckDB skip Parquet row groups by their start_time
-- statistics, since files are in start-time order. The attribute maps are not read (they are the
-- costliest column): the roots index supplies what the root spans' attributes say. A span without run
-- attributes (another service's, joined by context propagation) belongs to the trace's outermost run.
-- Second records of a call are found as _duplicate_spans.sql finds them (keep the two in step).
WITH t AS (
    SELECT * EXCLUDE (attributes, resource_attributes, events, links)
             REPLACE (coalesce(run_id, (SELECT arg_min(run_id, start_time) FROM _run_roots
                                        WHERE trace_id = $trace AND run_name IS NOT NULL AND parent_run_id IS NULL)) AS run_id),
           agentotel_call_key(operation, tool_name, scope_name) AS call_key,
           coalesce(starts_with(scope_name, getvariable('OWN_SCOPE_PREFIX')), false) AS own
    FROM _raw_spans
    WHERE trace_id = $trace AND start_time BETWEEN $first AND $last
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
), calls AS (
    SELECT span_id, parent_span_id, start_time, end_time, input_tokens, output_tokens, dialect, call_key, own
    FROM t WHERE call_key IS NOT NULL
), duplicates AS (
    SELECT span_id FROM calls WHERE agentotel_marked_duplicate(dialect)
    UNION
    SELECT c.span_id FROM calls c JOIN calls p ON p.span_id = c.parent_span_id AND p.call_key = c.call_key WHERE NOT c.own
    UNION
    SELECT p.span_id FROM calls c JOIN calls p ON p.span_id = c.parent_span_id AND p.call_key = c.call_key WHERE c.own AND NOT p.own
    UNION
    SELECT c.span_id FROM calls c JOIN calls k
      ON k.parent_span_id IS NOT DISTINCT FROM c.parent_span_id AND k.span_id <> c.span_id
     AND k.call_key = 'model' AND c.call_key = 'model'
     AND k.input_tokens = c.input_tokens AND k.output_tokens = c.output_tokens
     AND k.start_time <= c.end_time AND c.start_time <= k.end_time
    WHERE NOT c.own AND agentotel_preferred(k.own, k.start_time, k.span_id, c.own, c.start_time, c.span_id)
), r AS (
    SELECT t.* EXCLUDE (call_key, own), roots.run_name, roots.run_trigger, roots.env_hash, roots.parent_run_id,
           agentotel_is_run_root(t.operation, roots.run_name, t.run_id, t.parent_span_id) AS is_root,
           d.span_id IS NOT NULL AS duplicate
    FROM t
    LEFT JOIN duplicates AS d ON d.span_id = t.span_id
    LEFT JOIN _run_roots AS roots ON roots.trace_id = t.trace_id AND roots.span_id = t.span_id
)
SELECT
    * EXCLUDE (duplicate),
    epoch_ns(start_time) AS start_ns,
    agentotel_step_type(operation, duplicate) AS step_type,
    agentotel_step_run(is_root, parent_run_id, run_id, trace_id, operation) AS step_run
FROM r
