-- The temp table `_one_trace`: every span of one trace ($trace), each once, for rebuilding a run.
-- Fetched once per trajectory; the run summary and the step rows are both read from it.
CREATE OR REPLACE TEMP TABLE _one_trace AS
SELECT * FROM _raw_spans
WHERE trace_id = $trace
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC NULLS LAST) = 1
