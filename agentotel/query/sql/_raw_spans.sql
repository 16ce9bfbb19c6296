-- Every span row the store holds, before duplicates are collapsed: the validated Parquet files, then
-- {not_in_parquet} (Traces._not_in_parquet): the WAL's complete batches (runs still in progress) and files
-- read through a schema migration. {unique_keys}: each map with every key once (Traces._UNIQUE_KEYS).
SELECT * REPLACE ({unique_keys}) FROM (
    SELECT * FROM _parquet_spans
    UNION ALL BY NAME {not_in_parquet}
)
