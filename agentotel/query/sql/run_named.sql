-- The latest run with this name (the name its agent gave the run), for a RUN argument that is no id.
SELECT run_id FROM runs WHERE name = $name ORDER BY start_time DESC, run_id DESC LIMIT 1
