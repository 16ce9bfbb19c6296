-- agentotel_step_run(is_root, parent_run_id, run_id, trace_id, operation): the run a span is a step of.
-- A nested run's root span is a step (type agent) of the enclosing run; every other span belongs to its
-- own run, or to its trace when recorded outside any run (the trace's root too, when it is a model or
-- tool call: a call that is the whole trace is that run's one step; an agent span there is the run).
-- NULL for a top-level run's root, which is the run itself and not one of its steps.
CREATE OR REPLACE TEMP MACRO agentotel_step_run(is_root, parent_run_id, run_id, trace_id, operation) AS
    CASE
        WHEN is_root AND (run_id IS NOT NULL OR coalesce(operation IN ('invoke_agent', 'create_agent'), false)) THEN parent_run_id
        ELSE coalesce(run_id, trace_id)
    END
