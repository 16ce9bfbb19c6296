-- The attributes detectors read beyond the step fields (tool definitions offered, system instructions,
-- tool descriptions and schema hashes, the environment snapshot) of a run's step spans ($spans) and
-- of its root span, within the run's trace ($trace) and time window [$first, $last] so DuckDB skips
-- row groups ({spans}: the spans of that window, Traces._rows); only the attribute names asked for ($names)
-- are kept (the payloads come with the trajectory, all but the root's: its task and output).
SELECT
    span_id,
    operation,
    parent_span_id,
    run_id,
    status_message,
    CASE WHEN operation = 'invoke_agent' AND run_id = $run THEN input END AS root_input,  -- the run's task and
    CASE WHEN operation = 'invoke_agent' AND run_id = $run THEN output END AS root_output, -- output (root only)
    map_from_entries(list_filter(map_entries(attributes), lambda e: list_contains($names, e.key))) AS attributes
FROM {spans}
WHERE trace_id = $trace
  AND start_time BETWEEN $first AND $last
  AND (list_contains($spans, span_id) OR (operation = 'invoke_agent' AND run_id = $run))
