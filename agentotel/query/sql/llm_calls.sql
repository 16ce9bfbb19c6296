-- The `llm_calls` view: every model call (chat and completion operations), with every span column.
SELECT * FROM spans WHERE operation IN ('chat', 'text_completion', 'generate_content')
