-- The `_whole_inputs` view: (trace_id, span_id, input) of every model call, its input whole however the
-- store keeps it (_whole_input.sql; NULL when an earlier piece is missing); a span stored twice, once
-- whole and once as a continuation, gives the input either copy rebuilds.
SELECT trace_id, span_id, any_value(input) AS input
FROM {whole_input:_raw_spans}
WHERE operation IN ('chat', 'text_completion', 'generate_content', 'embeddings')
GROUP BY trace_id, span_id
