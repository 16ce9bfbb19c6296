-- agentotel_duplicates(scope_name, parent_operation, parent_scope): whether a span is a client SDK's own
-- span of a model call that agentotel also recorded — its scope is one of EXCLUDED_SCOPES (the
-- anthropic SDK's, say) and its parent is an agentotel model-call span. Without such a parent (agentotel's
-- patches off) the SDK span is the only record of the call and counts. The providers' rule.
CREATE OR REPLACE TEMP MACRO agentotel_duplicates(scope_name, parent_operation, parent_scope) AS
    coalesce(
        list_contains(getvariable('EXCLUDED_SCOPES'), scope_name)
        AND parent_operation IN ('chat', 'text_completion', 'generate_content', 'embeddings')
        AND starts_with(parent_scope, getvariable('OWN_SCOPE_PREFIX')),
        false)
