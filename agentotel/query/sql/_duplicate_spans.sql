-- The `_duplicate_spans` view: (trace_id, span_id) of every span that is a second record of a model or
-- tool call or of an agent invocation (macro_duplicates.sql), so each counts once in steps, runs,
-- llm_calls and checks. One call recorded by two instrumentations (agentotel and OpenLLMetry, the
-- anthropic SDK's own span under agentotel's, an MCP client's span and the server's, pydantic-ai's
-- agent span inside agentotel's) shows as:
-- - a span the writer already marked (it saw both in one batch);
-- - a call span directly inside another of the same call key: the inner one, unless it is agentotel's
--   own and the outer one is not;
-- - sibling model-call spans (same parent) that overlap in time with the same token counts: all but the
--   preferred one.
-- At least one of the two is not agentotel's (two of agentotel's own spans are two calls).
WITH calls AS (
    SELECT trace_id, span_id, parent_span_id, start_time, end_time, input_tokens, output_tokens, dialect,
           agentotel_call_key(operation, tool_name, agent_name, scope_name) AS call_key,
           coalesce(starts_with(scope_name, getvariable('OWN_SCOPE_PREFIX')), false) AS own
    FROM _raw_spans
    WHERE agentotel_call_key(operation, tool_name, agent_name, scope_name) IS NOT NULL
),
foreign_calls AS (SELECT * FROM calls WHERE NOT own)
SELECT trace_id, span_id FROM calls WHERE agentotel_marked_duplicate(dialect)
UNION
SELECT c.trace_id, c.span_id  -- another instrumentation's call inside a call span
FROM foreign_calls c JOIN calls p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id AND p.call_key = c.call_key
UNION
SELECT p.trace_id, p.span_id  -- another instrumentation's call span around agentotel's
FROM calls c JOIN foreign_calls p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id AND p.call_key = c.call_key
WHERE c.own
UNION
SELECT c.trace_id, c.span_id  -- a sibling record of a model call
FROM foreign_calls c JOIN calls k
  ON k.trace_id = c.trace_id AND k.parent_span_id IS NOT DISTINCT FROM c.parent_span_id AND k.span_id <> c.span_id
 AND k.call_key = 'model' AND c.call_key = 'model'
 AND k.input_tokens = c.input_tokens AND k.output_tokens = c.output_tokens
 AND k.start_time <= c.end_time AND c.start_time <= k.end_time
WHERE agentotel_preferred(k.own, k.start_time, k.span_id, c.own, c.start_time, c.span_id)
