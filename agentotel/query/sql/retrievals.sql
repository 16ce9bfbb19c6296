-- The `retrievals` view: every retrieval span, with every span column.
SELECT * FROM spans WHERE operation = 'retrieval'
