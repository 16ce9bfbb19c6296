-- The `retrievals` view: every retrieval span, with every span column.
SELECT * FROM _spans_stored WHERE operation = 'retrieval'  -- stored whole (only model calls' inputs are not)
