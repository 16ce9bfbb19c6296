-- Every span row the store holds, before duplicates are collapsed: the validated Parquet files, the
-- WAL's complete batches (runs still in progress) and files read through a schema migration.
SELECT * FROM _parquet_spans
UNION ALL BY NAME SELECT * FROM _wal_spans
UNION ALL BY NAME SELECT * FROM _migrated_spans
