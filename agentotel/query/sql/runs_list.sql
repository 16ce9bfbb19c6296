-- Runs newest first, optionally only one user's, at most $limit of them (NULL: all).
SELECT * FROM runs
WHERE $user IS NULL OR user_id = $user
ORDER BY start_time DESC, run_id
LIMIT $limit
