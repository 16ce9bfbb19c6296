-- The runs a name could mean: run ids and trace ids starting with $name (a full id or a prefix, as git
-- does with commits). Spans outside any run are a run named by their trace id.
SELECT DISTINCT coalesce(run_id, trace_id) AS run_id, trace_id
FROM _raw_spans
WHERE starts_with(run_id, $name) OR starts_with(trace_id, $name)
ORDER BY run_id
