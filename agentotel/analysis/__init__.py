"""Reading runs for answers: alignment, diff and detectors over trajectories (never the files).

`detectors.findings(traces, run)` says where and why a run went wrong (the `findings` view, `Traces.findings`
and `agentotel check` use it); `policy.load_policy(agent)` reads what an agent is held to from
pyproject.toml (`[tool.agentotel.check]`) or agentotel.toml.
"""
