-- Every span row the store holds, before duplicates are collapsed (Traces._span_rows): the validated
-- Parquet files, then the WAL's complete batches (runs still in progress) and files read through a schema
-- migration; each map with every key once (macro_unique_keys.sql), where a file is not known to hold
-- each key once already.
{span_rows}
