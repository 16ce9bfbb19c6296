-- The runs replayed from a regression case, most recent first (the default run `case check` judges).
SELECT run_id, min(start_time) AS started
FROM spans
WHERE attributes[$case_attribute] = $case
  AND run_id IS NOT NULL
GROUP BY run_id
ORDER BY started DESC
