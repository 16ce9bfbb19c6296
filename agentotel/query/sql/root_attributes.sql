-- The root attributes of a source of spans ({source}: one Parquet file, extracted once per file into the
-- roots index (_roots.py) so listing runs never reads every span's attribute map; or the spans not in
-- Parquet yet, the WAL's and migrated files', read afresh each time the store is opened): for each
-- invoke_agent span, its ids and times and the run attributes the runs and steps views need (the run's
-- name, trigger, environment hash, enclosing run). A key held twice reads as its last value, as in the
-- views (macro_unique_keys.sql), not DuckDB's first.
SELECT
    trace_id,
    span_id,
    run_id,
    start_time,
    end_time,
    agentotel_unique_keys(attributes)[getvariable('AGENTOTEL_RUN_NAME')] AS run_name,
    agentotel_unique_keys(attributes)[getvariable('AGENTOTEL_RUN_TRIGGER')] AS run_trigger,
    agentotel_unique_keys(attributes)[getvariable('AGENTOTEL_ENV_HASH')] AS env_hash,
    agentotel_unique_keys(attributes)[getvariable('AGENTOTEL_RUN_PARENT_ID')] AS parent_run_id
FROM {source}
WHERE operation = 'invoke_agent'
