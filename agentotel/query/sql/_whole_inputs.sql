-- The `_whole_inputs` view: (trace_id, span_id, input) of every model call, its input whole however the
-- store keeps it (_whole_input.sql; NULL when an earlier piece is missing); a span stored twice, once
-- whole and once as a continuation, gives the input either copy rebuilds.
-- The one-row CROSS JOIN changes no row: it lets DuckDB drop a LEFT JOIN to this view from a query that
-- reads none of its columns (`SELECT sum(input_tokens) FROM spans`). DuckDB 2.0 keeps the join when the
-- GROUP BY's input is the rebuild's window (its join elimination looks through projections and filters
-- down to the window), not when it is a join.
SELECT w.trace_id, w.span_id, any_value(w.input) AS input
FROM {whole_input:_raw_spans} AS w
CROSS JOIN (SELECT 1 AS one)
WHERE w.operation IN ('chat', 'text_completion', 'generate_content', 'embeddings')
GROUP BY w.trace_id, w.span_id
