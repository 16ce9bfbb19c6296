-- The attribute map of one run's root span ($trace, $span, started within [$first, $last]): read only
-- when a run's environment is asked for, since a row group's attribute maps are costly to decompress.
-- {spans}: the spans of that window's files (Traces._rows).
SELECT attributes
FROM {spans}
WHERE trace_id = $trace AND span_id = $span AND start_time BETWEEN $first AND $last
LIMIT 1
