-- The `_graph_agent_steps` view: the agent steps of the multi-agent LangGraph graphs another instrumentation
-- recorded (OpenInference: a span a node's task, its dialect `langgraph`, `langgraph-tools` a tool node's), as a trajectory shows them
-- (query/_graph_agents.py, called here as agentotel_graph_agents on each such trace's spans): the node spans that
-- are an agent's turn now (step type agent, `invoke_agent {agent}`, the turn's duration) and those that nest in
-- one (the span they nest in). Only the traces holding such spans are read, from `_raw_spans` (a span stored twice
-- is there twice: the function keeps its latest-ending copy), since `_spans_stored`'s window made every query of
-- the runs and steps views 2-3x slower even when no trace has such spans. {graph_traces}: that filter, or `false`
-- when the store holds no such span (Traces looks once: the view then costs the runs and steps views nothing).
WITH t AS (
    SELECT trace_id, list({'span_id': span_id, 'parent_span_id': parent_span_id, 'name': name,
                           'start_ns': epoch_ns(start_time), 'end_ns': epoch_ns(end_time), 'duration_ns': duration_ns,
                           'dialect': dialect, 'own': agentotel_own(scope_name),
                           'step_type': agentotel_step_type(operation, agentotel_marked_duplicate(dialect)),
                           'tool_call_id': tool_call_id,
                           'output': CASE WHEN agentotel_model_call(operation) THEN output END}) AS spans
    FROM _raw_spans
    WHERE {graph_traces}
    GROUP BY trace_id
)
SELECT trace_id, unnest(agentotel_graph_agents(spans), recursive := true)
FROM t
