-- The `spans` view: every span once, each model call's input whole (however the store keeps it). A span
-- seen twice (WAL and Parquet after an interrupted fold, or the same batch delivered again) keeps its
-- latest-ending copy.
SELECT * FROM {whole_input:_raw_spans}
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
