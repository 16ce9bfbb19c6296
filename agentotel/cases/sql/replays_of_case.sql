-- The runs replayed from a regression case, most recent first (the default run `case check` judges).
-- Spans recorded outside agentotel.run() belong to the run named by their trace id, as in the runs view.
SELECT coalesce(run_id, trace_id) AS run, min(start_time) AS started
FROM _spans_stored  -- every span once, as stored: no model call's input is read
WHERE attributes[$case_attribute] = $case
GROUP BY coalesce(run_id, trace_id)
ORDER BY started DESC
