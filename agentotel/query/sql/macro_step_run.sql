-- agentotel_step_run(is_root, parent_run_id, run_id, trace_id): the run a span is a step of. A nested
-- run's root span is a step (type agent) of the enclosing run; every other span belongs to its own
-- run, or to its trace when recorded outside any run (the trace's root too: a model call that is the
-- whole trace is that run's one step). NULL for a top-level run's root, which is the run itself and not
-- one of its steps.
CREATE OR REPLACE TEMP MACRO agentotel_step_run(is_root, parent_run_id, run_id, trace_id) AS
    CASE WHEN is_root AND run_id IS NOT NULL THEN parent_run_id ELSE coalesce(run_id, trace_id) END
