-- The `spans` view: every span once (_spans_stored.sql), each model call's input whole however the store
-- keeps it (_whole_inputs.sql). A filter on trace_id reaches both sides of the join: a trace's spans
-- rebuild only that trace's inputs.
SELECT s.* REPLACE (coalesce(s.input, w.input) AS input)
FROM _spans_stored AS s
LEFT JOIN _whole_inputs AS w ON w.trace_id = s.trace_id AND w.span_id = s.span_id
