"""What `agentotel check` holds a run to: loop thresholds, budgets, forbidden and required tools, per agent.

    # pyproject.toml (or agentotel.toml, with the same keys under [check])
    [tool.agentotel.check]
    max_tool_calls = 20
    forbidden_tools = ["delete_account"]

    [tool.agentotel.check.agents.order-support]   # runs named "order-support" (agentotel.run(name))
    max_cost_usd = 0.05
    required_tools = ["lookup_order"]              # evidence it must gather before answering
    required_before = {update_address = ["check_identity"]}   # and before acting

`load_policy(agent)` finds the nearest agentotel.toml or pyproject.toml from the working directory up
and merges the agent's table over the common one. Budgets and policies are off unless given.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from agentotel._config import ConfigError

__all__ = ["Policy", "load_policy", "policy_file"]


@dataclass(frozen=True)
class Policy:
    """Detector settings and an agent's policy. Budgets (`max_*`) and tool rules are off unless given."""

    repeated_tool_calls: int | None = None  # the same call this many times, whatever came between, is a loop
    repeated_model_requests: int = 2  # the same messages sent to the model this many times
    retry_errors: int = 3  # a tool failing this many times in a row
    max_steps: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    forbidden_tools: tuple[str, ...] = ()  # tools this agent must never call
    required_tools: tuple[str, ...] = ()  # tools whose evidence a final answer needs
    required_before: tuple[tuple[str, tuple[str, ...]], ...] = ()  # tool -> tools that must succeed before it runs
    min_retrieval_score: float | None = None  # retrieved documents scoring below this are no evidence
    ignore: tuple[str, ...] = ()  # finding kinds not to report

    def with_options(self, **options: Any) -> "Policy":
        """This policy with the given settings replaced (None leaves a setting as it is)."""
        return dataclasses.replace(self, **{k: v for k, v in options.items() if v is not None})

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any], *, where: str = "policy") -> "Policy":
        return cls().merged(table, where=where)

    def merged(self, table: Mapping[str, Any], *, where: str = "policy") -> "Policy":
        """This policy with a config table's keys applied (`agents` sub-tables are left out)."""
        known = {f.name: f for f in dataclasses.fields(self)}
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key == "agents":
                continue
            name = key.replace("-", "_")
            if name not in known:
                raise ConfigError(f"{where}: unknown setting {key!r} (known: {', '.join(sorted(known))})")
            default = getattr(Policy(), name)
            if name == "required_before":
                if not isinstance(value, Mapping) or not all(isinstance(v, (list, tuple)) for v in value.values()):
                    raise ConfigError(f"{where}: {key} must be a table of tool = [tools needed first], not {value!r}")
                value = tuple((str(tool), tuple(str(v) for v in needed)) for tool, needed in value.items())
            elif isinstance(default, tuple):
                if isinstance(value, str) or not isinstance(value, (list, tuple)):
                    raise ConfigError(f"{where}: {key} must be a list of names, not {value!r}")
                value = tuple(str(v) for v in value)
            elif not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ConfigError(f"{where}: {key} must be a number, not {value!r}")
            values[name] = value
        return dataclasses.replace(self, **values)


_FILES = (("agentotel.toml", ("check",)), ("pyproject.toml", ("tool", "agentotel", "check")))


def policy_file(start: str | Path | None = None) -> tuple[Path, Mapping[str, Any]] | None:
    """The nearest config file (from `start`, default the working directory, upwards) with a check table."""
    import tomllib

    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name, keys in _FILES:
            path = folder / name
            if not path.is_file():
                continue
            try:
                table: Any = tomllib.loads(path.read_text("utf-8"))
            except (OSError, ValueError) as exc:
                raise ConfigError(f"{path}: cannot read it ({exc})") from None
            for key in keys:
                table = table.get(key) if isinstance(table, Mapping) else None
            if isinstance(table, Mapping):
                return path, table
    return None


def load_policy(agent: str | None = None, *, start: str | Path | None = None) -> Policy:
    """The policy for runs of `agent` (a run name): the config file's common settings, then the agent's."""
    found = policy_file(start)
    if found is None:
        return Policy()
    path, table = found
    policy = Policy().merged(table, where=str(path))
    agents = table.get("agents") or {}
    if agent and isinstance(agents, Mapping) and isinstance(agents.get(agent), Mapping):
        policy = policy.merged(agents[agent], where=f"{path} [agents.{agent}]")
    return policy
