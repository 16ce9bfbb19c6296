"""A seeded corpus of realistic agent runs, as real OpenTelemetry SDK spans (`ReadableSpan`).

Every span is made by an SDK `TracerProvider` (seeded id generator, explicit timestamps), so the
benchmarks encode, export and query exactly what an instrumented program would hand its exporter.
The same seed gives the same corpus, span for span.

What a run looks like (three agent archetypes: a coding assistant, a support bot, a research agent):
- an `invoke_agent {agent}` root (INTERNAL) carrying the run's attribution, task, output, metadata and
  environment snapshot; 10 to 200 steps below it (log-uniform, so most runs are short);
- `chat {model}` spans (CLIENT) whose `gen_ai.input.messages` is the whole conversation so far in the
  GenAI JSON shape: the same system prompt and the same growing prefix re-sent every turn, trimmed by
  whole turns past a context budget, as agents do; tool definitions on every call; tokens, cache
  reads and cost; a few calls fail (rate limits, timeouts) and are retried;
- `execute_tool {tool}` spans with JSON arguments and results from a few bytes to tens of KB (file
  reads, test logs, web pages, order records), about 3 % of them failing with a recorded exception;
- retrieval tools: an `execute_tool` span over a `retrieval {data_source}` span (sometimes with an
  `embeddings {model}` span) returning scored documents; delegation tools: a nested
  `invoke_agent` sub-run with its own run id;
- several services, users, sessions, models and providers; runs overlap in time over days.

`iter_chunks(n)` yields the spans a chunk at a time (1,000,000 spans never need to be in memory at
once); `generate(n)` returns a list; `write_store(dir, n)` / `cached_store(n)` put a corpus into an
agentotel store for query benchmarks. `stats(spans)` summarises a corpus; `stats_markdown()` is the
summary of the standard corpus that RESULTS.md shows.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import random
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from opentelemetry import trace
from opentelemetry.sdk.resources import (
    SERVICE_NAME,
    SERVICE_VERSION,
    TELEMETRY_SDK_LANGUAGE,
    TELEMETRY_SDK_NAME,
    TELEMETRY_SDK_VERSION,
    Resource,
)
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentotel import __version__ as _agentotel_version
from agentotel import semconv as sc

__all__ = [
    "DEFAULT_SEED",
    "STANDARD_SIZE",
    "iter_chunks",
    "generate",
    "write_store",
    "cached_store",
    "stats",
    "format_stats",
    "stats_markdown",
]

DEFAULT_SEED = 0
STANDARD_SIZE = 20_000
"""Spans in the standard corpus: the one the store benchmarks use in full mode and RESULTS.md describes."""

MIN_STEPS, MAX_STEPS = 10, 200
CONTEXT_BUDGET_CHARS = 96_000
"""Past this many characters of history a run drops its oldest whole turns (~24k tokens kept)."""
HISTORY_RESULT_CHARS = 16_000
"""Agents cut long tool results before putting them back into the conversation."""
TOOL_ERROR_RATE = 0.03
CHAT_ERROR_RATE = 0.006
RUN_ERROR_RATE = 0.02

_EPOCH_NS = 1_767_600_000 * 10**9  # 2026-01-05 08:00 UTC: the corpus's first run
_MEAN_RUN_GAP_S = 25.0  # runs start ~25 s apart, so several overlap at any time

# ---------------------------------------------------------------------------------------------- text

_WORDS = """
the of and to a in is that for it as with be on not this are by from at or have an was can will if
but which we all use when each more one their so there what has been these into only its also than
then should would other any must about may new time data file value first user request function
return error result test code line model tool call run agent query order customer account service
config server client response message system input output document page search index table field
type name path list item update change check need make get set add remove build deploy fix issue
version module package import class method string number true false null default option support
please thanks help sure here let me look see found following based because however now just like
step next done first last before after again still already without within between under over across
retry timeout limit token cache memory disk network api key secret log debug info warning status
report summary analysis review source paper result study method approach performance latency throughput
""".split()
_CUM_WEIGHTS = list(itertools.accumulate(1.0 / (rank + 1) ** 0.9 for rank in range(len(_WORDS))))

_CODE_TEMPLATES = (
    "{i}def {a}_{b}(self, {c}, {d}=None):",
    "{i}    return self.{a}.{b}({c})",
    "{i}if {a} is None:",
    "{i}    raise ValueError(f\"{a} {b}: {{{c}!r}}\")",
    "{i}for {a} in {b}_{c}:",
    "{i}{a}_{b} = {c}.get(\"{d}\", {{}})",
    "{i}# {a} {b} {c} {d}",
    "{i}logger.debug(\"{a} %s {b}\", {c})",
    "{i}self.{a}_{b}.append({c})",
    "{i}with open({a}_path) as {b}:",
    "{i}result = await {a}.{b}({c}={d})",
    "",
)


class _Text:
    """Seeded pseudo-text: Zipf-weighted English and code, so it compresses like the real thing."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def words(self, n: int) -> list[str]:
        return self.rng.choices(_WORDS, cum_weights=_CUM_WEIGHTS, k=max(1, n))

    def prose(self, chars: int) -> str:
        words = self.words(chars // 6 + 1)
        out: list[str] = []
        i = 0
        while i < len(words):
            n = self.rng.randint(6, 22)
            sentence = words[i : i + n]
            sentence[0] = sentence[0].capitalize()
            out.append(" ".join(sentence) + ".")
            i += n
        return " ".join(out)

    def code(self, lines: int) -> str:
        rng = self.rng
        words = self.words(lines * 4)
        templates = rng.choices(_CODE_TEMPLATES, k=lines)
        indents = rng.choices(("", "    ", "        ", "            "), weights=(1, 4, 4, 2), k=lines)
        return "\n".join(
            t.format(i=ind, a=words[4 * j], b=words[4 * j + 1], c=words[4 * j + 2], d=words[4 * j + 3])
            for j, (t, ind) in enumerate(zip(templates, indents))
        )

    def ident(self, n: int = 2) -> str:
        return "_".join(self.words(n))

    def path(self) -> str:
        a, b, c = self.words(3)
        return f"src/{a}/{b}_{c}.py"

    def size(self, median: float, sigma: float, low: int, high: int) -> int:
        """A log-normal size: most values near the median, a long tail up to `high`."""
        return int(min(high, max(low, self.rng.lognormvariate(math.log(median), sigma))))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ------------------------------------------------------------------------------------ the agents


@dataclass(frozen=True)
class _Model:
    provider: str
    name: str
    response_name: str
    price_in: float  # USD per million tokens
    price_out: float
    price_cache: float
    reasoning: bool = False


_MODELS = {
    m.name: m
    for m in (
        _Model("openai", "gpt-4.1", "gpt-4.1-2025-04-14", 2.0, 8.0, 0.5),
        _Model("openai", "gpt-4.1-mini", "gpt-4.1-mini-2025-04-14", 0.4, 1.6, 0.1),
        _Model("openai", "gpt-4o", "gpt-4o-2024-08-06", 2.5, 10.0, 1.25),
        _Model("openai", "o4-mini", "o4-mini-2025-04-16", 1.1, 4.4, 0.275, reasoning=True),
        _Model("anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4-20250514", 3.0, 15.0, 0.3),
        _Model("anthropic", "claude-3-5-haiku-20241022", "claude-3-5-haiku-20241022", 0.8, 4.0, 0.08),
    )
}
_SERVERS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}


@dataclass(frozen=True)
class _ToolSpec:
    name: str
    kind: str  # which generator makes its arguments and result
    weight: float
    data_source: str | None = None  # a retrieval tool: its data source


@dataclass(frozen=True)
class _AgentSpec:
    name: str
    service: str
    models: tuple[str, ...]
    tools: tuple[_ToolSpec, ...]
    sub_agent: str | None = None
    version: str = "1.4.2"


_AGENTS = (
    _AgentSpec(
        "coding-assistant",
        "devbox-agent",
        ("claude-sonnet-4-20250514", "gpt-4.1", "o4-mini"),
        (
            _ToolSpec("read_file", "read_file", 5),
            _ToolSpec("grep", "grep", 3),
            _ToolSpec("list_dir", "list_dir", 1.5),
            _ToolSpec("edit_file", "edit_file", 3),
            _ToolSpec("run_tests", "run_tests", 2),
            _ToolSpec("shell", "shell", 1.5),
            _ToolSpec("search_docs", "retrieve", 0.7, data_source="code-docs"),
            _ToolSpec("delegate_review", "delegate", 0.25),
        ),
        sub_agent="code-reviewer",
    ),
    _AgentSpec(
        "support-bot",
        "support-api",
        ("gpt-4.1-mini", "claude-3-5-haiku-20241022", "gpt-4o"),
        (
            _ToolSpec("search_kb", "retrieve", 4, data_source="kb-articles"),
            _ToolSpec("get_order", "record", 3),
            _ToolSpec("get_customer", "record", 2),
            _ToolSpec("issue_refund", "action", 0.8),
            _ToolSpec("send_email", "email", 1),
        ),
    ),
    _AgentSpec(
        "research-agent",
        "research-worker",
        ("gpt-4.1", "claude-sonnet-4-20250514", "o4-mini"),
        (
            _ToolSpec("web_search", "web_search", 4),
            _ToolSpec("fetch_page", "fetch_page", 3),
            _ToolSpec("search_papers", "retrieve", 2, data_source="papers-index"),
            _ToolSpec("write_note", "edit_file", 1),
            _ToolSpec("delegate_summary", "delegate", 0.3),
        ),
        sub_agent="summarizer",
    ),
)
_AGENT_WEIGHTS = (5, 3, 2)
_SUB_AGENTS = {
    "code-reviewer": _AgentSpec(
        "code-reviewer", "devbox-agent", ("claude-3-5-haiku-20241022", "gpt-4.1-mini"),
        (_ToolSpec("read_file", "read_file", 3), _ToolSpec("grep", "grep", 2)),
    ),
    "summarizer": _AgentSpec(
        "summarizer", "research-worker", ("gpt-4.1-mini",), (_ToolSpec("fetch_page", "fetch_page", 1),),
    ),
}
_USERS = tuple(f"user-{i:03d}@example.com" for i in range(48)) + ("ci-bot", "nightly-scheduler")
_TRIGGERS = ("api", "cli", "ci", "schedule")


@dataclass
class _AgentAssets:
    """What stays the same across every run of one agent in a corpus: prompt, tool schemas, environment."""

    system_prompt: str
    system_message: str  # the system prompt as an input message (OpenAI-style requests)
    system_instructions: str  # as gen_ai.system_instructions parts (Anthropic-style requests)
    tool_definitions: str
    tool_descriptions: dict[str, str]
    schema_hashes: dict[str, str]
    environments: list[tuple[str, str]]  # (snapshot JSON, hash): a couple of deploys per agent


def _make_assets(spec: _AgentSpec, seed: int) -> _AgentAssets:
    rng = random.Random(f"agentotel-corpus-assets:{seed}:{spec.name}")
    text = _Text(rng)
    prompt = f"You are {spec.name}. " + text.prose(text.size(4500, 0.4, 1500, 12000))
    definitions, descriptions, hashes = [], {}, {}
    for tool in spec.tools:
        description = text.prose(rng.randint(80, 400))
        props = {
            text.ident(): {"type": rng.choice(("string", "integer", "boolean")), "description": text.prose(60)}
            for _ in range(rng.randint(1, 5))
        }
        schema = {"type": "object", "properties": props, "required": list(props)[:1]}
        definitions.append({"type": "function", "name": tool.name, "description": description, "parameters": schema})
        descriptions[tool.name] = description
        hashes[tool.name] = hashlib.sha256(_dumps(schema).encode()).hexdigest()[:16]
    environments = []
    for deploy in range(2):
        packages = {f"{text.ident(1)}-{text.ident(1)}": f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 9)}" for _ in range(45)}
        snapshot = {
            "python": "CPython 3.11.7",
            "os": "debian 12",
            "git": {"commit": hashlib.sha1(f"{spec.name}{deploy}{seed}".encode()).hexdigest(), "branch": "main", "dirty": deploy == 1},
            "lockfile": {"path": "uv.lock", "hash": hashlib.sha256(_dumps(packages).encode()).hexdigest()},
            "packages": packages,
            "config": {"AGENTS.md": hashlib.sha256(prompt.encode()).hexdigest()[:16]},
            "tool_schemas": hashes,
        }
        body = _dumps(snapshot)
        environments.append((body, hashlib.sha256(body.encode()).hexdigest()[:16]))
    return _AgentAssets(
        system_prompt=prompt,
        system_message=_dumps({"role": "system", "parts": [{"type": "text", "content": prompt}]}),
        system_instructions=_dumps([{"type": "text", "content": prompt}]),
        tool_definitions=_dumps(definitions),
        tool_descriptions=descriptions,
        schema_hashes=hashes,
        environments=environments,
    )


# ------------------------------------------------------------------------------- SDK plumbing


class _SeededIds(IdGenerator):
    """Span and trace ids from the current run's seeded generator, so ids repeat with the seed."""

    rng: random.Random = random.Random(0)

    def generate_span_id(self) -> int:
        return self.rng.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self.rng.getrandbits(128) or 1


class _Collect(SpanProcessor):
    """Keeps every ended span (what an exporter would be handed), in end order."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)


class _Sdk:
    """One tracer provider per service, sharing the seeded id generator and the collector."""

    def __init__(self) -> None:
        self.ids = _SeededIds()
        self.sink = _Collect()
        self._tracers: dict[tuple[str, str], trace.Tracer] = {}
        self._providers: dict[str, TracerProvider] = {}

    def tracer(self, service: str, scope: str) -> trace.Tracer:
        key = (service, scope)
        tracer = self._tracers.get(key)
        if tracer is None:
            provider = self._providers.get(service)
            if provider is None:
                # Explicit resource and limits: the corpus must not depend on OTEL_* variables.
                resource = Resource(
                    {
                        SERVICE_NAME: service,
                        SERVICE_VERSION: "2026.1.3",
                        TELEMETRY_SDK_LANGUAGE: "python",
                        TELEMETRY_SDK_NAME: "opentelemetry",
                        TELEMETRY_SDK_VERSION: "1.45.2",
                    }
                )
                limits = SpanLimits(
                    max_span_attributes=128,
                    max_events=128,
                    max_links=128,
                    max_event_attributes=128,
                    max_link_attributes=128,
                    max_attribute_length=SpanLimits.UNSET,
                    max_span_attribute_length=SpanLimits.UNSET,
                )
                provider = TracerProvider(
                    sampler=ALWAYS_ON, resource=resource, id_generator=self.ids, span_limits=limits, shutdown_on_exit=False
                )
                provider.add_span_processor(self.sink)
                self._providers[service] = provider
            tracer = self._tracers[key] = provider.get_tracer(scope, _agentotel_version)
        return tracer


# --------------------------------------------------------------------------------- one run


def _raise(exc: BaseException) -> None:
    raise exc


def _caught(exc: BaseException) -> BaseException:
    """The exception with a real traceback, as instrumentation would record it."""
    try:
        _raise(exc)
    except BaseException as caught:  # noqa: BLE001 - we made it
        return caught
    raise AssertionError("unreachable")


_TOOL_ERRORS = (
    (FileNotFoundError, "[Errno 2] No such file or directory"),
    (TimeoutError, "tool call timed out after 30 s"),
    (PermissionError, "[Errno 13] Permission denied"),
    (ValueError, "invalid arguments"),
    (KeyError, "missing field"),
    (ConnectionError, "upstream service unavailable (503)"),
)
_CHAT_ERRORS = (
    ("openai.RateLimitError", "Error code: 429 - rate limit reached for requests"),
    ("anthropic.OverloadedError", "Error code: 529 - overloaded"),
    ("httpx.ReadTimeout", "The read operation timed out"),
)


def _qualname(exc_type: type) -> str:
    module = exc_type.__module__
    return exc_type.__qualname__ if module == "builtins" else f"{module}.{exc_type.__qualname__}"


@dataclass
class _Conversation:
    """The message history an agent re-sends each turn: pre-encoded messages grouped in whole turns."""

    head: list[str]  # system (OpenAI-style) and the task; never dropped
    budget: int
    turns: list[list[str]] = field(default_factory=list)
    chars: int = 0

    def add_turn(self, messages: list[str]) -> None:
        self.turns.append(messages)
        self.chars += sum(len(m) for m in messages)
        # Past the budget, drop whole old turns (keep at least the latest), like a context manager.
        while self.chars > self.budget and len(self.turns) > 1:
            self.chars -= sum(len(m) for m in self.turns.pop(0))

    def encoded(self) -> str:
        return "[" + ",".join(self.head + [m for turn in self.turns for m in turn]) + "]"


class _Run:
    """Builds the spans of one run (and its sub-runs) with explicit clocks; each step is one span."""

    def __init__(self, sdk: _Sdk, assets: dict[str, _AgentAssets], rng: random.Random, start_ns: int, context_budget: int) -> None:
        self.sdk = sdk
        self.context_budget = context_budget
        self.assets = assets
        self.rng = rng
        self.text = _Text(rng)
        self.now = start_ns

    # -- helpers

    def _advance(self, median_s: float, sigma: float = 0.8, low_s: float = 0.001, high_s: float = 120.0) -> int:
        seconds = min(high_s, max(low_s, self.rng.lognormvariate(math.log(median_s), sigma)))
        self.now += int(seconds * 1e9)
        return self.now

    def _id(self, prefix: str, n: int = 24) -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return prefix + "".join(self.rng.choices(alphabet, k=n))

    # -- a run

    def run(self, spec: _AgentSpec, budget: int, *, parent: trace.Span | None = None, parent_run: dict | None = None) -> None:
        """An `invoke_agent` root and exactly `budget` step spans below it."""
        rng, text = self.rng, self.text
        assets = self.assets[spec.name]
        tracer = self.sdk.tracer(spec.service, "agentotel")
        model = _MODELS[rng.choice(spec.models)]
        run_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if parent_run is None:
            user_index = min(int(rng.paretovariate(1.2)) - 1, len(_USERS) - 1)
            user = _USERS[user_index]
            session = f"sess-{user_index:03d}-{rng.randrange(1 + user_index % 7)}"
            trigger = "ci" if user == "ci-bot" else "schedule" if user == "nightly-scheduler" else rng.choice(_TRIGGERS[:2])
        else:
            user, session, trigger = parent_run["user"], parent_run["session"], parent_run["trigger"]
        attribution = {sc.AGENTOTEL_RUN_ID: run_id, sc.ENDUSER_ID: user, sc.GEN_AI_CONVERSATION_ID: session}
        task = text.prose(text.size(400, 0.9, 40, 6000))
        env_body, env_hash = assets.environments[0 if rng.random() < 0.8 else 1]
        root_attrs = {
            sc.GEN_AI_OPERATION_NAME: "invoke_agent",
            sc.GEN_AI_AGENT_NAME: spec.name,
            sc.GEN_AI_AGENT_VERSION: f"{spec.name}@{spec.version}",
            sc.AGENTOTEL_RUN_NAME: spec.name.replace("-", "_"),
            sc.AGENTOTEL_RUN_TRIGGER: trigger,
            sc.AGENTOTEL_RUN_TASK: _dumps(task),
            sc.AGENTOTEL_ENV_HASH: env_hash,
            sc.AGENTOTEL_ENV_SNAPSHOT: env_body,
            **attribution,
        }
        if parent_run is not None:
            root_attrs[sc.AGENTOTEL_RUN_PARENT_ID] = parent_run["run_id"]
        if rng.random() < 0.4:
            root_attrs[sc.AGENTOTEL_RUN_METADATA] = _dumps({"ticket": self._id("T-", 6), "priority": rng.choice(("low", "normal", "high"))})
        ctx = trace.set_span_in_context(parent) if parent is not None else None
        root = tracer.start_span(f"invoke_agent {spec.name}", context=ctx, kind=SpanKind.INTERNAL, attributes=root_attrs, start_time=self.now)
        self._advance(0.02, low_s=0.001)

        head = [] if model.provider == "anthropic" else [assets.system_message]
        head.append(_dumps({"role": "user", "parts": [{"type": "text", "content": task}]}))
        state = {
            "spec": spec, "assets": assets, "model": model, "attribution": attribution, "root": root,
            "conversation": _Conversation(head, self.context_budget), "prev_input_tokens": 0,
            "run": {"run_id": run_id, "user": user, "session": session, "trigger": trigger},
        }
        answer = self._loop(state, budget)
        failed = parent_run is None and rng.random() < RUN_ERROR_RATE
        if failed:
            error = rng.choice(("agentotel.demo.MaxStepsExceeded", "TimeoutError", "RuntimeError"))
            root.set_attribute(sc.ERROR_TYPE, error)
            root.set_status(Status(StatusCode.ERROR, "the agent gave up"))
        else:
            root.set_attribute(sc.AGENTOTEL_RUN_OUTPUT, _dumps({"answer": answer}))
        root.end(end_time=self._advance(0.005, low_s=0.001))

    def _loop(self, state: dict, budget: int) -> str:
        """Model turns and their tool calls until `budget` steps are spent; returns the final answer."""
        rng = self.rng
        spec = state["spec"]
        weights = [t.weight for t in spec.tools]
        while True:
            if budget == 1:
                return self._chat(state, [])
            if rng.random() < CHAT_ERROR_RATE and budget > 2:
                self._chat(state, [], fail=True)
                budget -= 1
                continue
            # Leave one step for the final answer; each call costs 1 to 3 steps, a delegation more.
            available = budget - 2
            calls: list[tuple[_ToolSpec, int]] = []
            for _ in range(rng.choices((1, 2, 3), weights=(7, 2, 1))[0]):
                tool = rng.choices(spec.tools, weights=weights)[0]
                cost = 1
                if tool.kind == "retrieve":
                    cost = 2 + (rng.random() < 0.5)
                elif tool.kind == "delegate":
                    cost = 2 + rng.randint(2, 10)
                if tool.kind == "delegate" and spec.sub_agent is None:
                    continue
                if cost > available:
                    continue
                calls.append((tool, cost))
                available -= cost
            if not calls:
                return self._filler(state, budget)
            requested = self._chat(state, calls)
            budget -= 1
            results = [self._tool(state, tool, cost, call_id, arguments) for (tool, cost), (call_id, arguments) in zip(calls, requested)]
            budget -= sum(cost for _tool, cost in calls)
            state["conversation"].add_turn(state["pending_turn"] + results)

    def _filler(self, state: dict, budget: int) -> str:
        """Spend the remaining steps on plain model turns (a short budget left no room for tools)."""
        while budget > 1:
            self._chat(state, [])
            state["conversation"].add_turn(state["pending_turn"])
            budget -= 1
        return self._chat(state, [])

    # -- steps

    def _chat(self, state: dict, calls: list[tuple[_ToolSpec, int]], *, fail: bool = False) -> Any:
        """One `chat {model}` span; returns the (call id, arguments) it asked for, or the answer text."""
        rng, text = self.rng, self.text
        model: _Model = state["model"]
        assets: _AgentAssets = state["assets"]
        conversation: _Conversation = state["conversation"]
        tracer = self.sdk.tracer(state["spec"].service, f"agentotel.{model.provider}")
        input_messages = conversation.encoded()
        attrs: dict[str, Any] = {
            sc.GEN_AI_OPERATION_NAME: "chat",
            sc.GEN_AI_PROVIDER_NAME: model.provider,
            sc.GEN_AI_REQUEST_MODEL: model.name,
            sc.SERVER_ADDRESS: _SERVERS[model.provider],
            sc.SERVER_PORT: 443,
            sc.GEN_AI_REQUEST_MAX_TOKENS: 8192 if model.provider == "anthropic" else 4096,
            sc.GEN_AI_INPUT_MESSAGES: input_messages,
            sc.GEN_AI_TOOL_DEFINITIONS: assets.tool_definitions,
            **state["attribution"],
        }
        if model.provider == "anthropic":
            attrs[sc.GEN_AI_SYSTEM_INSTRUCTIONS] = assets.system_instructions
        if not model.reasoning:
            attrs[sc.GEN_AI_REQUEST_TEMPERATURE] = 0.2
        stream = rng.random() < 0.5
        attrs[sc.GEN_AI_REQUEST_STREAM] = stream
        span = tracer.start_span(
            f"chat {model.name}", context=trace.set_span_in_context(state["root"]), kind=SpanKind.CLIENT,
            attributes=attrs, start_time=self.now,
        )
        if fail:
            error_type, message = rng.choice(_CHAT_ERRORS)
            span.set_attribute(sc.ERROR_TYPE, error_type)
            span.set_status(Status(StatusCode.ERROR, message))
            span.end(end_time=self._advance(0.4, high_s=30))
            self._advance(1.0)  # back-off before the retry
            return None

        parts: list[dict[str, Any]] = []
        if not calls or rng.random() < 0.35:
            parts.append({"type": "text", "content": text.prose(text.size(300 if calls else 900, 0.8, 20, 6000))})
        requested = []
        for tool, _cost in calls:
            call_id = self._id("toolu_01" if model.provider == "anthropic" else "call_", 22)
            arguments = self._arguments(tool)
            requested.append((call_id, arguments))
            parts.append({"type": "tool_call", "id": call_id, "name": tool.name, "arguments": arguments})
        finish = "tool_call" if calls else "stop"
        assistant = {"role": "assistant", "parts": parts}
        output = _dumps([{**assistant, "finish_reason": finish}])

        input_tokens = (len(input_messages) + len(assets.tool_definitions) + (len(assets.system_prompt) if model.provider == "anthropic" else 0)) // 4
        cache_read = int(min(state["prev_input_tokens"], input_tokens) * rng.uniform(0.85, 1.0)) if state["prev_input_tokens"] else 0
        reasoning = text.size(400, 1.0, 0, 8000) if model.reasoning else 0
        output_tokens = len(output) // 4 + reasoning
        state["prev_input_tokens"] = input_tokens
        cost = ((input_tokens - cache_read) * model.price_in + cache_read * model.price_cache + output_tokens * model.price_out) / 1e6
        end = self._advance(1.5 + output_tokens / 80, 0.5, 0.2, 120)
        out_attrs: dict[str, Any] = {
            sc.GEN_AI_RESPONSE_MODEL: model.response_name,
            sc.GEN_AI_RESPONSE_ID: self._id("msg_01" if model.provider == "anthropic" else "chatcmpl-", 24),
            sc.GEN_AI_RESPONSE_FINISH_REASONS: ["tool_use" if calls else "end_turn"] if model.provider == "anthropic" else ["tool_calls" if calls else "stop"],
            sc.GEN_AI_USAGE_INPUT_TOKENS: input_tokens,
            sc.GEN_AI_USAGE_OUTPUT_TOKENS: output_tokens,
            sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: cache_read,
            sc.AGENTOTEL_COST_USD: round(cost, 8),
            sc.GEN_AI_OUTPUT_MESSAGES: output,
        }
        if reasoning:
            out_attrs[sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = reasoning
        if stream:
            out_attrs[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = round(rng.uniform(0.2, 2.5), 3)
        span.set_attributes(out_attrs)
        span.end(end_time=end)
        state["pending_turn"] = [_dumps(assistant)]
        if not calls:
            return parts[0]["content"]
        return requested

    def _arguments(self, tool: _ToolSpec) -> dict[str, Any]:
        rng, text = self.rng, self.text
        kind = tool.kind
        if kind == "read_file":
            return {"path": text.path()}
        if kind == "grep":
            return {"pattern": text.ident(), "path": "src/"}
        if kind == "list_dir":
            return {"path": f"src/{text.ident(1)}"}
        if kind == "edit_file":
            return {"path": text.path(), "old": text.code(rng.randint(1, 8)), "new": text.code(text.size(12, 1.0, 1, 300))}
        if kind == "run_tests":
            return {"target": f"tests/{text.ident(1)}", "verbose": rng.random() < 0.3}
        if kind == "shell":
            return {"command": " ".join(("git", rng.choice(("status", "diff", "log -5")))) if rng.random() < 0.5 else f"python -m {text.ident(1)} --{text.ident(1)}"}
        if kind == "retrieve":
            return {"query": text.prose(text.size(80, 0.6, 10, 600)), "top_k": rng.choice((3, 5, 8))}
        if kind == "record":
            return {"id": self._id("", 10)}
        if kind == "action":
            return {"order_id": self._id("ord_", 12), "amount": round(rng.uniform(5, 400), 2), "reason": text.prose(80)}
        if kind == "email":
            return {"to": rng.choice(_USERS), "subject": text.prose(50), "body": text.prose(text.size(800, 0.6, 100, 5000))}
        if kind == "web_search":
            return {"q": " ".join(text.words(rng.randint(2, 8)))}
        if kind == "fetch_page":
            return {"url": f"https://{text.ident(1)}.example.org/{text.ident(1)}/{text.ident(1)}"}
        if kind == "delegate":
            return {"instructions": text.prose(text.size(500, 0.6, 50, 3000))}
        raise AssertionError(kind)

    def _result(self, tool: _ToolSpec) -> Any:
        """A JSON-able tool result: a few bytes to tens of KB depending on the tool."""
        rng, text = self.rng, self.text
        kind = tool.kind
        if kind == "read_file":
            return text.code(text.size(90, 1.0, 3, 1200))
        if kind == "grep":
            return [{"file": text.path(), "line": rng.randint(1, 900), "text": text.code(1)} for _ in range(text.size(6, 1.2, 0, 120))]
        if kind == "list_dir":
            return sorted({text.ident(rng.randint(1, 2)) + rng.choice((".py", ".md", ".json", "/")) for _ in range(text.size(15, 0.8, 1, 150))})
        if kind in ("edit_file", "action"):
            return {"ok": True}
        if kind == "run_tests":
            passed, failed = rng.randint(1, 400), (0 if rng.random() < 0.6 else rng.randint(1, 12))
            return {"passed": passed, "failed": failed, "output": text.code(text.size(40, 1.2, 2, 700))}
        if kind == "shell":
            return {"exit_code": 0, "stdout": text.code(text.size(15, 1.2, 0, 600)), "stderr": ""}
        if kind == "record":
            return {
                "id": self._id("", 10), "status": rng.choice(("shipped", "pending", "delivered", "cancelled")),
                "customer": rng.choice(_USERS), "created": "2025-12-%02d" % rng.randint(1, 28),
                "items": [{"sku": self._id("SKU-", 8), "name": text.prose(30), "qty": rng.randint(1, 4), "price": round(rng.uniform(3, 300), 2)} for _ in range(text.size(3, 0.8, 1, 30))],
                "notes": text.prose(text.size(150, 1.0, 0, 2000)),
            }
        if kind == "email":
            return "sent"
        if kind == "web_search":
            return [{"title": text.prose(60), "url": f"https://{text.ident(1)}.example.com/{text.ident(2)}", "snippet": text.prose(220)} for _ in range(rng.randint(3, 10))]
        if kind == "fetch_page":
            return text.prose(text.size(5000, 1.0, 200, 60_000))
        raise AssertionError(kind)

    def _documents(self, k: int) -> list[dict[str, Any]]:
        text = self.text
        return [
            {"id": self._id("doc-", 10), "score": round(0.95 - 0.05 * i - self.rng.random() * 0.04, 4), "content": text.prose(text.size(900, 0.6, 120, 6000))}
            for i in range(k)
        ]

    def _tool(self, state: dict, tool: _ToolSpec, cost: int, call_id: str, arguments: dict[str, Any]) -> str:
        """An `execute_tool` span (with a retrieval or a sub-run below it for those tools); returns the tool message."""
        rng = self.rng
        spec: _AgentSpec = state["spec"]
        assets: _AgentAssets = state["assets"]
        tracer = self.sdk.tracer(spec.service, "agentotel")
        attrs = {
            sc.GEN_AI_OPERATION_NAME: "execute_tool",
            sc.GEN_AI_TOOL_NAME: tool.name,
            sc.GEN_AI_TOOL_TYPE: "function",
            sc.GEN_AI_TOOL_CALL_ID: call_id,
            sc.GEN_AI_TOOL_DESCRIPTION: assets.tool_descriptions[tool.name],
            sc.AGENTOTEL_TOOL_SCHEMA_HASH: assets.schema_hashes[tool.name],
            sc.GEN_AI_TOOL_CALL_ARGUMENTS: _dumps(arguments),
            **state["attribution"],
        }
        self._advance(0.002, low_s=0.0001)
        span = tracer.start_span(f"execute_tool {tool.name}", context=trace.set_span_in_context(state["root"]), kind=SpanKind.INTERNAL, attributes=attrs, start_time=self.now)
        result: Any
        if tool.kind == "retrieve":
            result = self._retrieval(state, span, tool, arguments, embeddings=cost == 3)
        elif tool.kind == "delegate":
            sub_spec = _SUB_AGENTS[spec.sub_agent or ""]
            sub = dict(state["run"])
            # The tool span and the sub-run's root are two of the call's steps; the rest are the sub-run's.
            self.run(sub_spec, cost - 2, parent=span, parent_run=sub)
            result = {"summary": self.text.prose(self.text.size(600, 0.6, 80, 4000))}
        else:
            result = None
        if tool.kind not in ("retrieve", "delegate") and rng.random() < TOOL_ERROR_RATE:
            exc_type, message = rng.choice(_TOOL_ERRORS)
            exc = _caught(exc_type(message))
            end = self._advance(0.05, 1.2, 0.001, 30)
            span.record_exception(exc, timestamp=end)
            span.set_attribute(sc.ERROR_TYPE, _qualname(exc_type))
            span.set_status(Status(StatusCode.ERROR, f"{exc_type.__name__}: {message}"))
            span.end(end_time=end)
            response = f"Error: {exc_type.__name__}: {message}"
        else:
            if result is None:
                result = self._result(tool)
            encoded = _dumps(result)
            span.set_attribute(sc.GEN_AI_TOOL_CALL_RESULT, encoded)
            span.end(end_time=self._advance(0.08, 1.3, 0.0005, 60))
            response = encoded if len(encoded) <= HISTORY_RESULT_CHARS else encoded[:HISTORY_RESULT_CHARS] + "… [truncated]"
        return _dumps({"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": response}]})

    def _retrieval(self, state: dict, parent: trace.Span, tool: _ToolSpec, arguments: dict, *, embeddings: bool) -> list:
        spec: _AgentSpec = state["spec"]
        context = trace.set_span_in_context(parent)
        if embeddings:
            attrs = {
                sc.GEN_AI_OPERATION_NAME: "embeddings",
                sc.GEN_AI_PROVIDER_NAME: "openai",
                sc.GEN_AI_REQUEST_MODEL: "text-embedding-3-small",
                sc.GEN_AI_EMBEDDINGS_DIMENSION_COUNT: 1536,
                sc.GEN_AI_USAGE_INPUT_TOKENS: len(arguments["query"]) // 4 + 1,
                sc.AGENTOTEL_COST_USD: round((len(arguments["query"]) // 4 + 1) * 0.02 / 1e6, 10),
                **state["attribution"],
            }
            span = self.sdk.tracer(spec.service, "agentotel.openai").start_span(
                "embeddings text-embedding-3-small", context=context, kind=SpanKind.CLIENT, attributes=attrs, start_time=self.now
            )
            span.end(end_time=self._advance(0.12, 0.5, 0.02, 5))
        tracer = self.sdk.tracer(spec.service, "agentotel")
        documents = self._documents(arguments["top_k"])
        attrs = {
            sc.GEN_AI_OPERATION_NAME: "retrieval",
            sc.GEN_AI_DATA_SOURCE_ID: tool.data_source,
            sc.GEN_AI_RETRIEVAL_QUERY_TEXT: arguments["query"],
            sc.GEN_AI_RETRIEVAL_DOCUMENTS: _dumps(documents),
            **state["attribution"],
        }
        span = tracer.start_span(f"retrieval {tool.data_source}", context=context, kind=SpanKind.INTERNAL, attributes=attrs, start_time=self.now)
        span.end(end_time=self._advance(0.08, 0.6, 0.005, 5))
        return documents


# ------------------------------------------------------------------------------------ the corpus


def _run_sizes(n_spans: int, seed: int) -> Iterator[tuple[int, int]]:
    """(run index, spans in that run) until exactly `n_spans`; every run has 10-200 steps but maybe the last."""
    index, remaining = 0, n_spans
    while remaining > 0:
        rng = random.Random(f"agentotel-corpus-size:{seed}:{index}")
        size = 1 + int(math.exp(rng.uniform(math.log(MIN_STEPS), math.log(MAX_STEPS + 1))))
        size = min(size, MAX_STEPS + 1)
        if remaining <= MAX_STEPS + 1:
            size = remaining
        elif remaining - size < MIN_STEPS + 1:
            size = remaining - (MIN_STEPS + 1)
        yield index, size
        remaining -= size
        index += 1


def iter_chunks(
    n_spans: int,
    *,
    seed: int = DEFAULT_SEED,
    chunk_size: int = 10_000,
    context_budget_chars: int = CONTEXT_BUDGET_CHARS,
) -> Iterator[list[ReadableSpan]]:
    """Exactly `n_spans` spans of whole runs, a list of about `chunk_size` at a time (runs never split).

    Memory stays at one chunk, so 1,000,000 spans can be streamed into a store or an encoder.
    `context_budget_chars` caps the history a chat re-sends; the chat inputs are most of the corpus's
    bytes (about 24 KB a span on average with the default), so a smaller budget makes a lighter corpus
    of the same shape for benchmarks that need many spans more than big payloads.
    """
    sdk = _Sdk()
    assets = {spec.name: _make_assets(spec, seed) for spec in (*_AGENTS, *_SUB_AGENTS.values())}
    start_ns = _EPOCH_NS
    for index, size in _run_sizes(n_spans, seed):
        rng = random.Random(f"agentotel-corpus-run:{seed}:{index}")
        sdk.ids.rng = rng
        start_ns += int(rng.expovariate(1.0 / _MEAN_RUN_GAP_S) * 1e9)
        spec = rng.choices(_AGENTS, weights=_AGENT_WEIGHTS)[0]
        _Run(sdk, assets, rng, start_ns, context_budget_chars).run(spec, size - 1)
        if len(sdk.sink.spans) >= chunk_size:
            yield sdk.sink.spans
            sdk.sink.spans = []
    if sdk.sink.spans:
        yield sdk.sink.spans
        sdk.sink.spans = []


def generate(n_spans: int, *, seed: int = DEFAULT_SEED, context_budget_chars: int = CONTEXT_BUDGET_CHARS) -> list[ReadableSpan]:
    """Exactly `n_spans` spans of whole runs, in the order an exporter would receive them."""
    return [span for chunk in iter_chunks(n_spans, seed=seed, context_budget_chars=context_budget_chars) for span in chunk]


def write_store(
    directory: str | os.PathLike[str],
    n_spans: int,
    *,
    seed: int = DEFAULT_SEED,
    context_budget_chars: int = CONTEXT_BUDGET_CHARS,
    batch_size: int = 512,
) -> Path:
    """The corpus written into an agentotel store at `directory` (through `StoreWriter`, folded to Parquet)."""
    from agentotel.store import StoreWriter, spans_to_batch

    directory = Path(directory)
    writer = StoreWriter(directory)
    try:
        for chunk in iter_chunks(n_spans, seed=seed, context_budget_chars=context_budget_chars):
            for i in range(0, len(chunk), batch_size):
                writer.append(spans_to_batch(chunk[i : i + batch_size]))
    finally:
        writer.close()
    return directory


def cached_store(
    n_spans: int,
    *,
    seed: int = DEFAULT_SEED,
    context_budget_chars: int = CONTEXT_BUDGET_CHARS,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """A store holding the corpus, built on first use and reused after (large stores take minutes).

    Keyed by size, seed, budget and the store's schema version, under `cache_dir` (default: the
    system temp folder). A build that did not finish is discarded and redone.
    """
    from agentotel.store import SCHEMA_VERSION

    base = Path(cache_dir) if cache_dir is not None else Path(tempfile.gettempdir()) / "agentotel-bench-corpus"
    directory = base / f"spans{n_spans}-seed{seed}-ctx{context_budget_chars}-schema{SCHEMA_VERSION}"
    done = directory / ".complete"
    if done.exists():
        return directory
    shutil.rmtree(directory, ignore_errors=True)
    write_store(directory, n_spans, seed=seed, context_budget_chars=context_budget_chars)
    done.write_text(f"{n_spans}\n")
    return directory


# ------------------------------------------------------------------------------------ statistics


def _percentiles(values: Sequence[int]) -> dict[str, int]:
    if not values:
        return {"p50": 0, "p90": 0, "p99": 0, "max": 0}
    ordered = sorted(values)

    def at(q: float) -> int:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {"p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": ordered[-1]}


def stats(spans: Iterable[ReadableSpan]) -> dict[str, Any]:
    """Counts by span type, runs and their steps, users, sessions, models, errors, payload sizes."""
    by_type: dict[str, int] = {}
    payload_sizes: dict[str, list[int]] = {}
    steps_per_trace: dict[int, int] = {}
    users, sessions, models, runs = set(), set(), set(), set()
    errors = {"execute_tool": 0, "chat": 0, "invoke_agent": 0}
    total_payload = total_attr = n = 0
    for span in spans:
        n += 1
        attrs = span.attributes or {}
        operation = str(attrs.get(sc.GEN_AI_OPERATION_NAME, "other"))
        by_type[operation] = by_type.get(operation, 0) + 1
        if operation != "invoke_agent" or span.parent is not None:
            steps_per_trace[span.context.trace_id] = steps_per_trace.get(span.context.trace_id, 0) + 1
        else:
            steps_per_trace.setdefault(span.context.trace_id, 0)
        users.add(attrs.get(sc.ENDUSER_ID))
        sessions.add(attrs.get(sc.GEN_AI_CONVERSATION_ID))
        runs.add(attrs.get(sc.AGENTOTEL_RUN_ID))
        if sc.GEN_AI_REQUEST_MODEL in attrs:
            models.add(attrs[sc.GEN_AI_REQUEST_MODEL])
        if span.status.status_code is StatusCode.ERROR and operation in errors:
            errors[operation] += 1
        payload = 0
        for key, value in attrs.items():
            size = len(value.encode()) if isinstance(value, str) else 8
            total_attr += size
            if key in sc.PAYLOAD_COLUMNS:
                payload += size
        total_payload += payload
        payload_sizes.setdefault(operation, []).append(payload)
    all_payloads = [s for sizes in payload_sizes.values() for s in sizes]
    return {
        "spans": n,
        "spans_by_type": dict(sorted(by_type.items(), key=lambda kv: -kv[1])),
        "runs": len(runs - {None}),
        "traces": len(steps_per_trace),
        "steps_per_trace": _percentiles(list(steps_per_trace.values())),
        "users": len(users - {None}),
        "sessions": len(sessions - {None}),
        "models": sorted(models),
        "error_rate": {op: round(errors[op] / by_type[op], 4) for op in errors if by_type.get(op)},
        "payload_bytes_per_span": _percentiles(all_payloads),
        "payload_bytes_by_type": {op: _percentiles(sizes) for op, sizes in sorted(payload_sizes.items())},
        "payload_bytes_total": total_payload,
        "attribute_bytes_total": total_attr,
        "mean_attribute_bytes_per_span": round(total_attr / n) if n else 0,
    }


def format_stats(data: dict[str, Any], *, title: str) -> str:
    """Corpus statistics as Markdown."""
    lines = [
        f"{title}: {data['spans']:,} spans, {data['runs']:,} runs ({data['traces']:,} traces; sub-agent runs share their parent's trace), "
        f"{data['users']} users, {data['sessions']} sessions, models: {', '.join(data['models'])}.",
        "",
        f"- Steps per trace: p50 {data['steps_per_trace']['p50']}, p90 {data['steps_per_trace']['p90']}, "
        f"p99 {data['steps_per_trace']['p99']}, max {data['steps_per_trace']['max']}",
        "- Spans by type: " + ", ".join(f"{k} {v:,}" for k, v in data["spans_by_type"].items()),
        "- Error rate: " + ", ".join(f"{k} {v:.1%}" for k, v in data["error_rate"].items()),
        f"- Attribute bytes (all string attributes, UTF-8): {data['attribute_bytes_total']:,} total, "
        f"{data['mean_attribute_bytes_per_span']:,} per span on average; payload attributes "
        f"(messages, tool arguments/results, retrieval query/documents, run task/output): {data['payload_bytes_total']:,}",
        "",
        "| payload bytes per span | p50 | p90 | p99 | max |",
        "|---|---|---|---|---|",
    ]
    rows = [("all spans", data["payload_bytes_per_span"])] + list(data["payload_bytes_by_type"].items())
    for name, p in rows:
        lines.append(f"| {name} | {p['p50']:,} | {p['p90']:,} | {p['p99']:,} | {p['max']:,} |")
    return "\n".join(lines) + "\n"


def stats_markdown(n_spans: int = STANDARD_SIZE, seed: int = DEFAULT_SEED) -> str:
    """The statistics of the standard corpus, as RESULTS.md shows them."""
    data = stats(span for chunk in iter_chunks(n_spans, seed=seed) for span in chunk)
    return format_stats(data, title=f"Standard corpus (`benchmarks.corpus`, seed={seed})")


if __name__ == "__main__":
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Print the statistics of a generated corpus.")
    parser.add_argument("--spans", type=int, default=STANDARD_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()
    started = time.perf_counter()
    print(stats_markdown(args.spans, args.seed))
    print(f"({time.perf_counter() - started:.1f} s)")
