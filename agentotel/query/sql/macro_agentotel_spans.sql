-- agentotel_spans(files): every span row of the Parquet files `files` (a glob or a list), each model call's
-- input whole: the analysts' way to what `_whole_input.sql` does for the views, over a plain glob. Its text
-- is printed in docs/STORE.md (a test keeps the two the same).
CREATE OR REPLACE MACRO agentotel_spans(files) AS TABLE
WITH stored AS (SELECT * FROM read_parquet(files, union_by_name = true, hive_partitioning = false)),
pieces AS (
    SELECT *, coalesce(input_chain, span_id) AS _conversation, coalesce(input_offset, 0) AS _at,
           CASE WHEN row_number() OVER (PARTITION BY trace_id, coalesce(input_chain, span_id), coalesce(input_offset, 0), span_id) = 1
                THEN nullif(substr(coalesce(input_added, input), 2, length(coalesce(input_added, input)) - 2), '') END AS _piece
    FROM stored
), prefixed AS (
    SELECT *, string_agg(_piece, ',') OVER (PARTITION BY trace_id, _conversation ORDER BY _at
                                            RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS _before
    FROM pieces
)
SELECT * EXCLUDE (input_chain, input_offset, input_added, _conversation, _at, _piece, _before)
         REPLACE (CASE WHEN input_chain IS NULL THEN input
                       WHEN input_added IS NOT NULL AND coalesce(length(_before), 0) = input_offset
                       THEN '[' || _before || coalesce(',' || nullif(substr(input_added, 2, length(input_added) - 2), ''), '') || ']'
                  END AS input)
FROM prefixed;
