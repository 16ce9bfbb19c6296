-- What earlier runs ($runs: their ids, earlier_runs.sql) saw, in one pass over their spans that started in
-- [$since, $before) and lie in $traces (history_spans.sql; DuckDB reads only those traces' row groups):
--   every successful or failed call of the given tools ($names; NULL: of every tool): its output and
--     interface hash ($hash), the baseline a tool's learned output schema and interface are measured against;
--     a retrieval is a tool named by its span's name after $retrieval (its documents' shape is learned too);
--   the spans $spans, among them the first model call of each model of each run (`_record._payload_rows`
--     keeps those of its plan): its model, messages and the tool definitions and instructions it was given
--     ($definitions, $instructions), the baseline a run's prompt and tools are compared with. A call stored
--     as a continuation has a NULL input here: `_record._continued_inputs` rebuilds those.
-- One pass, because a row group's payload and attribute columns cost far more to decompress than the few
-- rows wanted (two queries read them twice); a plain scan sorted and picked in Python, because on a
-- history's few hundred rows DuckDB's fixed cost per hash join and aggregate is most of the query.
-- {spans}: the spans of that window (Traces._rows).
SELECT run_id, span_id, CASE WHEN operation = 'retrieval' THEN $retrieval || name ELSE tool_name END AS tool_name, operation,
       status_code, output, input, coalesce(response_model, request_model) AS model,
       epoch_ns(start_time) AS start_ns, start_time::VARCHAR AS start_time, attributes[$hash] AS schema_hash,
       CASE WHEN operation IN ('execute_tool', 'retrieval') THEN NULL ELSE attributes[$definitions] END AS definitions,
       CASE WHEN operation IN ('execute_tool', 'retrieval') THEN NULL ELSE attributes[$instructions] END AS instructions
FROM {spans}
WHERE trace_id IN (SELECT unnest($traces::VARCHAR[]))
  AND list_contains($runs::VARCHAR[], run_id)
  AND start_time < $before
  AND start_time >= $since::TIMESTAMPTZ_NS
  AND ((operation = 'execute_tool' AND ($names IS NULL OR list_contains($names::VARCHAR[], tool_name)))
       OR (operation = 'retrieval' AND ($names IS NULL OR list_contains($names::VARCHAR[], $retrieval || name)))
       OR list_contains($spans::VARCHAR[], span_id))
