-- The runs a name could mean: run ids and trace ids starting with $name (a full id or a prefix, as git
-- does with commits). Spans outside any run are a run named by their trace id. The time window of
-- each run's spans (first start to last end: its nested runs start inside it) lets the trajectory query
-- skip every Parquet row group outside it.
SELECT
    coalesce(run_id, trace_id) AS run_id,
    trace_id,
    min(start_time) AS first_start,
    max(coalesce(end_time, start_time)) AS last_start
FROM _raw_spans
WHERE starts_with(run_id, $name) OR starts_with(trace_id, $name)
GROUP BY ALL
ORDER BY run_id
