-- Which of the spans ($traces: their traces) are runs' own root spans (the span run() opens, named): a run
-- is not an agent step of itself (history_spans.sql). The roots index, without a join: list_contains
-- filters the few traces asked for.
SELECT trace_id, span_id FROM _run_roots WHERE run_name IS NOT NULL AND list_contains($traces::VARCHAR[], trace_id)
