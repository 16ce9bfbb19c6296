-- The `_spans_stored` view: every span once, as stored, without the columns that say how a model call's
-- input is stored (store/messages.py): `input` is NULL in a model call stored as a continuation. A span
-- seen twice (WAL and Parquet after an interrupted fold, or the same batch delivered again) keeps its
-- latest-ending copy. What the views that never need a model call's input read (runs, tool_calls,
-- retrievals): rebuilding inputs costs a join DuckDB cannot drop, so it stays out of them.
-- Only the spans stored twice go through the window: DuckDB turns `row_number() = 1` into an arg_max of
-- every column, which over a million spans cost several times the rest of listing runs (runs() CPU 5.0 ->
-- 2.5 s). Which spans are stored twice is found by grouping a hash of their ids (one integer rather than
-- two strings); a collision only sends a span through the window too, which keeps it. The subqueries are
-- written out, not a CTE: with a CTE DuckDB no longer drops the `spans` view's input rebuild from a query
-- that reads no input.
SELECT * EXCLUDE (input_chain, input_offset, input_added, input_ranges, input_borrowed) FROM _raw_spans
WHERE hash(trace_id, span_id) NOT IN (SELECT hash(trace_id, span_id) FROM _raw_spans GROUP BY ALL HAVING count(*) > 1)
UNION ALL
SELECT * EXCLUDE (input_chain, input_offset, input_added, input_ranges, input_borrowed) FROM _raw_spans
WHERE hash(trace_id, span_id) IN (SELECT hash(trace_id, span_id) FROM _raw_spans GROUP BY ALL HAVING count(*) > 1)
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
