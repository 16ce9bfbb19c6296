-- The `_spans_marked` view: `_spans_stored` (a model call's input NULL where it is stored as a continuation)
-- with what the runs and steps views derive per span — `duplicate`
-- (a second record of a call, not counted), the root attributes from the roots index, `is_root` and
-- `step_run` (the run the span is a step of) — without reading the attribute maps. A span without run
-- attributes in a run's trace (another service's span joined by context propagation, another
-- instrumentation's) belongs to the trace's outermost run: `run_id` says so here.
WITH trace_runs AS (
    SELECT trace_id, arg_min(run_id, start_time) AS run_id
    FROM _run_roots
    WHERE run_name IS NOT NULL AND parent_run_id IS NULL AND run_id IS NOT NULL
    GROUP BY trace_id
),
m AS (
    -- a node span of a multi-agent graph another instrumentation recorded: an agent step, or inside one
    SELECT s.* REPLACE (coalesce(s.run_id, tr.run_id) AS run_id, coalesce(g.name, s.name) AS name,
                        coalesce(g.parent_span_id, s.parent_span_id) AS parent_span_id,
                        coalesce(g.duration_ns, s.duration_ns) AS duration_ns),
           g.step_type AS graph_step_type,
           d.span_id IS NOT NULL AS duplicate,
           r.run_name, r.run_trigger, r.env_hash, r.parent_run_id,
           agentotel_is_run_root(s.operation, r.run_name, coalesce(s.run_id, tr.run_id), s.parent_span_id) AS is_root
    FROM _spans_stored s
    LEFT JOIN trace_runs tr ON tr.trace_id = s.trace_id
    LEFT JOIN _duplicate_spans d ON d.trace_id = s.trace_id AND d.span_id = s.span_id
    LEFT JOIN _run_roots r ON r.trace_id = s.trace_id AND r.span_id = s.span_id
    LEFT JOIN _graph_agent_steps g ON g.trace_id = s.trace_id AND g.span_id = s.span_id
)
SELECT * EXCLUDE (graph_step_type),
       coalesce(graph_step_type, agentotel_step_type(operation, duplicate)) AS step_type,
       agentotel_step_run(is_root, parent_run_id, run_id, trace_id, operation) AS step_run
FROM m
