"""The harness layers a finding names as the place to fix (ARCHITECTURE.md, "Findings"): in a module of their own, so
the pytest plugin (loaded by every pytest run where agentotel is installed) declares its markers without importing the
detectors, the store, pyarrow and DuckDB (~0.6 s a pytest start)."""

LAYERS = ("prompt", "tool", "workflow", "memory", "model", "product")
