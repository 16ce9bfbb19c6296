-- agentotel_model_call(operation): whether a span's operation is a model call (chat, completion,
-- embeddings); agentotel_own_model_call(operation, scope_name): one agentotel recorded.
CREATE OR REPLACE TEMP MACRO agentotel_model_call(operation) AS
    operation IN ('chat', 'text_completion', 'generate_content', 'embeddings');
CREATE OR REPLACE TEMP MACRO agentotel_own_model_call(operation, scope_name) AS
    agentotel_model_call(operation) AND starts_with(scope_name, getvariable('OWN_SCOPE_PREFIX'));
-- agentotel_duplicates(scope_name, operation, parent_operation, parent_scope, wraps_own_call): whether a
-- span is another record of a model call agentotel recorded, so the call counts once:
-- - a client SDK's own span (its scope is one of EXCLUDED_SCOPES, the anthropic SDK's, say) or another
--   instrumentation's model-call span (OpenLLMetry, OpenInference, ...) whose parent is an agentotel
--   model-call span;
-- - another instrumentation's model-call span wrapping one of agentotel's (`wraps_own_call`: one of its
--   children is an agentotel model-call span), when that instrumentation patched the client outside ours.
-- Without an agentotel span next to it (agentotel's patches off) such a span is the only record of the
-- call and counts. The providers' rule.
CREATE OR REPLACE TEMP MACRO agentotel_duplicates(scope_name, operation, parent_operation, parent_scope, wraps_own_call) AS
    coalesce(
        NOT starts_with(scope_name, getvariable('OWN_SCOPE_PREFIX'))
        AND (
            (list_contains(getvariable('EXCLUDED_SCOPES'), scope_name) OR agentotel_model_call(operation))
            AND agentotel_own_model_call(parent_operation, parent_scope)
            OR agentotel_model_call(operation) AND wraps_own_call
        ),
        false)
