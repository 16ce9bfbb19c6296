-- The `tool_calls` view: every tool execution (execute_tool spans), with every span column.
SELECT * FROM spans WHERE operation = 'execute_tool'
