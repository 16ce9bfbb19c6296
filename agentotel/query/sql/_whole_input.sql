-- Stored span rows ({rows}: every column, the conversation columns included) with each model call's input
-- whole, and without the columns that say how it was stored (store/messages.py). A model call stored as
-- a continuation (input NULL, input_chain, input_offset, input_added, input_ranges) gets its
-- conversation's text: the messages of the conversation's rows before its offset, then its own; only
-- when those add up to exactly input_offset characters, else NULL (an earlier call of the conversation is
-- missing: never a wrong input). Its input is all of that text (input_ranges NULL) or its ranges of it.
-- A row's own messages are input_added with the parts input_borrowed lists put back: text of other spans'
-- outputs in the same trace, or that text as a JSON string (NULL when one is not there, and so every later
-- input of the conversation).
-- Copies of one row (a span in the WAL and in Parquet) count once. The agentotel_spans macro is this text
-- over a glob (macro_agentotel_spans.sql): the lines below this header are what docs/STORE.md prints.
WITH lent AS (
    SELECT DISTINCT trace_id, span_id, input_chain, input_offset, input_added,
           unnest(input_borrowed) AS _item, generate_subscripts(input_borrowed, 1) AS _k
    FROM {rows} WHERE input_borrowed IS NOT NULL
), given AS (
    SELECT l.*, CASE WHEN l._item.as_string  -- a result given back inside a message's JSON string: escaped as one
                     THEN substr(to_json(substr(o.output, l._item.start + 1, l._item.length))::VARCHAR, 2,
                                 length(to_json(substr(o.output, l._item.start + 1, l._item.length))::VARCHAR) - 2)
                     ELSE substr(o.output, l._item.start + 1, l._item.length) END AS _text,
           coalesce(l._item.start >= 0 AND l._item.start + l._item.length <= length(o.output), false) AS _found
    FROM lent AS l LEFT JOIN {rows} AS o ON o.trace_id = l.trace_id AND o.span_id = l._item.span_id
    QUALIFY row_number() OVER (PARTITION BY l.trace_id, l.span_id, l.input_chain, l.input_offset, l._k) = 1
), returned AS (
    SELECT trace_id, span_id, input_chain, input_offset,
           CASE WHEN bool_and(_found AND _item.at >= _after AND _item.at <= length(input_added))
                THEN string_agg(substr(input_added, _after + 1, _item.at - _after) || _text, '' ORDER BY _k)
                     || substr(any_value(input_added), max(_item.at) + 1) END AS _added
    FROM (SELECT *, lag(_item.at, 1, 0) OVER (PARTITION BY trace_id, span_id, input_chain, input_offset ORDER BY _k) AS _after
          FROM given)
    GROUP BY trace_id, span_id, input_chain, input_offset
), pieces AS (
    SELECT s.* REPLACE (CASE WHEN s.input_borrowed IS NULL THEN s.input_added ELSE r._added END AS input_added),
           coalesce(s.input_chain, s.span_id) AS _conversation, coalesce(s.input_offset, 0) AS _at
    FROM {rows} AS s
    LEFT JOIN returned AS r ON s.input_borrowed IS NOT NULL AND r.trace_id = s.trace_id AND r.span_id = s.span_id
                           AND r.input_chain = s.input_chain AND r.input_offset = s.input_offset
), prefixed AS (
    SELECT *, string_agg(_piece, ',') OVER (PARTITION BY trace_id, _conversation ORDER BY _at
                                            RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS _before
    FROM (SELECT *, CASE WHEN row_number() OVER (PARTITION BY trace_id, _conversation, _at, span_id) = 1
                         THEN nullif(substr(coalesce(input_added, input), 2, length(coalesce(input_added, input)) - 2), '') END AS _piece
          FROM pieces)
), texts AS (
    SELECT *, CASE WHEN input_added IS NOT NULL AND coalesce(length(_before), 0) = input_offset
                   THEN concat_ws(',', _before, nullif(substr(input_added, 2, length(input_added) - 2), '')) END AS _text
    FROM prefixed
)
SELECT * EXCLUDE (input_chain, input_offset, input_added, input_ranges, input_borrowed, _conversation, _at, _piece, _before, _text)
         REPLACE (CASE WHEN input_chain IS NULL THEN input
                       WHEN input_ranges IS NULL THEN '[' || _text || ']'
                       WHEN list_bool_and(list_transform(input_ranges, lambda r: r.start >= 0 AND r.length >= 0
                                                                                 AND r.start + r.length <= length(_text)))
                       THEN '[' || array_to_string(list_transform(input_ranges, lambda r: substr(_text, r.start + 1, r.length)), ',') || ']'
                  END AS input)
FROM texts
