-- For each earlier run ($runs: their ids, earlier_runs.sql), among its spans started in [$since, $before):
-- the traces holding them, and the first model call of each agent and model it used: span id, start as
-- text to the nanosecond, and `agent`, the name of the agent step the call is in (its parent span, or
-- its parent's parent: a framework may put a turn span between), NULL outside any agent step (a run's own
-- root span is the run, no step). A handed-off sub-agent is another prompt than the agent that handed
-- over, and a summariser on another model is another first call too: each is compared with its own
-- history (detectors._given_changed, _steps.agent_of the same rule on a trajectory). From the cheap
-- columns alone: history_payloads.sql then decodes payloads only in those traces (a compacted file keeps
-- each trace together, traces in start order, so DuckDB skips its other row groups) and of those calls.
-- {spans}: the spans of that window (Traces._rows).
WITH window_spans AS (
    SELECT run_id, trace_id, span_id, parent_span_id, start_time, name, coalesce(response_model, request_model) AS model,
           agentotel_step_type(operation, false) AS step_type
    FROM {spans}
    WHERE run_id IN (SELECT unnest($runs)) AND start_time >= $since::TIMESTAMPTZ_NS AND start_time < $before
), agent_steps AS (
    SELECT w.trace_id, w.span_id, w.name
    FROM window_spans AS w
    WHERE w.step_type = 'agent'
      AND NOT EXISTS (SELECT 1 FROM _run_roots AS r  -- a run's root (the span run() opens, named): the run itself
                      WHERE r.trace_id = w.trace_id AND r.span_id = w.span_id AND r.run_name IS NOT NULL)
), calls AS (
    SELECT c.run_id, c.span_id, c.start_time, c.model, coalesce(a1.name, a2.name) AS agent
    FROM window_spans AS c
    LEFT JOIN window_spans AS p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
    LEFT JOIN agent_steps AS a1 ON a1.trace_id = c.trace_id AND a1.span_id = c.parent_span_id
    LEFT JOIN agent_steps AS a2 ON a2.trace_id = p.trace_id AND a2.span_id = p.parent_span_id
    WHERE c.step_type = 'llm'
), first_calls AS (
    SELECT run_id, arg_min(span_id, start_time) AS span_id, min(start_time)::VARCHAR AS start_time, agent
    FROM calls
    GROUP BY run_id, model, agent
)
SELECT t.run_id, t.traces, f.calls
FROM (SELECT run_id, list(DISTINCT trace_id) AS traces FROM window_spans GROUP BY run_id) AS t
LEFT JOIN (SELECT run_id, list({'span_id': span_id, 'start_time': start_time, 'agent': agent}) AS calls FROM first_calls GROUP BY run_id) AS f
    USING (run_id)
