-- The `_graph_agent_steps` view: the agent steps of the multi-agent LangGraph graphs another instrumentation
-- recorded (OpenInference: a span a node's task, its dialect `langgraph`), as a trajectory shows them
-- (query/_graph_agents.py, called here as agentotel_graph_agents on each such trace's spans): the node spans that
-- are an agent's turn now (step type agent, `invoke_agent {agent}`, the turn's duration) and those that nest in
-- one (the span they nest in). Only the traces holding such spans are read.
WITH t AS (
    SELECT trace_id, list({'span_id': span_id, 'parent_span_id': parent_span_id, 'name': name,
                           'start_ns': epoch_ns(start_time), 'end_ns': epoch_ns(end_time), 'duration_ns': duration_ns,
                           'dialect': dialect, 'own': agentotel_own(scope_name),
                           'step_type': agentotel_step_type(operation, agentotel_marked_duplicate(dialect)),
                           'tool_call_id': tool_call_id,
                           'output': CASE WHEN agentotel_model_call(operation) THEN output END}) AS spans
    FROM _spans_stored
    WHERE trace_id IN (SELECT trace_id FROM _raw_spans WHERE contains(dialect, 'langgraph'))
    GROUP BY trace_id
)
SELECT trace_id, unnest(agentotel_graph_agents(spans), recursive := true)
FROM t
