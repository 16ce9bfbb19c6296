-- agentotel_step_run(...): the run a span is a step of. A nested run's root span is a step (type agent)
-- of the enclosing run; every other span belongs to its own run, or to its trace when recorded outside
-- any run. NULL for a top-level run's root, which is the run itself and not one of its steps.
CREATE OR REPLACE TEMP MACRO agentotel_step_run(operation, attributes, run_id, parent_span_id, trace_id) AS
    CASE
        WHEN agentotel_is_run_root(operation, attributes, run_id, parent_span_id)
            THEN attributes[getvariable('AGENTOTEL_RUN_PARENT_ID')]
        ELSE coalesce(run_id, trace_id)
    END
