-- agentotel_spans(files): every span row of the Parquet files `files` (a glob or a list), each model call's
-- input whole: `_whole_input.sql` (what the views use) over a plain glob, for analysts. docs/STORE.md
-- prints it expanded (a test keeps the two the same).
CREATE OR REPLACE MACRO agentotel_spans(files) AS TABLE
WITH stored AS (
    SELECT * FROM read_parquet(files, union_by_name = true, hive_partitioning = false)
    -- files written before schema version 5 lack some of these columns: NULL in their rows
    UNION ALL BY NAME SELECT NULL::VARCHAR AS input_chain, NULL::BIGINT AS input_offset, NULL::VARCHAR AS input_added,
                             NULL::STRUCT("start" BIGINT, "length" BIGINT)[] AS input_ranges,
                             NULL::STRUCT("at" BIGINT, span_id VARCHAR, "start" BIGINT, "length" BIGINT, as_string BOOLEAN)[] AS input_borrowed WHERE false
)
SELECT * FROM {whole_input:stored};
