-- The latest run with this name ($name): what a run name on the command line means (`agentotel check support`).
SELECT run_id
FROM runs
WHERE name = $name
ORDER BY start_time DESC
LIMIT 1
