-- agentotel_step_type(operation, scope_name): the trajectory step type of a span (llm, tool, retrieval,
-- embedding, agent), or NULL when the span is not a step (transport spans such as HTTP, and a client
-- SDK's own duplicate span of a model call, recognised by its instrumentation scope).
CREATE OR REPLACE TEMP MACRO agentotel_step_type(operation, scope_name) AS
    CASE
        WHEN list_contains(getvariable('EXCLUDED_SCOPES'), scope_name) THEN NULL
        WHEN operation IN ('chat', 'text_completion', 'generate_content') THEN 'llm'
        WHEN operation = 'execute_tool' THEN 'tool'
        WHEN operation = 'retrieval' THEN 'retrieval'
        WHEN operation = 'embeddings' THEN 'embedding'
        WHEN operation IN ('invoke_agent', 'create_agent') THEN 'agent'
    END
