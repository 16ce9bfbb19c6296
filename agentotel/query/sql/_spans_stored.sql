-- The `_spans_stored` view: every span once, as stored, without the columns that say how a model call's
-- input is stored (store/messages.py): `input` is NULL in a model call stored as a continuation. A span
-- seen twice (WAL and Parquet after an interrupted fold, or the same batch delivered again) keeps its
-- latest-ending copy. What the views that never need a model call's input read (runs, tool_calls,
-- retrievals): rebuilding inputs costs a join DuckDB cannot drop, so it stays out of them.
SELECT * EXCLUDE (input_chain, input_offset, input_added, input_ranges, input_borrowed) FROM _raw_spans
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
