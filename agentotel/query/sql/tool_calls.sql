-- The `tool_calls` view: every tool execution (execute_tool spans), with every span column; a second
-- record of a call (an MCP server's span of the call its client recorded, another instrumentation's
-- beside agentotel's: _duplicate_spans.sql) is left out, so each call counts once.
SELECT s.* FROM _spans_stored s  -- a tool's input is stored whole (only model calls' are not)
ANTI JOIN _duplicate_spans d ON d.trace_id = s.trace_id AND d.span_id = s.span_id
WHERE s.operation = 'execute_tool'
