-- The names of every tool called in held rows ({spans}: Traces._hold's table): what a history's payload
-- rows are read for before the run's own tools are known (_record._Side); only the run's tools count.
SELECT DISTINCT tool_name
FROM {spans}
WHERE operation = 'execute_tool' AND tool_name IS NOT NULL
