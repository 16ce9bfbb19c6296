-- Stored span rows ({rows}: every column, the conversation columns included) with each model call's input
-- whole, and without the columns that say how it was stored (store/messages.py). A model call stored as
-- a continuation (input NULL, input_chain, input_offset, input_added, input_ranges) gets its
-- conversation's text: the messages of the conversation's rows before its offset, then its own; only
-- when those add up to exactly input_offset characters, else NULL (an earlier call of the conversation is
-- missing: never a wrong input). Its input is all of that text (input_ranges NULL) or its ranges of it.
-- Copies of one row (a span in the WAL and in Parquet) count once. The agentotel_spans macro is this text
-- over a glob (macro_agentotel_spans.sql): the lines below this header are what docs/STORE.md prints.
WITH pieces AS (
    SELECT *, coalesce(input_chain, span_id) AS _conversation, coalesce(input_offset, 0) AS _at,
           CASE WHEN row_number() OVER (PARTITION BY trace_id, coalesce(input_chain, span_id), coalesce(input_offset, 0), span_id) = 1
                THEN nullif(substr(coalesce(input_added, input), 2, length(coalesce(input_added, input)) - 2), '') END AS _piece
    FROM {rows}
), prefixed AS (
    SELECT *, string_agg(_piece, ',') OVER (PARTITION BY trace_id, _conversation ORDER BY _at
                                            RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS _before
    FROM pieces
), texts AS (
    SELECT *, CASE WHEN input_added IS NOT NULL AND coalesce(length(_before), 0) = input_offset
                   THEN concat_ws(',', _before, nullif(substr(input_added, 2, length(input_added) - 2), '')) END AS _text
    FROM prefixed
)
SELECT * EXCLUDE (input_chain, input_offset, input_added, input_ranges, _conversation, _at, _piece, _before, _text)
         REPLACE (CASE WHEN input_chain IS NULL THEN input
                       WHEN input_ranges IS NULL THEN '[' || _text || ']'
                       WHEN list_bool_and(list_transform(input_ranges, lambda r: r.start >= 0 AND r.length >= 0
                                                                                 AND r.start + r.length <= length(_text)))
                       THEN '[' || array_to_string(list_transform(input_ranges, lambda r: substr(_text, r.start + 1, r.length)), ',') || ']'
                  END AS input)
FROM texts
