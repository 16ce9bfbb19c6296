-- The runs whose root spans are the given spans ($spans, the agent steps of a run's trajectory, in
-- trace $trace): each sub-agent run started inside the run, by the step that started it.
SELECT span_id, run_id
FROM spans
WHERE trace_id = $trace AND list_contains($spans, span_id) AND operation = 'invoke_agent'
