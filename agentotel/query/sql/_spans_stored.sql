-- The `_spans_stored` view: every span once, as stored, without the columns that say how a model call's
-- input is stored (store/messages.py): `input` is NULL in a model call stored as a continuation. A span
-- seen twice (WAL and Parquet after an interrupted fold, or the same batch delivered again) keeps its
-- latest-ending copy. What the views that never need a model call's input read (runs, tool_calls,
-- retrievals): rebuilding inputs costs a join DuckDB cannot drop, so it stays out of them.
-- Only the spans stored twice go through the window: DuckDB turns `row_number() = 1` into an arg_max of
-- every column, which over a million spans costs several times the rest of listing runs (5.0 -> 3.2 s CPU);
-- finding the twice-stored keys reads two columns. The subqueries are written out, not a CTE: with a CTE
-- DuckDB no longer drops the `spans` view's input rebuild from a query that reads no input.
SELECT * EXCLUDE (input_chain, input_offset, input_added, input_ranges, input_borrowed) FROM _raw_spans AS s
WHERE NOT EXISTS (SELECT 1 FROM (SELECT trace_id, span_id FROM _raw_spans GROUP BY ALL HAVING count(*) > 1) AS t
                  WHERE t.trace_id IS NOT DISTINCT FROM s.trace_id AND t.span_id IS NOT DISTINCT FROM s.span_id)
UNION ALL
SELECT * EXCLUDE (input_chain, input_offset, input_added, input_ranges, input_borrowed) FROM _raw_spans AS s
WHERE EXISTS (SELECT 1 FROM (SELECT trace_id, span_id FROM _raw_spans GROUP BY ALL HAVING count(*) > 1) AS t
              WHERE t.trace_id IS NOT DISTINCT FROM s.trace_id AND t.span_id IS NOT DISTINCT FROM s.span_id)
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
