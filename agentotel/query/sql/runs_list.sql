-- Runs newest first, filtered by any of user, status, agent (its run name or agent name) and a
-- start-time window [since, until); at most $limit of them (NULL: all; every NULL filter is off).
SELECT * FROM runs
WHERE ($user IS NULL OR user_id = $user)
  AND ($status IS NULL OR status = $status)
  AND ($agent IS NULL OR name = $agent OR agent_name = $agent)
  AND ($since IS NULL OR start_time >= $since)
  AND ($until IS NULL OR start_time < $until)
ORDER BY start_time DESC, run_id
LIMIT $limit
