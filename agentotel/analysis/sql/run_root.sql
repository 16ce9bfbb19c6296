-- The root span of a run ($run, in trace $trace) as the roots index knows it: its start and run name,
-- what a check's history is planned from before the run's spans are read (_record.load). No row, or
-- several, when the index cannot say (a run without agentotel's run attributes, say).
SELECT start_time, run_name
FROM _run_roots
WHERE run_id = $run AND trace_id = $trace AND run_name IS NOT NULL
