-- agentotel_model_call(operation): whether a span's operation is a model call (chat, completion,
-- embeddings).
CREATE OR REPLACE TEMP MACRO agentotel_model_call(operation) AS
    operation IN ('chat', 'text_completion', 'generate_content', 'embeddings');
-- agentotel_own(scope_name): whether agentotel recorded the span: its tracer is OWN_SCOPE itself (runs, tools,
-- framework integrations) or OWN_SCOPE, a dot and a library's name (the model clients).
CREATE OR REPLACE TEMP MACRO agentotel_own(scope_name) AS
    coalesce(scope_name = getvariable('OWN_SCOPE') OR starts_with(scope_name, getvariable('OWN_SCOPE') || '.'), false);
-- agentotel_call_key(operation, tool_name, agent_name, scope_name): what two records of one call share:
-- 'model' for a model call (and any span of a client SDK that traces its own calls, EXCLUDED_SCOPES),
-- 'tool:<name>' for a tool call, 'agent:<name>' for an agent invocation (a framework's own agent span
-- inside or around agentotel's: pydantic-ai's `invoke_agent`, say); NULL for every other span, which is
-- never a duplicate.
CREATE OR REPLACE TEMP MACRO agentotel_call_key(operation, tool_name, agent_name, scope_name) AS
    CASE
        WHEN agentotel_model_call(operation) OR list_contains(getvariable('EXCLUDED_SCOPES'), scope_name) THEN 'model'
        WHEN operation = 'execute_tool' THEN 'tool:' || coalesce(tool_name, '')
        WHEN operation = 'invoke_agent' AND agent_name IS NOT NULL THEN 'agent:' || agent_name
    END;
-- agentotel_marked_duplicate(dialect): the writer saw the other record of the call in the same batch and
-- marked this one (store/schema.py DUPLICATE; its token and cost columns are empty).
CREATE OR REPLACE TEMP MACRO agentotel_marked_duplicate(dialect) AS
    coalesce(dialect = 'duplicate' OR ends_with(dialect, '+duplicate'), false);
-- agentotel_preferred(own_a, start_a, span_a, own_b, start_b, span_b): of two sibling records of one model
-- call (same parent, same token counts, overlapping in time), whether a is the one kept: agentotel's own,
-- else the earlier.
CREATE OR REPLACE TEMP MACRO agentotel_preferred(own_a, start_a, span_a, own_b, start_b, span_b) AS
    (own_a AND NOT own_b) OR (own_a = own_b AND (start_a < start_b OR (start_a = start_b AND span_a < span_b)));
