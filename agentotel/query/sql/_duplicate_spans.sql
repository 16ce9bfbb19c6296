-- The `_duplicate_spans` view: (trace_id, span_id) of every span that is a second record of a model or
-- tool call or of an agent invocation (macro_duplicates.sql), so each counts once in steps, runs,
-- llm_calls and checks. One call recorded by two instrumentations (agentotel and OpenLLMetry, the
-- anthropic SDK's own span under agentotel's, an MCP client's span and the server's, pydantic-ai's
-- agent span inside agentotel's, OpenInference's LangChain or Agents SDK spans beside agentotel's) shows as:
-- - a span the writer already marked (it saw both in one batch);
-- - a call span directly inside another of the same call key: the inner one, unless it is agentotel's
--   own and the outer one is not;
-- - sibling model-call spans (same parent) that overlap in time with the same token counts: all but the
--   preferred one;
-- - another instrumentation's record of a call agentotel recorded, anywhere in the trace (LangChain
--   callbacks open their spans beside the client's, not around them): a tool call with the same call id (with
--   none - an MCP server's span of the call, from its own process - of the same tool inside ours in time),
--   a model call overlapping ours in time with the same token counts (and no other response id), an agent
--   span of the same agent inside ours in time; and an agent span that is all an agentotel agent span
--   holds (the only call or agent span directly inside it: the same invocation under another name, the
--   Agents SDK's "Agent workflow").
-- At least one of the two is not agentotel's (two of agentotel's own spans are two calls).
-- The store writer applies the same rules within a batch (store/schema.py duplicate_calls).
WITH marked AS (  -- the spans the rules look at: calls, and agent spans with or without a name
    SELECT trace_id, span_id, parent_span_id, start_time, end_time, input_tokens, output_tokens, dialect, tool_call_id,
           operation, agentotel_call_key(operation, tool_name, agent_name, scope_name) AS call_key,
           agentotel_own(scope_name) AS own
    FROM _raw_spans
    WHERE agentotel_call_key(operation, tool_name, agent_name, scope_name) IS NOT NULL
       OR operation IN ('invoke_agent', 'create_agent')
),
calls AS (SELECT * FROM marked WHERE call_key IS NOT NULL),
foreign_calls AS (SELECT * FROM calls WHERE NOT own),
-- The calls in the traces another instrumentation recorded calls in: what every rule pairs a foreign call
-- with, since a pair shares its trace (most stores: none to look at, and no hash table of every call built).
calls_beside AS (SELECT * FROM calls WHERE trace_id IN (SELECT trace_id FROM foreign_calls)),
own_calls AS (SELECT * FROM calls_beside WHERE own),
foreign_agents AS (SELECT * FROM marked WHERE operation IN ('invoke_agent', 'create_agent') AND NOT own),
inside_ours AS (  -- another instrumentation's agent span directly inside an agentotel agent span
    SELECT f.trace_id, f.span_id, f.parent_span_id
    FROM foreign_agents f
    JOIN (SELECT * FROM marked WHERE trace_id IN (SELECT trace_id FROM foreign_agents)) a
      ON a.trace_id = f.trace_id AND a.span_id = f.parent_span_id
    WHERE a.operation = 'invoke_agent' AND a.own
),
wrappers AS (  -- ... with no other call or agent span beside it
    SELECT w.trace_id, w.span_id
    FROM inside_ours w JOIN (SELECT o.trace_id, o.parent_span_id, count(*) AS n
                             FROM marked o SEMI JOIN inside_ours i ON i.trace_id = o.trace_id AND i.parent_span_id = o.parent_span_id
                             GROUP BY ALL) c ON c.trace_id = w.trace_id AND c.parent_span_id = w.parent_span_id
    WHERE c.n = 1
)
SELECT trace_id, span_id FROM calls WHERE agentotel_marked_duplicate(dialect)
UNION
SELECT c.trace_id, c.span_id  -- another instrumentation's call inside a call span
FROM foreign_calls c JOIN calls_beside p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id AND p.call_key = c.call_key
UNION
SELECT p.trace_id, p.span_id  -- another instrumentation's call span around agentotel's
FROM own_calls c JOIN foreign_calls p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id AND p.call_key = c.call_key
UNION
SELECT c.trace_id, c.span_id  -- a sibling record of a model call
FROM foreign_calls c JOIN calls_beside k
  ON k.trace_id = c.trace_id AND k.parent_span_id IS NOT DISTINCT FROM c.parent_span_id AND k.span_id <> c.span_id
 AND k.call_key = 'model' AND c.call_key = 'model'
 AND k.input_tokens = c.input_tokens AND k.output_tokens = c.output_tokens
 AND k.start_time <= c.end_time AND c.start_time <= k.end_time
WHERE agentotel_preferred(k.own, k.start_time, k.span_id, c.own, c.start_time, c.span_id)
UNION
SELECT c.trace_id, c.span_id  -- another instrumentation's record of a call agentotel recorded, wherever it sits
FROM foreign_calls c JOIN own_calls k ON k.trace_id = c.trace_id AND k.call_key = c.call_key
WHERE CASE
    WHEN c.call_key = 'model' THEN c.input_tokens = k.input_tokens AND c.output_tokens = k.output_tokens
                                   AND k.start_time <= c.end_time AND c.start_time <= k.end_time
    WHEN starts_with(c.call_key, 'agent:') THEN k.start_time <= c.start_time AND c.end_time <= k.end_time
    WHEN c.tool_call_id IS NULL THEN k.start_time <= c.start_time AND c.end_time <= k.end_time
    ELSE c.tool_call_id = k.tool_call_id
END
UNION
SELECT trace_id, span_id FROM wrappers  -- another instrumentation's agent span that is all an agentotel agent span holds
