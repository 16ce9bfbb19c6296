-- The `llm_calls` view: every model call (chat and completion operations), with every span column; a
-- client SDK's own duplicate span of a call agentotel recorded is left out, so each call counts once.
SELECT s.* FROM spans s
ANTI JOIN _duplicate_spans d ON d.trace_id = s.trace_id AND d.span_id = s.span_id
WHERE s.operation IN ('chat', 'text_completion', 'generate_content')
