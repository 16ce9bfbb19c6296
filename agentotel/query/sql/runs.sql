-- The `runs` view: one row per run (who started it, when, how it went, what it used). A run still in
-- progress has no root span yet: it is listed with status 'running' from the spans already recorded.
-- Traces.trajectory() computes the same row for one run in Python (trajectory._summary); keep them in step.
-- Steps, tokens and cost are the run's own; the total_* columns add every run nested inside it (the
-- sub-agents a planner started), which is what the whole run cost.
WITH RECURSIVE s AS (
    SELECT *, coalesce(run_id, trace_id) AS run_key FROM _spans_marked
),
roots AS (
    SELECT
        run_key,
        arg_min(trace_id, start_time) AS trace_id,
        arg_min(coalesce(run_name, agentotel_run_name(name)), start_time) AS name,
        arg_min(run_trigger, start_time) AS trigger,
        arg_min(env_hash, start_time) AS env_hash,
        arg_min(parent_run_id, start_time) AS parent_run_id,
        arg_min(status_code, start_time) AS status_code,
        arg_min(duration_ns, start_time) AS duration_ns
    FROM s WHERE is_root
    GROUP BY run_key
),
members AS (
    SELECT
        run_key,
        bool_and(run_id IS NULL) AS outside_runs,
        min(trace_id) AS trace_id,
        min(start_time) AS start_time,
        max(end_time) AS end_time,
        max(user_id) AS user_id,
        max(session_id) AS session_id,
        max(agent_name) AS agent_name,
        max(service_name) AS service_name
    FROM s
    GROUP BY run_key
),
step_totals AS (
    SELECT
        step_run AS run_key,
        count(*) AS steps,
        count(*) FILTER (WHERE step_type = 'llm') AS model_calls,
        count(*) FILTER (WHERE step_type = 'tool') AS tool_calls,
        count(*) FILTER (WHERE step_type = 'retrieval') AS retrievals,
        count(*) FILTER (WHERE step_type IN ('llm', 'tool', 'retrieval', 'embedding')) AS work_steps,
        count(*) FILTER (WHERE status_code = 'ERROR') AS errors,
        -- A total past BIGINT (a sender's bogus counts) is BIGINT's largest, not a failure of every listing (NULL stays NULL)
        if(sum(input_tokens) > 9223372036854775807, 9223372036854775807, sum(input_tokens))::BIGINT AS input_tokens,
        if(sum(output_tokens) > 9223372036854775807, 9223372036854775807, sum(output_tokens))::BIGINT AS output_tokens,
        sum(cost_usd) AS cost_usd,
        list_sort(list(DISTINCT coalesce(response_model, request_model))
            FILTER (WHERE step_type IN ('llm', 'embedding') AND coalesce(response_model, request_model) IS NOT NULL)) AS models
    FROM s
    WHERE step_type IS NOT NULL AND step_run IS NOT NULL
    GROUP BY step_run
),
own AS (
SELECT
    m.run_key AS run_id,
    coalesce(r.name, '(unnamed)') AS name,  -- a trace outside runs: its root span's name (service_name: its service)
    coalesce(r.trace_id, m.trace_id) AS trace_id,
    m.user_id,
    m.session_id,
    r.trigger,
    m.start_time::TIMESTAMPTZ AS start_time,  -- microseconds: what Python's datetime holds
    coalesce(r.duration_ns, epoch_ns(m.end_time) - epoch_ns(m.start_time)) / 1e6 AS duration_ms,
    CASE WHEN r.run_key IS NULL THEN 'running' WHEN r.status_code = 'ERROR' THEN 'error' ELSE 'ok' END AS status,
    coalesce(t.steps, 0) AS steps,
    coalesce(t.model_calls, 0) AS model_calls,
    coalesce(t.tool_calls, 0) AS tool_calls,
    coalesce(t.retrievals, 0) AS retrievals,
    -- Failed steps; a run that failed with no failed step (its own code raised) counts one.
    coalesce(t.errors, 0) + CASE WHEN r.status_code = 'ERROR' AND coalesce(t.errors, 0) = 0 THEN 1 ELSE 0 END AS errors,
    coalesce(t.input_tokens, 0) AS input_tokens,
    coalesce(t.output_tokens, 0) AS output_tokens,
    t.cost_usd,
    coalesce(t.models, []) AS models,
    r.env_hash,
    m.agent_name,
    m.service_name,
    r.parent_run_id
FROM members m
LEFT JOIN roots r USING (run_key)
LEFT JOIN step_totals t USING (run_key)
-- Spans outside any run form a run of their own only when their trace has no real run, and only when
-- they did some work: a model, tool, retrieval or embedding step (not a framework's set-up trace).
WHERE NOT (m.outside_runs AND (coalesce(t.work_steps, 0) = 0
                               OR m.trace_id IN (SELECT trace_id FROM members WHERE NOT outside_runs)))
),
-- (run, ancestor) for every run and each run it is nested in, itself included; 64 levels at most.
nesting(run_id, ancestor, depth) AS (
    SELECT run_id, run_id, 0 FROM own
    UNION ALL
    SELECT n.run_id, o.parent_run_id, n.depth + 1
    FROM nesting n JOIN own o ON o.run_id = n.ancestor
    WHERE o.parent_run_id IS NOT NULL AND o.parent_run_id <> n.run_id AND n.depth < 64
),
rolled AS (
    SELECT n.ancestor AS run_id,
           if(sum(o.input_tokens) > 9223372036854775807, 9223372036854775807, sum(o.input_tokens))::BIGINT AS total_input_tokens,
           if(sum(o.output_tokens) > 9223372036854775807, 9223372036854775807, sum(o.output_tokens))::BIGINT AS total_output_tokens,
           sum(o.cost_usd) AS total_cost_usd
    FROM nesting n JOIN own o ON o.run_id = n.run_id
    GROUP BY n.ancestor
)
SELECT own.*, rolled.total_input_tokens, rolled.total_output_tokens, rolled.total_cost_usd
FROM own JOIN rolled USING (run_id)
