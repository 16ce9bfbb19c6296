-- Every span of the earlier runs ($runs: their ids, earlier_runs.sql) that started in [$since, $before), from
-- the cheap columns alone: `_record._plan` finds in them the traces holding those runs and the first model
-- call of each agent and model each run used (its `agent`: the agent step the call is in, its parent span or
-- its parent's parent - a framework may put a turn span between; a run's own root is the run, no step).
-- A handed-off sub-agent is another prompt than the agent that handed over, and a summariser on another
-- model is another first call too: each is compared with its own history (detectors._given_changed,
-- _steps.agent_of the same rule on a trajectory). history_payloads.sql then decodes payloads only in those
-- traces (a compacted file keeps each trace together, traces in start order, so DuckDB skips its other row
-- groups) and of those calls. A plain scan, grouped in Python: on the few hundred rows of a history DuckDB's
-- fixed cost per hash join and aggregate (tables sized and cleared for millions) is most of the query.
-- {spans}: the spans of that window (Traces._rows).
SELECT run_id, trace_id, span_id, parent_span_id, name, coalesce(response_model, request_model) AS model,
       epoch_ns(start_time) AS start_ns, start_time::VARCHAR AS start_time, agentotel_step_type(operation, false) AS step_type
FROM {spans}
WHERE run_id IN (SELECT unnest($runs)) AND start_time >= $since::TIMESTAMPTZ_NS AND start_time < $before
