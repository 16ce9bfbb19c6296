-- The attribute maps of some spans ($spans) of one trace ($trace, started within [$first, $last]): what
-- a run's model calls were given besides their messages (instructions, tools offered, request
-- parameters). Read only for a diff, since a row group's attribute maps are costly to decompress.
-- {spans}: the spans of that window's files (Traces._rows).
SELECT span_id, any_value(attributes) AS attributes
FROM {spans}
WHERE trace_id = $trace AND start_time BETWEEN $first AND $last AND list_contains($spans, span_id)
GROUP BY span_id
