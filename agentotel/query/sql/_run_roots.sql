-- The `_run_roots` view: the roots index (root_attributes.sql rows of every file, the WAL and migrated
-- files), one row per span even when the span was stored twice.
SELECT trace_id, span_id, any_value(run_id) AS run_id, any_value(start_time) AS start_time,
       any_value(end_time) AS end_time, any_value(run_name) AS run_name, any_value(run_trigger) AS run_trigger,
       any_value(env_hash) AS env_hash, any_value(parent_run_id) AS parent_run_id
FROM _root_rows
GROUP BY trace_id, span_id
