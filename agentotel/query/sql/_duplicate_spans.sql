-- The `_duplicate_spans` view: (trace_id, span_id) of every client SDK span that duplicates a model call
-- agentotel recorded (macro_duplicates.sql). Steps, runs and llm_calls leave them out.
SELECT c.trace_id, c.span_id
FROM _raw_spans c
JOIN _raw_spans p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
WHERE list_contains(getvariable('EXCLUDED_SCOPES'), c.scope_name)
  AND agentotel_duplicates(c.scope_name, p.operation, p.scope_name)
GROUP BY ALL
