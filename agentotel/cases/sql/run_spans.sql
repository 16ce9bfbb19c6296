-- Every span of one run with its attributes and payloads, oldest first: what detectors and cases read
-- beyond the trajectory's step fields (tool schema hashes, tool definitions, the root span's facts).
SELECT span_id, operation, start_time, status_message, attributes, input, output
FROM spans
WHERE run_id = $run_id
ORDER BY start_time
