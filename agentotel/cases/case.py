"""Regression cases: a failed run cut at a step into a small, versioned YAML file that tests can replay.

    case = new_case(record, at=3, layer="tool", name="orders-shape-drift")
    case.save("cases/orders-shape-drift.yaml")      # commit it; `Case.load(path)` reads it back

A case holds the input state at the chosen step (the task and the messages the model was sent), the
frozen fixtures (every tool and model response recorded before that step), the environment's key facts,
the harness layer and failure-mode tag, and assertions that can each be checked from a trace alone.
Everything that enters a case goes through the content policy's redaction first.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from agentotel import semconv
from agentotel.cases._model import neutral_from_genai, request_hash, scrub
from agentotel.cases._record import STATUS_MESSAGE, RunRecord
from agentotel.cases._steps import AGENT, LLM, RETRIEVAL, TOOL, is_error, parse_json, recorded, tool_name
from agentotel.cases.detectors import LAYERS, Finding

__all__ = ["Case", "Assertions", "ExpectedCall", "ToolFixture", "RetrievalFixture", "ModelFixture", "CaseError", "new_case", "suggest_cut", "primary_finding", "offline_warnings"]

FORMAT_VERSION = 1
ARGUMENT_MATCHES = ("exact", "subset", "ignore")
REPLAY_KINDS = ("live", "frozen")  # what a replay does with a kind of step (tools, models) at and after the cut
TRAJECTORY_MATCHES = ("strict", "unordered", "subset", "superset")


class CaseError(ValueError):
    """A case cannot be cut or read; the message says why in one line."""


@dataclass
class ExpectedCall:
    """A tool call the run must make; `arguments` compared `exact`, as a `subset`, or `ignore`d."""

    name: str
    arguments: Any = None
    match: str = "exact"


@dataclass
class Assertions:
    """Hard gates, each decided from the replayed run's trace alone. None / empty means "not checked"."""

    final_status: str | None = "ok"
    forbidden_tools: list[str] = field(default_factory=list)
    required_tools: list[str] = field(default_factory=list)
    max_tool_calls: int | None = None
    max_steps: int | None = None
    max_cost_usd: float | None = None
    must_not_repeat: list[str] = field(default_factory=list)  # tool names ("*": any tool) never called twice with the same arguments
    expected_tool_calls: list[ExpectedCall] = field(default_factory=list)
    trajectory_match: str = "superset"  # how expected_tool_calls compare with the calls made
    final_output_contains: list[str] = field(default_factory=list)
    # Text the model must be shown at the failure step (the first model request at or after the cut):
    # what an offline replay (frozen models) can judge when the run departs from the recording there.
    required_evidence: list[str] = field(default_factory=list)
    max_latency_s: float | None = None  # the run's wall time
    # Evidence before action: {tool: [tools that must each have been called before it]}.
    must_call_before: dict[str, list[str]] = field(default_factory=dict)
    # Calls that must never happen: [{tool: NAME or "*", arguments: {key: value or glob}}]; a call whose
    # arguments hold every key with a matching value is forbidden (say, a deploy to "prod-*").
    forbidden_arguments: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ToolFixture:
    """A recorded tool response, served to a call of `name` with equal canonical `arguments`."""

    step: int
    name: str
    arguments: Any
    output: Any = None
    error: str | None = None  # the error the tool raised (its type and message), instead of an output


@dataclass
class RetrievalFixture:
    """Recorded documents, served to a retrieval of `data_source` with an equal `query`.

    What a retrieval span records is the query and the documents as {id, score, content}, so that is
    what a replayed `@retrieval` function returns: a list of those dicts, whatever type it returned live.
    """

    step: int
    data_source: str
    query: Any
    documents: Any = None
    error: str | None = None  # the error the retrieval raised (its type and message), instead of documents


@dataclass
class ModelFixture:
    """A recorded model response, served to the `occurrence`-th request with this `request_hash`."""

    step: int
    request_hash: str
    occurrence: int
    model: str | None
    response: Any  # GenAI output messages
    usage: dict[str, int] = field(default_factory=dict)
    response_id: str | None = None


@dataclass
class Case:
    """A regression case: what the agent saw at the failing step, the world before it, and the gates."""

    name: str
    layer: str
    failure_mode: str | None = None
    description: str | None = None
    agent: str | None = None  # "package.module:function" the pytest plugin replays (called with the task)
    source: dict[str, Any] = field(default_factory=dict)  # run id, trace id, the step cut at, findings
    input: dict[str, Any] = field(default_factory=dict)  # task, messages at the step
    environment: dict[str, Any] = field(default_factory=dict)
    tools: list[ToolFixture] = field(default_factory=list)
    models: list[ModelFixture] = field(default_factory=list)
    retrievals: list[RetrievalFixture] = field(default_factory=list)
    assertions: Assertions = field(default_factory=Assertions)
    policy: str = "strict"  # how replay matches calls with the fixtures (strict | fifo)
    # At and after the cut, per kind of step: `live` runs it for real, `frozen` serves the recording.
    # Before the cut both are always served from the recording (the world up to the failure).
    replay_tools: str = "live"
    replay_models: str = "frozen"
    path: Path | None = field(default=None, compare=False)

    @property
    def at_step(self) -> int | None:
        return self.source.get("at_step")

    @property
    def mode(self) -> str:
        """The old single switch: `frozen` when nothing runs live, else `live`."""
        return "frozen" if (self.replay_tools, self.replay_models) == ("frozen", "frozen") else "live"

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in REPLAY_KINDS:
            raise CaseError(f"mode {value!r} is not live or frozen")
        self.replay_tools = self.replay_models = value

    @property
    def ref(self) -> str:
        """What a replayed run's `agentotel.replay.case` attribute says: the case name."""
        return self.name

    # ---- file form -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        assertions = {k: v for k, v in asdict(self.assertions).items() if v not in (None, [], {}, "")}
        if not self.assertions.expected_tool_calls:
            assertions.pop("trajectory_match", None)
        data: dict[str, Any] = {
            "agentotel_case": FORMAT_VERSION,
            "name": self.name,
            "description": self.description,
            "layer": self.layer,
            "failure_mode": self.failure_mode,
            "agent": self.agent,
            "source": self.source,
            "input": self.input,
            "environment": self.environment,
            "replay": {"tools": self.replay_tools, "models": self.replay_models, "policy": self.policy},
            "fixtures": {
                "tools": [_compact(asdict(t)) for t in self.tools],
                **({"retrievals": [_compact(asdict(r)) for r in self.retrievals]} if self.retrievals else {}),
                "models": [_compact(asdict(m)) for m in self.models],
            },
            "assertions": assertions,
        }
        return {k: v for k, v in data.items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: Path | None = None) -> "Case":
        where = f"{path}: " if path else ""
        if not isinstance(data, Mapping) or "agentotel_case" not in data:
            raise CaseError(f"{where}not an agentotel case (no 'agentotel_case' version key)")
        if int(data["agentotel_case"]) > FORMAT_VERSION:
            raise CaseError(f"{where}case format {data['agentotel_case']} is newer than this agentotel reads ({FORMAT_VERSION})")
        layer = data.get("layer")
        if layer not in LAYERS:
            raise CaseError(f"{where}layer {layer!r} is not one of {', '.join(LAYERS)}")
        raw = dict(data.get("assertions") or {})
        unknown = set(raw) - {f.name for f in fields(Assertions)}
        if unknown:
            raise CaseError(f"{where}unknown assertion(s): {', '.join(sorted(unknown))}")
        try:
            raw["expected_tool_calls"] = [ExpectedCall(**c) for c in raw.get("expected_tool_calls") or ()]
        except TypeError as exc:
            raise CaseError(f"{where}expected_tool_calls: each needs a name, and may have arguments and match ({exc})") from None
        assertions = Assertions(**raw)
        _validate(assertions, where)
        fixtures = data.get("fixtures") or {}
        replay = dict(data.get("replay") or {})
        # `mode` (live | frozen) is the old single switch: it sets both kinds; `tools`/`models` win over it.
        tools_default, models_default = default_replay((data.get("source") or {}).get("at", {}).get("type"))
        if "mode" in replay:
            tools_default = models_default = replay["mode"]
        tools, models = replay.get("tools", tools_default), replay.get("models", models_default)
        if replay.get("policy", "strict") not in ("strict", "fifo") or tools not in REPLAY_KINDS or models not in REPLAY_KINDS:
            raise CaseError(f"{where}replay: policy is strict or fifo; tools and models are live or frozen (got {replay})")
        if not isinstance(assertions.must_call_before, Mapping) or not isinstance(assertions.forbidden_arguments, list):
            raise CaseError(f"{where}must_call_before is {{tool: [tools before it]}}; forbidden_arguments a list of {{tool, arguments}}")
        return cls(
            name=str(data.get("name") or (path.stem if path else "case")),
            layer=layer,
            failure_mode=data.get("failure_mode"),
            description=data.get("description"),
            agent=data.get("agent"),
            source=dict(data.get("source") or {}),
            input=dict(data.get("input") or {}),
            environment=dict(data.get("environment") or {}),
            tools=_fixtures(ToolFixture, fixtures.get("tools"), f"{where}fixtures.tools"),
            models=_fixtures(ModelFixture, fixtures.get("models"), f"{where}fixtures.models"),
            retrievals=_fixtures(RetrievalFixture, fixtures.get("retrievals"), f"{where}fixtures.retrievals"),
            assertions=assertions,
            policy=replay.get("policy", "strict"),
            replay_tools=tools,
            replay_models=models,
            path=path,
        )

    def dumps(self) -> str:
        """The case as YAML text (block strings for long text, keys in a fixed order)."""
        return "# agentotel regression case: edit the assertions freely; fixtures are the recorded world.\n" + yaml.dump(
            self.to_dict(), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None
        )

    def save(self, path: str | Path) -> Path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.dumps(), encoding="utf-8")
        self.path = target
        return target

    @classmethod
    def load(cls, path: str | Path) -> "Case":
        source = Path(path)
        try:
            data = yaml.safe_load(source.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CaseError(f"{source}: cannot read ({exc.strerror or exc})") from None
        except yaml.YAMLError as exc:
            raise CaseError(f"{source}: not valid YAML ({str(exc).splitlines()[0]})") from None
        return cls.from_dict(data, source)


def _fixtures(kind: type, items: Any, where: str) -> list[Any]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise CaseError(f"{where}: expected a list")
    out = []
    for number, item in enumerate(items, 1):
        try:
            out.append(kind(**item))
        except TypeError as exc:
            raise CaseError(f"{where}[{number}]: {exc}") from None
    return out


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    """A fixture without its empty optional fields (`error: null` on every success is noise)."""
    return {k: v for k, v in data.items() if v is not None or k in ("output", "documents")}


def _validate(assertions: Assertions, where: str = "") -> None:
    if assertions.trajectory_match not in TRAJECTORY_MATCHES:
        raise CaseError(f"{where}trajectory_match {assertions.trajectory_match!r} is not one of {', '.join(TRAJECTORY_MATCHES)}")
    for call in assertions.expected_tool_calls:
        if call.match not in ARGUMENT_MATCHES:
            raise CaseError(f"{where}expected call {call.name}: match {call.match!r} is not one of {', '.join(ARGUMENT_MATCHES)}")
    if assertions.final_status not in (None, "ok", "error"):
        raise CaseError(f"{where}final_status {assertions.final_status!r} is not ok or error")


def default_replay(cut_type: str | None) -> tuple[str, str]:
    """(tools, models) a case replays with by default: offline, and running the code the fix is in.

    Cut at a tool (or retrieval) step, the tool is what the fix changes: it runs live while model calls
    are answered from the recording. Cut anywhere else, both are served (no side effects, no network).
    """
    return ("live", "frozen") if cut_type in (TOOL, RETRIEVAL) else ("frozen", "frozen")


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


# ---- cutting a case from a run -----------------------------------------------------------------------


def _cause(finding: Finding) -> int | None:
    """The step where a finding's cause shows: its `index`, else (a finding without one) its first step."""
    if finding.index is not None:
        return finding.index
    return finding.steps[0] if finding.steps else None


def primary_finding(found: Iterable[Finding], before: int | None = None) -> Finding | None:
    """The finding a case is about: the earliest cause, preferring a cause (a tool, the model, ...) over a
    workflow symptom at the same step (a loop is what a changed tool output looks like from outside)."""
    candidates = [f for f in found if (at := _cause(f)) is not None and (before is None or at < before)]
    if not candidates:
        return None
    return min(candidates, key=lambda f: (_cause(f), f.layer == "workflow", f.kind))


def suggest_cut(record: RunRecord, found: Iterable[Finding]) -> int | None:
    """The first affected step: the earliest step a finding's cause shows at, moved past a tool step so
    that the tool's (bad) response is frozen in the case rather than fetched live."""
    steps = sorted(at for f in found if (at := _cause(f)) is not None)
    if not steps:
        return None
    first = steps[0]
    by_index = {s["index"]: s for s in record.steps}
    if by_index.get(first, {}).get("type") == TOOL:
        later = [i for i in by_index if i > first]
        return min(later) if later else first
    return first


def _error_text(record: RunRecord, step: Mapping[str, Any]) -> str:
    """A failed tool call as `Type: message` (its error type, and its status message without the type)."""
    kind = str(step.get("error_type") or record.attribute(step, semconv.ERROR_TYPE) or "Exception")
    status = str(record.attribute(step, STATUS_MESSAGE) or "")
    short = kind.rsplit(".", 1)[-1]
    message = status[len(short) + 2 :] if status.startswith(short + ": ") else status
    output = step.get("output")
    if not message and isinstance(output, str):
        message = output
    return f"{kind}: {message}" if message else kind


def new_case(
    record: RunRecord,
    at: int,
    layer: str,
    *,
    name: str | None = None,
    failure_mode: str | None = None,
    description: str | None = None,
    agent: str | None = None,
    found: Iterable[Finding] | None = None,
) -> Case:
    """A case cut from a recorded run at step `at` (fixtures: every response recorded before it).

    `found` are the run's findings (they suggest the failure mode and the default assertions); when not
    given, the run's own findings are used (without history, so no drift findings).
    """
    if layer not in LAYERS:
        raise CaseError(f"layer {layer!r} is not one of {', '.join(LAYERS)}")
    by_index = {s["index"]: s for s in record.steps}
    if at not in by_index:
        last = max(by_index, default=0)
        raise CaseError(f"run {record.run_id} has no step {at} (steps 1..{last})")
    if found is None:
        from agentotel.cases.detectors import detect

        found = detect(record)
    found = list(found)
    before = [s for s in record.steps if s["index"] < at]

    # Every recorded response, the cut's and later ones too: before the cut they are the world the
    # failure happened in; from the cut on they answer the kinds of step the replay keeps frozen (an
    # unchanged agent then follows the recording to its end and shows the failure again).
    tools: list[ToolFixture] = []
    models: list[ModelFixture] = []
    retrievals: list[RetrievalFixture] = []
    occurrences: dict[str, int] = {}
    _freeze(record, before, occurrences, tools, models, retrievals)
    for step in record.steps[len(before):]:
        if step.get("type") == LLM and is_error(step):
            break
        try:  # past the cut a step that cannot be frozen (an API error, content off) ends the recording
            _freeze(record, [step], occurrences, tools, models, retrievals)
        except CaseError:
            break

    # A payload cut by the content policy at record time is served cut on replay: say so in the case.
    truncated = [s["index"] for s in before if record.attribute(s, semconv.AGENTOTEL_PAYLOAD_TRUNCATED) in ("true", "True", True)]
    at_step = by_index[at]
    llm_at = next((s for s in record.steps if s["index"] >= at and s.get("type") == LLM), None)
    messages = scrub(parse_json(llm_at.get("input"))) if llm_at else None

    # The failure mode: a finding near the cut, preferably one of the layer the case is filed under.
    same_layer = [f for f in found if f.layer == layer]
    chosen = primary_finding(same_layer, at + 2) or primary_finding(found, at + 2) or primary_finding(found)
    if failure_mode is None and chosen is not None:
        failure_mode = chosen.kind
    case = Case(
        name=name or f"{record.run.get('name') or 'run'}-step-{at}",
        layer=layer,
        failure_mode=failure_mode,
        description=description,
        agent=agent,
        source={
            "run_id": record.run_id,
            "trace_id": record.run.get("trace_id"),
            "at_step": at,
            "at": {"type": at_step.get("type"), "name": at_step.get("name")},
            "findings": [{"kind": f.kind, "layer": f.layer, "steps": list(f.steps), "message": scrub(f.message)} for f in found],
            **({"truncated_fixtures": truncated} if truncated else {}),
        },
        input={"task": scrub(parse_json(record.run.get("task"))), "messages": messages},
        environment=_environment(record),
        tools=tools,
        models=models,
        retrievals=retrievals,
        assertions=_default_assertions(found),
        # A prompt fix changes the requests themselves, so they cannot match the recorded ones by hash:
        # serve the recorded answers in order and report the drift instead.
        policy="fifo" if layer == "prompt" else "strict",
    )
    case.replay_tools, case.replay_models = default_replay(at_step.get("type"))
    return case


def _freeze(
    record: RunRecord,
    steps: list[dict[str, Any]],
    occurrences: dict[str, int],
    tools: list[ToolFixture],
    models: list[ModelFixture],
    retrievals: list[RetrievalFixture],
    at: int | None = None,
) -> None:
    """Append the fixtures of `steps` (tool, retrieval and model responses), and of the sub-agent runs
    they started, whose calls a replay must answer too. `at`: the outer step a sub-agent's fixtures are
    filed under (its own step numbers are its run's)."""
    where = "" if at is None else f" of sub-agent run {record.run_id}"
    for step in steps:
        index = step["index"] if at is None else at
        if step.get("type") == RETRIEVAL:
            if step.get("input") is None:
                raise CaseError(
                    f"step {step['index']}{where} has no recorded query (was content capture off?): a case needs it to replay"
                )
            source = record.attribute(step, semconv.GEN_AI_DATA_SOURCE_ID) or str(step.get("name") or "").removeprefix(f"{RETRIEVAL} ")
            retrievals.append(
                RetrievalFixture(
                    step=index,
                    data_source=source,
                    query=scrub(recorded(step, "input")),
                    documents=None if is_error(step) else scrub(recorded(step, "output")),
                    error=scrub(_error_text(record, step)) if is_error(step) else None,
                )
            )
        elif step.get("type") == TOOL:
            tools.append(
                ToolFixture(
                    step=index,
                    name=str(tool_name(step)),
                    arguments=scrub(recorded(step, "input")),
                    output=None if is_error(step) else scrub(recorded(step, "output")),
                    error=scrub(_error_text(record, step)) if is_error(step) else None,
                )
            )
        elif step.get("type") == LLM:
            if step.get("input") is None or step.get("output") is None:
                raise CaseError(
                    f"step {step['index']}{where} has no recorded messages (was content capture off?): a case needs them to replay"
                )
            neutral = neutral_from_genai(step.get("input"), record.attribute(step, semconv.GEN_AI_SYSTEM_INSTRUCTIONS))
            digest = request_hash(neutral)
            occurrences[digest] = occurrences.get(digest, 0) + 1
            models.append(
                ModelFixture(
                    step=index,
                    request_hash=digest,
                    occurrence=occurrences[digest],
                    model=step.get("model"),
                    response=scrub(recorded(step, "output")),
                    usage=_usage(record, step),
                    response_id=record.attribute(step, semconv.GEN_AI_RESPONSE_ID),
                )
            )
        elif step.get("type") == AGENT and step["index"] in record.nested:
            nested = record.nested[step["index"]]
            _freeze(nested, nested.steps, occurrences, tools, models, retrievals, index)


# Token counts beyond input and output, as a fixture's usage names them: a replayed answer reports them
# again, so its cost is the recorded call's (cached input is cheaper).
_USAGE_DETAILS = {
    "cache_read_tokens": semconv.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    "cache_write_tokens": semconv.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    "reasoning_tokens": semconv.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
}


def _usage(record: RunRecord, step: Mapping[str, Any]) -> dict[str, int]:
    usage = {"input_tokens": int(step.get("input_tokens") or 0), "output_tokens": int(step.get("output_tokens") or 0)}
    for key, attribute in _USAGE_DETAILS.items():
        value = record.attribute(step, attribute)
        if value not in (None, "", 0, "0"):
            usage[key] = int(value)
    return usage


def offline_warnings(case: Case, record: RunRecord) -> list[str]:
    """Why the case as cut may not reach its gates offline (`case new` prints them), and what would."""
    a = case.assertions
    at = case.at_step
    cut = next((s for s in record.steps if s["index"] == at), {})
    failure = next((s["index"] for s in record.steps if s["index"] >= at and s.get("type") == LLM), None)
    out = []
    if case.replay_tools == "frozen" and cut.get("type") in (TOOL, RETRIEVAL):
        out.append(f"step {at} is a tool step served its recorded result (tools frozen): a fix inside the tool never runs; "
                   "use --tools live")
    if case.replay_models == "frozen" and not a.required_evidence:
        out.append(f"offline (models frozen), a fix that changes what the model is shown stops the replay at step "
                   f"{failure or at}, and the gates about what happens after it are not reached: say what the model must "
                   "be shown there with --evidence TEXT, or judge with --models live")
    eventually = [n for n, v in (("final_output_contains", a.final_output_contains), ("required_tools", a.required_tools),
                                 ("expected_tool_calls", a.expected_tool_calls)) if v]
    if case.replay_models == "frozen" and eventually:
        out.append(f"{', '.join(eventually)} need the run to go on past a departure from the recording: "
                   "offline they are reached only when the agent follows the recording; use --models live")
    return out


def _environment(record: RunRecord) -> dict[str, Any]:
    root = record.root_attributes
    schemas = {}
    for step in record.tool_steps():
        digest = record.attribute(step, semconv.AGENTOTEL_TOOL_SCHEMA_HASH)
        if digest:
            schemas[str(tool_name(step))] = digest
    env = {
        "hash": root.get(semconv.AGENTOTEL_ENV_HASH) or record.run.get("env_hash"),
        "commit": root.get(semconv.AGENTOTEL_ENV_COMMIT),
        "tool_schemas_hash": root.get(semconv.AGENTOTEL_ENV_TOOL_SCHEMAS_HASH),
        "models": sorted({str(s["model"]) for s in record.steps if s.get("type") == LLM and s.get("model")}),
        "tool_schemas": schemas,
    }
    return {k: v for k, v in env.items() if v not in (None, [], {})}


def _default_assertions(found: list[Finding]) -> Assertions:
    """Gates the findings suggest: what went wrong must not happen again. Edit them in the file."""
    assertions = Assertions(final_status="ok")
    for finding in found:
        evidence = finding.evidence
        if finding.kind == "repeated_tool_call" and evidence.get("tool") not in assertions.must_not_repeat:
            assertions.must_not_repeat.append(evidence["tool"])
        elif finding.kind == "unknown_tool" and evidence.get("tool") not in assertions.forbidden_tools:
            assertions.forbidden_tools.append(evidence["tool"])
        elif finding.kind == "budget_exceeded":
            field_name = {"steps": "max_steps", "tool_calls": "max_tool_calls", "cost_usd": "max_cost_usd"}.get(evidence.get("budget"))
            if field_name:
                setattr(assertions, field_name, evidence.get("limit"))
    return assertions
