-- The `llm_calls` view: every model call (chat and completion operations), with every span column; a
-- client SDK's own duplicate span of a call agentotel recorded is left out, so each call counts once.
SELECT * EXCLUDE (duplicate) FROM _spans_marked
WHERE operation IN ('chat', 'text_completion', 'generate_content') AND NOT duplicate
