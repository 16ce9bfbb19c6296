-- The runs a name could mean: run ids and trace ids starting with $name (a full id or a prefix, as git
-- does with commits). Spans outside any run are a run named by their trace id, unless their trace has a
-- run (they belong to it, as _spans_marked.sql says). The time window of each run's spans (first start
-- to last end: its nested runs start inside it) lets the trajectory query skip every Parquet row group
-- outside it. Ordered so the first row of a run id is the trace it means (Traces.resolve keeps it): the trace
-- whose outermost run it is (where its root is, not another process's trace joined by run id), then the
-- latest (an id given to two executions means the newest, as a run's name does), so a lookup never varies.
WITH trace_runs AS (
    SELECT trace_id, arg_min(run_id, start_time) AS run_id
    FROM _run_roots
    WHERE run_name IS NOT NULL AND parent_run_id IS NULL AND run_id IS NOT NULL
    GROUP BY trace_id
)
SELECT
    coalesce(s.run_id, tr.run_id, s.trace_id) AS run_id,
    s.trace_id,
    min(s.start_time) AS first_start,
    max(coalesce(s.end_time, s.start_time)) AS last_start,
    tr.run_id IS NOT DISTINCT FROM coalesce(s.run_id, tr.run_id, s.trace_id) AS rooted_here
FROM _raw_spans s
LEFT JOIN trace_runs tr ON tr.trace_id = s.trace_id
WHERE starts_with(s.run_id, $name) OR starts_with(s.trace_id, $name)
GROUP BY ALL
ORDER BY run_id, rooted_here DESC, first_start DESC, trace_id
