-- agentotel_step_type(operation, duplicate): the trajectory step type of a span (llm, tool, retrieval,
-- embedding, agent), or NULL when the span is not a step: transport spans such as HTTP (no GenAI
-- operation), and a client SDK's own duplicate of a model call agentotel recorded (`duplicate`, see
-- macro_duplicates.sql).
CREATE OR REPLACE TEMP MACRO agentotel_step_type(operation, duplicate) AS
    CASE
        WHEN duplicate THEN NULL
        WHEN operation IN ('chat', 'text_completion', 'generate_content') THEN 'llm'
        WHEN operation = 'execute_tool' THEN 'tool'
        WHEN operation = 'retrieval' THEN 'retrieval'
        WHEN operation = 'embeddings' THEN 'embedding'
        WHEN operation IN ('invoke_agent', 'create_agent') THEN 'agent'
    END
