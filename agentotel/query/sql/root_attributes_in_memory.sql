-- The root attributes (as root_attributes.sql) of the spans not in Parquet yet: the WAL's complete
-- batches and migrated files. Small, so read afresh each time the store is opened.
SELECT
    trace_id,
    span_id,
    run_id,
    start_time,
    end_time,
    attributes[getvariable('AGENTOTEL_RUN_NAME')] AS run_name,
    attributes[getvariable('AGENTOTEL_RUN_TRIGGER')] AS run_trigger,
    attributes[getvariable('AGENTOTEL_ENV_HASH')] AS env_hash,
    attributes[getvariable('AGENTOTEL_RUN_PARENT_ID')] AS parent_run_id
FROM (SELECT * FROM _wal_spans UNION ALL BY NAME SELECT * FROM _migrated_spans)
WHERE operation = 'invoke_agent'
