-- The `_duplicate_spans` view: (trace_id, span_id) of every span that is another record of a model call
-- agentotel recorded (macro_duplicates.sql). Steps, runs and llm_calls leave them out.
WITH own_calls AS (  -- the parents of agentotel's model-call spans
    SELECT DISTINCT trace_id, parent_span_id AS span_id
    FROM _raw_spans
    WHERE agentotel_own_model_call(operation, scope_name) AND parent_span_id IS NOT NULL
)
SELECT c.trace_id, c.span_id
FROM _raw_spans c
LEFT JOIN _raw_spans p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
LEFT JOIN own_calls w ON w.trace_id = c.trace_id AND w.span_id = c.span_id
-- (the macro says this too; said here, DuckDB drops agentotel's own spans before the joins)
WHERE NOT starts_with(c.scope_name, getvariable('OWN_SCOPE_PREFIX'))
  AND agentotel_duplicates(c.scope_name, c.operation, p.operation, p.scope_name, w.span_id IS NOT NULL)
GROUP BY ALL
