-- agentotel_unique_keys(m): the map `m` with each key once, its last value winning. Parquet's MAP lets a
-- file hold a key twice (another tool's file, one written by hand); DuckDB reads such a map in parts
-- (m['k'] is its first value) but refuses to return it whole ("Map keys must be unique"), which failed
-- every query reading the column. The last value wins as in the OTLP receiver and the SDK, where setting an
-- attribute again replaces it. A map whose keys are unique (every map agentotel writes) is returned as it is.
CREATE OR REPLACE TEMP MACRO agentotel_unique_keys(m) AS
    CASE WHEN cardinality(m) = len(list_distinct(map_keys(m))) THEN m
         ELSE map_from_entries(list_filter(map_entries(m),
                                           lambda entry, i: NOT list_contains(map_keys(m)[i + 1:], entry.key))) END;
-- agentotel_unique_event_keys(events) and agentotel_unique_link_keys(links): the same for the map of each
-- span event and link.
CREATE OR REPLACE TEMP MACRO agentotel_unique_event_keys(events) AS
    list_transform(events, lambda ev: struct_pack(time := ev.time, name := ev.name,
                                                  attributes := agentotel_unique_keys(ev.attributes)));
CREATE OR REPLACE TEMP MACRO agentotel_unique_link_keys(links) AS
    list_transform(links, lambda li: struct_pack(trace_id := li.trace_id, span_id := li.span_id,
                                                 attributes := agentotel_unique_keys(li.attributes)));
