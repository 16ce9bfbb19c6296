-- The latest $runs earlier runs of the same agent ($agent: the run name, else every run): those that
-- started before $before, other than $run, newest first; `since` is the earliest one's start (as text,
-- to the nanosecond). From the roots index alone: what a run's tools and prompt are compared with, and
-- the time window the history queries read (history_spans.sql, history_payloads.sql).
SELECT run_id, start_time, (min(start_time) OVER ())::VARCHAR AS since
FROM (
    SELECT run_id, any_value(start_time) AS start_time
    FROM _run_roots
    WHERE ($agent IS NULL OR run_name = $agent) AND start_time < $before AND run_id IS DISTINCT FROM $run
    GROUP BY run_id
    ORDER BY start_time DESC
    LIMIT $runs
)
ORDER BY start_time DESC
