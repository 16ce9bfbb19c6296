-- The run a full run id or trace id names, from the roots index (no scan of the spans): its ids and
-- the root span's start and end, which bound every span of the run. Nothing for a run still going
-- (no root yet) or a prefix: run_lookup.sql answers those.
SELECT DISTINCT run_id, trace_id, start_time AS first_start, end_time AS last_start
FROM _run_roots
WHERE run_name IS NOT NULL AND (run_id = $name OR trace_id = $name)
ORDER BY run_id
