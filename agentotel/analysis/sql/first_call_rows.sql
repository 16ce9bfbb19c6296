-- The stored rows first_call_inputs.sql rebuilds earlier runs' first model calls' inputs from (the same
-- filters: those runs' spans in $traces that started in [$since, $before), up to $last, the latest of those
-- calls), with the columns store/messages.py whole_rows reads: the history rebuilds them in Python, as a
-- trajectory does, and asks first_call_inputs.sql only when that cannot. A plain scan: planning the SQL
-- rebuild's windows and joins costs more than running it on a few hundred held rows. {spans}: Traces._rows.
SELECT run_id, trace_id, span_id, epoch_ns(end_time) AS end_ns, input, output,
       input_chain, input_offset, input_added, input_ranges, input_borrowed
FROM {spans}
WHERE trace_id IN (SELECT unnest($traces::VARCHAR[])) AND start_time >= $since::TIMESTAMPTZ_NS AND start_time < $before
  AND run_id IN (SELECT unnest($runs::VARCHAR[])) AND start_time <= $last::TIMESTAMPTZ_NS
