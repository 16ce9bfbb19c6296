-- The `_spans_marked` view: `spans` with `duplicate` (a client SDK's copy of a model call, not counted).
SELECT s.*, d.span_id IS NOT NULL AS duplicate
FROM spans s
LEFT JOIN _duplicate_spans d ON d.trace_id = s.trace_id AND d.span_id = s.span_id
