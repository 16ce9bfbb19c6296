"""What every process-per-recorder held-out set shares: recording each recorder's runs in a process of its own,
reading back which run is which, and scoring `diff` and `check` on the pairs (heldout2.py ... heldout20.py); the
world a run is recorded in (`World`), the scripted person's replies, the plain tool loops the recorded apps run
(openai, anthropic, pydantic-ai, an MCP server), a set's entry points (`HeldOut`) and its slow test (`held_to_lists`).

A held-out set is a module with `produce(options) -> manifest` (run in the child: `python SET.py --produce OPTIONS
OUT`), `pairs()` (heldout.py's `Pair`s, `agent` naming the recorder) and a policy per recorder. The manifest is a
list of `{"fault", "role", "run"}` (role `history`, `good` or `faulty`). heldout.py (its locators, `Pair`, `Score`,
`table`) is imported here only inside functions: it declares agentotel tools, which an agentotel recorder's
environment snapshot would list.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).parent.parent.parent


@dataclass
class Recorded:
    pair: Any
    good: str
    faulty: str


# Called before a recorder's process starts, with its name and options (it may add to them: a collector's
# endpoint); returns what stops what it started, or None.
Prepare = Callable[[str, dict[str, Any]], Callable[[], None] | None]


def through_collector(*recorders: str) -> Prepare:
    """A `Prepare` giving these recorders an agentotel-collector (OTLP over HTTP on 127.0.0.1) that writes their store:
    their options get its endpoint as `otlp`."""

    def prepare(name: str, options: dict[str, Any]) -> Callable[[], None] | None:
        if name not in recorders:
            return None
        sys.path.insert(0, str(ROOT / "collector"))
        from agentotel_collector import Collector

        collector = Collector(dir=Path(options["store"]), http=("127.0.0.1", 0), grpc=("127.0.0.1", 0)).start()
        host, port = collector.http_address
        options["otlp"] = f"http://{host}:{port}/v1/traces"
        return collector.stop

    return prepare


def record(script: Path, root: Path, chosen_pairs: list[Any], *, prepare: Prepare | None = None,
           timeout: float = 900) -> dict[str, list[Recorded]]:
    """Every recorder's runs of `chosen_pairs`, each recorder in a process of its own (at most two at once), each in
    its own store under `root`."""
    by: dict[str, list[Any]] = {}
    for p in chosen_pairs:
        by.setdefault(p.agent, []).append(p)
    jobs: list[tuple[str, list[Any], Path, subprocess.Popen[str]]] = []
    stops: list[Callable[[], None]] = []
    try:
        for name, chosen in by.items():
            options: dict[str, Any] = {"recorder": name, "store": str(root / name), "faults": [p.fault for p in chosen]}
            stop = prepare(name, options) if prepare else None
            if stop is not None:
                stops.append(stop)
            out = root / f"{name}.json"
            env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'collector'}", "OTEL_SDK_DISABLED": "false"}
            jobs.append((name, chosen, out, subprocess.Popen([sys.executable, str(script), "--produce", json.dumps(options), str(out)],
                                                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
            running = [j for j in jobs if j[3].poll() is None]
            if len(running) >= 2:
                _wait(running[0], timeout)
        for job in jobs:
            _wait(job, timeout)
    finally:
        for stop in stops:
            stop()
    return recorded_in(root, chosen_pairs)


def _wait(job: tuple[str, list[Any], Path, subprocess.Popen[str]], timeout: float) -> None:
    name, _, _, process = job
    _, err = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise RuntimeError(f"recorder {name} failed:\n{err[-4000:]}")


def recorded_in(root: Path, chosen_pairs: list[Any]) -> dict[str, list[Recorded]]:
    """The runs a `record` left in `root` (to score them again, with another tree's detectors)."""
    out: dict[str, list[Recorded]] = {}
    for p in chosen_pairs:
        manifest = root / f"{p.agent}.json"
        if manifest.exists():
            runs = {(m["fault"], m["role"]): m["run"] for m in json.loads(manifest.read_text())}
            if (p.fault, "faulty") in runs:
                out.setdefault(p.agent, []).append(Recorded(p, runs[(p.fault, "good")], runs[(p.fault, "faulty")]))
    return out


def score(root: Path, recorded: dict[str, list[Recorded]], policy: Callable[[str], Any] = lambda name: None) -> list[Any]:
    """Each pair's score: diff's first divergence on (good, faulty), check's top finding on the faulty run, the
    warnings on the good run. `policy(recorder)` is the policy its agent is checked with."""
    import agentotel
    from agentotel.analysis.detectors import findings
    from heldout import _RANK, Score

    out = []
    for name, items in recorded.items():
        with agentotel.open(root / name) as traces:
            for r in items:
                steps = traces.trajectory(r.faulty).to_dict()["steps"]
                expected = r.pair.where(steps)
                diff_expected = (r.pair.diff_where or r.pair.where)(steps)
                divergence = traces.diff(r.good, r.faulty).to_dict().get("first_divergence")
                found = findings(traces, r.faulty, policy=policy(name))
                ranked = sorted(found, key=lambda f: (-_RANK.get(f.severity, 2), f.index if f.index is not None else 10**9))
                good = findings(traces, r.good, policy=policy(name))
                out.append(Score(r.pair, expected, diff_expected, divergence, ranked[0] if ranked else None, found, good))
    return out


def main(script: Path, prefix: str, pairs: list[Any], args: list[str], *, prepare: Prepare | None = None,
         policy: Callable[[str], Any] = lambda name: None) -> None:
    """Records the chosen pairs (every pair when none is named; a recorder's name chooses its pairs) and prints the
    table; `--score DIR [ids]` scores the runs an earlier call left in DIR again."""
    from heldout import table

    again = args[:1] == ["--score"]
    root = Path(args[1]) if again else Path(tempfile.mkdtemp(prefix=prefix))
    ids = args[2:] if again else args
    chosen = [p for p in pairs if not ids or p.id in ids or p.agent in ids]
    recorded = recorded_in(root, chosen) if again else record(script, root, chosen, prepare=prepare)
    print(table(score(root, recorded, policy)))
    print(root)


@dataclass
class HeldOut:
    """A set's entry points, the same in every set: `record` (each recorder in its process), `score` (with the set's
    policy) and `main` (`python SET.py [RECORDER|PAIR ...]` records and prints the table, `--score DIR [...]` scores
    a recording again; in a recorder's process, `--produce`, it records)."""

    script: str | Path  # the set's file (run again as each recorder's process)
    prefix: str  # of the temporary directory a recording goes into
    pairs: Callable[[], list[Any]]
    produce: Callable[[dict[str, Any]], list[dict[str, Any]]]
    prepare: Prepare | None = None
    policy: Callable[[str], Any] = lambda name: None

    def record(self, root: Path, chosen: list[Any]) -> dict[str, list[Recorded]]:
        return record(Path(self.script), root, chosen, prepare=self.prepare)

    def score(self, root: Path, recorded: dict[str, list[Recorded]]) -> list[Any]:
        return score(root, recorded, self.policy)

    def main(self, args: list[str]) -> None:
        if not produce_main(self.produce):
            main(Path(self.script), self.prefix, self.pairs(), args, prepare=self.prepare, policy=self.policy)


def held_to_lists(module: Any, root: Path, count: int | None = None) -> None:
    """The slow test of a set (`module`, with `HELDOUT`, `DIFF_MISSED`, `CHECK_MISSED` and `FALSE_ALARMS`): every pair
    recorded into `root` and scored, each located on its faulty run, and no miss or warned good run its lists do not
    name (`count`, when given, the number of pairs); the table is the message of a failure."""
    from heldout import table

    pairs = module.HELDOUT.pairs()
    scores = module.HELDOUT.score(root, module.HELDOUT.record(root, pairs))
    report = table(scores)
    assert len(scores) == len(pairs), report
    assert count is None or len(pairs) == count, report
    assert all(s.expected is not None and s.diff_expected is not None for s in scores), report
    assert unlisted(scores, module.DIFF_MISSED, module.CHECK_MISSED, module.FALSE_ALARMS) == {
        "diff": set(), "check": set(), "alarms": set()}, report


def pairs_of(truth: dict[str, tuple[Any, ...]], chosen: dict[str, list[str]]) -> list[Any]:
    """The set's `Pair`s: each recorder's chosen faults, with `truth[fault]` = (layer, taxonomy, where[, diff_where]);
    a pair's id is `layer-recorder-fault` (dashes for underscores)."""
    from heldout import Pair

    out = []
    for recorder, faults in chosen.items():
        for fault in faults:
            layer, source, where, *diff_where = truth[fault]
            out.append(Pair(f"{layer}-{recorder}-{fault.replace('_', '-')}", recorder, layer, fault, source, where,
                            *diff_where))
    return out


def produce_main(produce: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> bool:
    """In a recorder's process (`--produce OPTIONS OUT`): records and writes the manifest. False elsewhere."""
    if sys.argv[1:2] != ["--produce"]:
        return False
    Path(sys.argv[3]).write_text(json.dumps(produce(json.loads(sys.argv[2]))))
    return True


def produce_runs(options: dict[str, Any], model: Callable[[dict[str, Any]], dict[str, Any]], recorders: dict[str, Any],
                 start: Callable[[str | None, str | None], None], request: Callable[[int, str | None], str],
                 history: tuple[int, ...] = (0, 1), *, serve: Callable[..., Any] | None = None) -> list[dict[str, Any]]:
    """In a recorder's process: `model` served on 127.0.0.1, the recorder's earlier healthy runs (`request(v, None)`),
    then each fault's good and faulty run; `start(pair, fault)` sets the world before each run. The manifest.
    `serve` is the server the model stands behind (shapes.serve when None; shapes.serve_models for recorders that
    speak Gemini, Bedrock Converse or the Responses API too)."""
    import time

    if serve is None:
        from shapes import serve

    manifest = []
    with serve(answering(model)) as url:
        recorder = recorders[options["recorder"]](options, url)
        for v in history:
            start(None, None)
            manifest.append({"fault": None, "role": "history", "run": recorder.run(request(v, None))})
        for fault in options["faults"]:
            for role, injected in (("good", None), ("faulty", fault)):
                start(fault, injected)
                manifest.append({"fault": fault, "role": role, "run": recorder.run(request(2, fault))})
        recorder.close()
        time.sleep(0.2)  # (the last spans' export)
    return manifest


def produce_served(options: dict[str, Any], model: Callable[[dict[str, Any]], dict[str, Any]], recorders: dict[str, Any],
                   world: type[World], request: Callable[[int, str | None], str], history: tuple[int, ...] = (0, 1),
                   **environ: str) -> list[dict[str, Any]]:
    """A set's `produce` as most are: the messages captured by every instrumentation (`environ` more variables - a
    traceloop recorder's TRACELOOP_TRACE_CONTENT), no OpenAI key in the process (an Agents SDK's own trace export stays
    off: no key, no network; every client here is given its key), `world.recorder` named and `produce_runs` behind
    shapes.serve_models (chat completions, Anthropic messages, Gemini, Bedrock Converse, the Responses API)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", **environ)
    os.environ.pop("OPENAI_API_KEY", None)
    world.recorder = options["recorder"]
    return produce_runs(options, model, recorders, world.start, request, history, serve=serve_models)


def answering(model: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """`model` answering a bug of its script's as an API's 500, the bug shown in the recorder's stderr (a scripted
    model failing quietly would record a run nobody meant)."""
    from shapes import Status

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        try:
            return model(body)
        except Status:
            raise
        except Exception as exc:
            import traceback

            traceback.print_exc()
            print(json.dumps(body.get("messages"))[-3000:], file=sys.stderr)
            raise Status(500, f"scripted model failed: {exc}") from exc
    return answer


class World:
    """The world of the run being recorded, which a set's tools, scripted model and scripted people read: a set
    subclasses it (`class Now(kit.World)`), adding what else its world keeps (reset in its own `start`)."""

    pair: str | None = None  # the pair's fault, in its good run too (a near twin's setting)
    fault: str | None = None  # the fault of this run (faulty runs only)
    recorder = ""
    user_step = 0  # the scripted person's replies said so far
    calls: dict[str, int] = {}  # calls of a tool, by name

    @classmethod
    def start(cls, pair: str | None, fault: str | None) -> None:
        """Before each run (kit.produce_runs' `start`)."""
        cls.pair, cls.fault, cls.user_step, cls.calls = pair, fault, 0, {}

    @classmethod
    def count(cls, name: str) -> int:
        """This call of tool `name`, counted: how many calls of it this run has made."""
        cls.calls[name] = cls.calls.get(name, 0) + 1
        return cls.calls[name]

    @classmethod
    def reply(cls, script: list[tuple[str, str]], said: str) -> str | None:
        """What a scripted person (`script`: (cue, reply) in order) answers the agent's message `said`: the first reply
        still to say whose cue `said` holds, or None: the conversation is over."""
        for i in range(cls.user_step, len(script)):
            if script[i][0] in said:
                cls.user_step = i + 1
                return script[i][1]
        return None


def once_more(retrying: str, tool: str, tried: list[Any], gave_up: str, say: str | None = None,
              **arguments: Any) -> dict[str, Any]:
    """A scripted model doing what a set's rules ask after a failed call (`tried`: the calls of `tool` so far): the call
    once more, `retrying` said beside it (`say` beside the first call), then the failure told (`gave_up`). A set binds
    its own words: `_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")`."""
    from heldout9 import call
    from shapes import reply

    if len(tried) >= 2:
        return reply(gave_up)
    return call(tool, retrying if tried else say, **arguments)


def by_role(body: dict[str, Any], default: str, plans: Callable[[Any, str], dict[str, Callable[[], dict[str, Any]]]],
            waiting: str | None = "Hello! How can I help?") -> dict[str, Any]:
    """A set's scripted model answering a chat.completions request `body`: `plans(t, asked)` (t the conversation as
    heldout9's `Talk` reads it, asked the model the request names, `default` when it names none) gives each role's
    plan by a cue its system prompt holds; the first whose cue the request's holds answers once a person has spoken
    (before, it says `waiting`; None: it answers anyway), a request no cue fits is greeted. The answer names the model
    asked for, as an API's does."""
    from heldout9 import Talk
    from shapes import reply

    t = Talk(body.get("messages") or [])
    asked = body.get("model") or default
    plan = next((p for cue, p in plans(t, asked).items() if cue in t.system), None)
    if plan is None:
        out = reply("Hello! How can I help?")
    else:
        out = plan() if t.users or waiting is None else reply(waiting)
    out["model"] = asked
    return out


# ---- the apps' tool loops: how the recorded apps call their tools and tell the model a tool failed ------------------


def chat_loop(client: Any, model: str, system: str, task: str, tools: dict[str, Callable[..., Any]],
              offered: list[dict[str, Any]], replies: Callable[[str], str | None] | None = None) -> str:
    """A plain openai chat.completions tool loop, as apps write one: every asked call run (`tools[name]`, its result
    sent as JSON, an exception's words sent back - the model reads the error, as most loops do), the user's
    `replies(answer)` appended while it gives one; `offered` the tool declarations (none sent when empty)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": task}]
    for _ in range(24):
        more = {"tools": offered} if offered else {}
        said = client.chat.completions.create(model=model, messages=messages, **more).choices[0].message
        messages.append(said.model_dump(exclude_none=True))
        if not said.tool_calls:
            follow = replies(said.content or "") if replies else None
            if follow is None:
                return said.content or ""
            messages.append({"role": "user", "content": follow})
            continue
        for asked in said.tool_calls:
            try:
                out = json.dumps(tools[asked.function.name](**json.loads(asked.function.arguments)))
            except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
                out = f"Error: {type(exc).__name__}: {exc}"
            messages.append({"role": "tool", "tool_call_id": asked.id, "content": out})
    return "I could not finish."


def _anthropic_turn(messages: list[dict[str, Any]], said: Any, replies: Callable[[str], str | None] | None,
                    forget: bool = False) -> tuple[list[Any], str | None, list[dict[str, Any]]]:
    """An anthropic messages reply taken into the conversation (`messages`, kept as a loop keeps it): its tool_use
    blocks to run, or its text when the person's `replies` gives nothing more (else their reply appended, the
    conversation before it dropped when `forget`), and the conversation."""
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in said.content]})
    uses = [b for b in said.content if b.type == "tool_use"]
    if uses:
        return uses, None, messages
    text = " ".join(b.text for b in said.content if b.type == "text")
    follow = replies(text) if replies else None
    if follow is None:
        return [], text, messages
    if forget:
        messages = []
    messages.append({"role": "user", "content": follow})
    return [], None, messages


def _tool_result(use: Any, text: str, failed: bool) -> dict[str, Any]:
    """A tool_use's result block, its words as one text block."""
    return {"type": "tool_result", "tool_use_id": use.id, "is_error": failed, "content": [{"type": "text", "text": text}]}


def anthropic_loop(base_url: str, model: str, system: str, task: str, tools: dict[str, Callable[..., Any]],
                   offered: list[dict[str, Any]], replies: Callable[[str], str | None] | None = None,
                   forget: bool = False, turns: int = 24) -> str:
    """A plain anthropic SDK messages loop with tool_use, as apps write one: every asked call run (`tools[name]`, its
    result sent as JSON text, an exception's words as an error result), the person's `replies(answer)` appended while
    it gives one (the conversation before it dropped when `forget`: the app's memory lost between turns); `offered`
    the tools as chat.completions declarations."""
    import anthropic

    def run(use: Any) -> dict[str, Any]:
        try:
            return _tool_result(use, json.dumps(tools[use.name](**use.input)), False)
        except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
            return _tool_result(use, f"Error: {type(exc).__name__}: {exc}", True)

    llm = anthropic.Anthropic(base_url=base_url.removesuffix("/v1"), api_key="sk-ant-test", max_retries=0, timeout=120)
    schemas = [{"name": d["function"]["name"], "description": d["function"]["description"],
                "input_schema": d["function"]["parameters"]} for d in offered]
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for _ in range(turns):
        said = llm.messages.create(model=model, max_tokens=1024, system=system, messages=messages, tools=schemas)
        uses, answer, messages = _anthropic_turn(messages, said, replies, forget)
        if answer is not None:
            return answer
        if uses:
            messages.append({"role": "user", "content": [run(use) for use in uses]})
    return "I could not finish."


def genai_loop(client: Any, model: str, system: str, task: str, tools: dict[str, Callable[..., Any]],
               offered: list[dict[str, Any]], replies: Callable[[str], str | None]) -> str:
    """A plain google-genai generate_content loop with function declarations (automatic function calling off), as apps
    write one: every asked call run (`tools[name]`, its result as the response's output, an exception's words as its
    error), the person's `replies(answer)` appended while it gives one; `offered` the tools as chat.completions
    declarations."""
    from google.genai import types

    def answer(asked: Any) -> Any:
        try:
            response = {"output": tools[asked.name](**dict(asked.args or {}))}
        except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
            response = {"error": f"{type(exc).__name__}: {exc}"}
        return types.Part(function_response=types.FunctionResponse(id=asked.id, name=asked.name, response=response))

    config = types.GenerateContentConfig(
        system_instruction=system, tools=[types.Tool(function_declarations=[
            types.FunctionDeclaration(name=d["function"]["name"], description=d["function"]["description"],
                                      parameters_json_schema=d["function"]["parameters"]) for d in offered])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=task)])]
    while len(contents) < 60:
        content = client.models.generate_content(model=model, contents=contents, config=config).candidates[0].content
        contents.append(content)
        asked = [p.function_call for p in content.parts or () if p.function_call]
        if asked:
            contents.append(types.Content(role="user", parts=[answer(c) for c in asked]))
            continue
        text = " ".join(p.text for p in content.parts or () if p.text)
        follow = replies(text)
        if follow is None:
            return text
        contents.append(types.Content(role="user", parts=[types.Part(text=follow)]))
    return "I could not finish."


async def mcp_anthropic_loop(base_url: str, model: str, system: str, task: str, server: str,
                             tools: dict[str, Callable[..., Any]], replies: Callable[[str], str | None] | None = None) -> str:
    """A plain async anthropic SDK messages loop whose tools are an MCP server's (`mcp_server(server, tools)`, in
    process), each call through the MCP client's session, the person's `replies(answer)` appended while it gives one."""
    import anthropic
    from mcp import Client

    llm = anthropic.AsyncAnthropic(base_url=base_url, api_key="sk-ant-test", max_retries=0, timeout=120)
    async with Client(mcp_server(server, tools)) as client:
        async def run(use: Any) -> dict[str, Any]:
            got = await client.session.call_tool(use.name, use.input)
            return _tool_result(use, " ".join(x.text for x in got.content if hasattr(x, "text")), bool(got.is_error))

        schemas = [{"name": x.name, "description": x.description or "", "input_schema": x.input_schema}
                   for x in (await client.session.list_tools()).tools]
        messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
        for _ in range(24):
            said = await llm.messages.create(model=model, max_tokens=1024, system=system, messages=messages,
                                             tools=schemas)
            uses, answer, messages = _anthropic_turn(messages, said, replies)
            if answer is not None:
                return answer
            if uses:
                messages.append({"role": "user", "content": [await run(use) for use in uses]})
    return "I could not finish."


_ANTICIPATED = (LookupError, RuntimeError, TimeoutError)  # what sets' tools raise on purpose: not found, refused, timed out


def pydantic_chat(base_url: str, model: str, name: str, instructions: str, tools: dict[str, Callable[..., Any]],
                  task: str, replies: Callable[[str], str | None], forget: bool = False) -> str:
    """A pydantic-ai agent (an openai chat model at `base_url`) talking with a person: one run_sync per turn, given the
    conversation so far (none when `forget`: the app lost it), until `replies(answer)` gives nothing more; a tool's
    anticipated failure goes back to the model as a ModelRetry with its words."""
    import functools

    import openai
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=openai.AsyncOpenAI(base_url=base_url, api_key="sk-test", max_retries=0))
    agent = Agent(OpenAIChatModel(model, provider=provider), name=name, instructions=instructions, retries=2)
    for f in tools.values():
        @functools.wraps(f)  # (the name, docstring and signature pydantic-ai reads are the tool's)
        def retried(*args: Any, _f: Callable[..., Any] = f, **kwargs: Any) -> Any:
            try:
                return _f(*args, **kwargs)
            except _ANTICIPATED as exc:
                raise ModelRetry(f"{type(exc).__name__}: {exc}") from None
        agent.tool_plain(retried)
    history, said = None, task
    while True:
        result = agent.run_sync(said, message_history=history)
        follow = replies(str(result.output))
        if follow is None:
            return str(result.output)
        history, said = (None if forget else result.all_messages()), follow


def mcp_server(name: str, tools: dict[str, Callable[..., Any]],
               anticipated: tuple[type[BaseException], ...] = _ANTICIPATED) -> Any:
    """An MCP server (in process) offering `tools`; an anticipated failure reaches the client as a tool error with its
    words."""
    import functools

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer(name)
    for tool_name, f in tools.items():
        @functools.wraps(f)
        def told(*args: Any, _f: Callable[..., Any] = f, **kwargs: Any) -> Any:
            try:
                return _f(*args, **kwargs)
            except anticipated as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc
        server.add_tool(told, name=tool_name)
    return server


def agents_chain(model: Any, team: list[tuple[str, str, dict[str, Callable[..., Any]]]], task: str,
                 drop_into: str | None = None) -> str:
    """A team on the OpenAI Agents SDK (`model` its Responses or chat completions model): `team`'s (name, rules, tools)
    agents, each handing to the next by a handoff, run from the first by one Runner.run; the handoff into `drop_into`
    filtered to the handoff call alone (a deployment's queue between the two losing the conversation)."""
    import asyncio

    from agents import Agent, Runner, function_tool, handoff
    from heldout9 import _as_text

    def handoff_only(data: Any) -> Any:
        return data.clone(input_history=(), pre_handoff_items=(), new_items=tuple(
            i for i in data.new_items if i.type in ("handoff_call_item", "handoff_output_item")))

    agent = None
    for name, rules, tools in reversed(team):  # (an agent is built after the one it hands to)
        handoffs = [] if agent is None else [handoff(
            agent, input_filter=handoff_only if agent.name == drop_into else None)]
        agent = Agent(name=name, instructions=rules, model=model, handoffs=handoffs,
                      tools=[function_tool(_as_text(f)) for f in tools.values()])
    return str(asyncio.run(Runner.run(agent, task, max_turns=40)).final_output)


def langgraph_team(url: str, model: str, name: str, team: list[tuple[str, str, dict[str, Callable[..., Any]]]],
                   task: str, before: dict[str, tuple[str, Callable[[Any], dict[str, Any]]]] | None = None) -> str:
    """A team as a LangGraph StateGraph (compiled as `name`) of `team`'s (name, rules, tools) create_react_agents
    (ChatOpenAI `model` at `url`), one after the other; `before[agent]` = (node, step) a plain node entered before that
    agent (a handover that may reset the conversation). The last message's text."""
    out = team_graph(url, model, name, team, before).invoke({"messages": [("user", task)]}, {"recursion_limit": 60})
    return str(out["messages"][-1].content)


def team_graph(url: str, model: str, name: str, team: list[tuple[str, str, dict[str, Callable[..., Any]]]],
               before: dict[str, tuple[str, Callable[[Any], dict[str, Any]]]] | None = None) -> Any:
    """langgraph_team's compiled graph, for an app that invokes it itself (another recursion limit)."""
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, create_react_agent

    from heldout9 import _as_text

    llm = ChatOpenAI(model=model, api_key="sk-test", base_url=url + "/v1", max_retries=0)
    graph = StateGraph(MessagesState)
    previous = START
    for agent, rules, tools in team:
        node = ToolNode([tool(_as_text(f)) for f in tools.values()], handle_tool_errors=True)
        graph.add_node(agent, create_react_agent(llm, node, prompt=rules, name=agent))
        if before and agent in before:
            step_name, step = before[agent]
            graph.add_node(step_name, step)
            graph.add_edge(previous, step_name)
            previous = step_name
        graph.add_edge(previous, agent)
        previous = agent
    graph.add_edge(previous, END)
    return graph.compile(name=name)


def mcp_chat_loop(base_url: str, model: str, system: str, task: str, server: str, tools: dict[str, Callable[..., Any]],
                  max_retries: int = 0) -> str:
    """A plain async openai SDK chat.completions loop whose tools are an MCP server's (`mcp_server(server, tools)`, in
    process), each call through the MCP client's session, its result's text sent back (an error's too); one request,
    no person replying. `max_retries` the SDK's own (inside one recorded call)."""
    import asyncio

    import openai
    from mcp import Client

    async def turns() -> str:
        llm = openai.AsyncOpenAI(base_url=base_url, api_key="sk-test", max_retries=max_retries)
        async with Client(mcp_server(server, tools)) as client:
            offered = [{"type": "function", "function": {"name": x.name, "description": x.description or "",
                                                         "parameters": x.input_schema}}
                       for x in (await client.session.list_tools()).tools]
            messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": task}]
            for _ in range(24):
                said = (await llm.chat.completions.create(model=model, messages=messages,
                                                          tools=offered)).choices[0].message
                messages.append(said.model_dump(exclude_none=True))
                if not said.tool_calls:
                    return said.content or ""
                for asked in said.tool_calls:
                    got = await client.session.call_tool(asked.function.name, json.loads(asked.function.arguments))
                    text = " ".join(x.text for x in got.content if hasattr(x, "text"))
                    messages.append({"role": "tool", "tool_call_id": asked.id, "content": text})
        return "I could not finish."

    return asyncio.run(turns())


def bedrock_client(url: str, region: str) -> Any:
    """A boto3 Bedrock Runtime client at `url` (test credentials, one attempt: a failure is the run's)."""
    import boto3
    from botocore.config import Config

    os.environ.update(AWS_ACCESS_KEY_ID="AKIATESTTESTTEST", AWS_SECRET_ACCESS_KEY="test-secret",
                      AWS_DEFAULT_REGION=region)
    return boto3.client("bedrock-runtime", region_name=region, endpoint_url=url, config=Config(retries={"max_attempts": 1}))


def converse_loop(client: Any, model: str, system: str, task: str, tools: dict[str, Callable[..., Any]],
                  offered: list[dict[str, Any]], replies: Callable[[str], str | None]) -> str:
    """A plain boto3 Bedrock Runtime converse loop with a toolConfig, as apps write one: every asked call run
    (`tools[name]`, its result as a json block, an exception's words as an error result), the person's
    `replies(answer)` appended while it gives one; `offered` the tools as chat.completions declarations. The answer's
    text blocks, joined."""
    def result(use: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"toolUseId": use["toolUseId"], "content": [{"json": tools[use["name"]](**use["input"])}]}
        except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
            return {"toolUseId": use["toolUseId"], "content": [{"text": f"{type(exc).__name__}: {exc}"}], "status": "error"}

    specs = [{"toolSpec": {"name": d["function"]["name"], "description": d["function"]["description"],
                           "inputSchema": {"json": d["function"]["parameters"]}}} for d in offered]
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": task}]}]
    for _ in range(30):
        message = client.converse(modelId=model, messages=messages, system=[{"text": system}],
                                  toolConfig={"tools": specs}, inferenceConfig={"maxTokens": 1024})["output"]["message"]
        messages.append(message)
        uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
        if not uses:
            text = " ".join(b["text"] for b in message["content"] if "text" in b)
            follow = replies(text)
            if follow is None:
                return text
            messages.append({"role": "user", "content": [{"text": follow}]})
            continue
        messages.append({"role": "user", "content": [{"toolResult": result(use)} for use in uses]})
    return "I could not finish."


def maf_team(url: str, model: str, team: list[tuple[str, str, dict[str, Callable[..., Any]]]]) -> list[Any]:
    """`team`'s (name, rules, tools) as Microsoft Agent Framework `Agent`s on one openai chat client at `url` (a tool's
    error detail shown to the model), in order; the app runs them (see `MafRecorder`)."""
    import inspect

    from agent_framework import Agent, tool as af_tool
    from agent_framework.openai import OpenAIChatCompletionClient

    from heldout9 import _as_text

    client = OpenAIChatCompletionClient(model, api_key="sk-test", base_url=url + "/v1")
    client.function_invocation_configuration["include_detailed_errors"] = True
    return [Agent(client=client, name=role, instructions=rules, tools=[
                af_tool(name=n, description=inspect.getdoc(f))(_as_text(f)) for n, f in tools.items()])
            for role, rules, tools in team]


def succeeded(t: Any, tool: str, kinds: tuple[type, ...] = (dict, list)) -> list[Any]:
    """A scripted model's reading of its conversation (heldout9's `Talk` `t`): the successful results of `tool` so far,
    those of `kinds` (a failed call's is its error's text)."""
    return [v for _, v in t.got(tool) if isinstance(v, kinds)]


def agentotel_tools(tools: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """`tools` as `@agentotel.tool`s, by name (wrapping one registers it: the next run's environment lists it)."""
    import agentotel

    return {name: agentotel.tool(f) for name, f in tools.items()}


def chat_app(recorder: type, agent: str, tools: dict[str, Callable[..., Any]], model: Callable[[], str],
             instructions: Callable[[], str], replies: Callable[[str], str | None] | None = None) -> type:
    """A recorder (`OpenInferenceRecorder` or `TraceloopRecorder`) of an app that is a plain openai chat loop
    (`chat_loop`, `model()` under `instructions()`), set up as apps under that instrumentation are: its openai
    instrumentor on, `tools` its tool spans."""

    class ChatApp(recorder):  # type: ignore[misc, valid-type]
        def __init__(self, options: dict[str, Any], url: str) -> None:
            super().__init__(options, url)
            self.tools = self.instrumented(self.openai_instrumentor(), tools)

        def body(self, task: str) -> str:
            import openai

            from heldout9 import declared

            client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
            return chat_loop(client, model(), instructions(), task, self.tools, declared(tools), replies)

    ChatApp.agent = agent
    ChatApp.__name__ = ChatApp.__qualname__ = f"{recorder.__name__.removesuffix('Recorder')}Chat[{agent}]"
    return ChatApp


# ---- the recorders' roots (one run a root span: agentotel's own, OpenInference's AGENT, traceloop's workflow) ------


class AgentotelRecorder:
    """A recorder under agentotel: each run an `agentotel.run` named `agent`; `body(task)` is the agent's work."""

    agent = "agent"

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel

        self.options, self.url = options, url
        agentotel.instrument(directory=options["store"], service_name=self.agent)

    def run(self, task: str) -> str:
        import agentotel

        with agentotel.run(self.agent, task=task) as run:
            try:
                run.output = self.body(task)
            except Exception:  # noqa: BLE001 - the run records the failure
                pass
        return run.id

    def body(self, task: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        import agentotel

        agentotel.shutdown()


class MafRecorder(AgentotelRecorder):
    """A recorder under agentotel of an app on Microsoft Agent Framework (`maf_team`'s agents), the framework's own
    telemetry on with the messages."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from agent_framework.observability import enable_instrumentation

        super().__init__(options, url)
        enable_instrumentation(enable_sensitive_data=True)


class _ForeignRecorder:
    """A recorder under another instrumentation: an SDK tracer provider sending every span by OTLP to the
    agentotel-collector `options["otlp"]` names; the run's trace id names the run."""

    agent = "agent"

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.options, self.url = options, url
        self.provider = self._provider(TracerProvider, Resource.create({"service.name": self.agent}))
        self.provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=options["otlp"])))
        trace.set_tracer_provider(self.provider)
        self.tracer = self.provider.get_tracer(f"{self.agent}-app")

    def _provider(self, sdk_provider: Any, resource: Any) -> Any:
        return sdk_provider(resource=resource)

    def body(self, task: str) -> str:
        raise NotImplementedError

    def _root(self, task: str) -> Any:
        raise NotImplementedError

    def _output(self, root: Any, output: str) -> None:
        raise NotImplementedError

    def traced(self, name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        """`f` as this instrumentation's tool span."""
        raise NotImplementedError

    def instrumented(self, instrumentor: Any, tools: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
        """`instrumentor` (this instrumentation's, of the SDK the app calls) writing to this recorder's provider, and
        `tools` as this instrumentation's tool spans: how an app under it is set up."""
        instrumentor.instrument(tracer_provider=self.provider)
        return {name: self.traced(name, f) for name, f in tools.items()}

    def run(self, task: str) -> str:
        from opentelemetry.trace import Status as SpanStatus, StatusCode

        with self._root(task) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                self._output(root, self.body(task))
            except Exception as exc:  # noqa: BLE001 - the root records the failure
                root.record_exception(exc)
                root.set_status(SpanStatus(StatusCode.ERROR))
        return trace_id

    def close(self) -> None:
        self.provider.shutdown()


class OpenInferenceRecorder(_ForeignRecorder):
    """The app's root an OpenInference AGENT span (OpenInference's own TracerProvider, so OITracer's decorators work)."""

    def _provider(self, sdk_provider: Any, resource: Any) -> Any:
        from openinference.instrumentation import TracerProvider

        return TracerProvider(resource=resource)

    def _root(self, task: str) -> Any:
        from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes

        return self.tracer.start_as_current_span(self.agent, attributes={
            SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.AGENT.value, SpanAttributes.INPUT_VALUE: task})

    def _output(self, root: Any, output: str) -> None:
        from openinference.semconv.trace import SpanAttributes

        root.set_attribute(SpanAttributes.OUTPUT_VALUE, output)

    def traced(self, name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        """`f` as an OITracer TOOL span."""
        return self.tracer.tool(f)

    def openai_instrumentor(self) -> Any:
        """OpenInference's instrumentor of the openai SDK (for `instrumented`)."""
        from openinference.instrumentation.openai import OpenAIInstrumentor

        return OpenAIInstrumentor()


class TraceloopRecorder(_ForeignRecorder):
    """The app's root and tools as traceloop workflow / tool spans (what traceloop-sdk's @workflow and @tool write)."""

    def openai_instrumentor(self) -> Any:
        """OpenLLMetry's instrumentor of the openai SDK (for `instrumented`)."""
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        return OpenAIInstrumentor()

    def _root(self, task: str) -> Any:
        return self.tracer.start_as_current_span(f"{self.agent}.workflow", attributes={
            "traceloop.span.kind": "workflow", "traceloop.entity.name": self.agent, "traceloop.workflow.name": self.agent,
            "traceloop.entity.input": json.dumps({"args": [task], "kwargs": {}})})

    def _output(self, root: Any, output: str) -> None:
        root.set_attribute("traceloop.entity.output", json.dumps(output))

    def traced(self, name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        """`f` as a traceloop tool span: its kwargs in, its result out, an exception as the span's error."""
        from opentelemetry.trace import Status as SpanStatus, StatusCode

        def call(**kwargs: Any) -> Any:
            with self.tracer.start_as_current_span(f"{name}.tool", attributes={
                    "traceloop.span.kind": "tool", "traceloop.entity.name": name,
                    "traceloop.entity.input": json.dumps({"args": [], "kwargs": kwargs})}) as span:
                try:
                    result = f(**kwargs)
                except Exception as exc:
                    span.record_exception(exc)
                    span.set_status(SpanStatus(StatusCode.ERROR, str(exc)))
                    raise
                span.set_attribute("traceloop.entity.output", json.dumps(result))
                return result
        return call


def unlisted(scores: list[Any], diff_missed: dict[str, str], check_missed: dict[str, str],
             false_alarms: dict[str, str]) -> dict[str, set[str]]:
    """What a set's scores show that its lists do not name: diff and check misses, warned good runs (a miss fixed later
    is no trouble: the lists then say more than is missed)."""
    return {"diff": {s.pair.id for s in scores if not s.diff_ok} - set(diff_missed),
            "check": {s.pair.id for s in scores if not s.check_ok} - set(check_missed),
            "alarms": {s.pair.id for s in scores if s.alarms} - set(false_alarms)}
