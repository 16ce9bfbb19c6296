"""A fourth held-out fault-injection set for `diff` and `check`: a data-analysis agent that answers with SQL, run
through real agent frameworks.

    python tests/analysis/heldout4.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout4.py --score DIR [...]       # the runs a call left in DIR, scored again

Not order support, travel or literature: a warehouse analyst asked for a region's quarterly revenue and its change
from the quarter before. It describes the sales table, runs two SQL queries (in parallel: the two quarters),
publishes the figure to the dashboard the request names and answers in the format the request states. Recorded
through the frameworks' own tool execution, each recorder in a process of its own, with nothing but
`agentotel.instrument()` (no `@agentotel.tool`: the integrations make the tool steps):

- `agents`: the OpenAI Agents SDK, an intake agent handing over to the analyst (function tools; the analyst can
  hand back), or to a billing agent;
- `langgraph`: LangGraph's create_react_agent with ChatOpenAI and @tool (a ToolNode running the two queries in
  parallel, tool errors handed to the model as ToolMessages with status error);
- `pydantic-ai`: tool_plain and tool (with RunContext), the analyst's instructions a function of the run step;
- `oi-lg`: the same LangGraph agent under OpenInference's langchain instrumentation, the spans sent by OTLP through
  agentotel-collector (a foreign dialect end to end).

The model on 127.0.0.1 reads the conversation it is sent. Faults prefer what the earlier sets cover least (MAST,
TRAIL, ToolScan, AgentErrorTaxonomy): a similar but wrong tool (the 1 % sample), an argument value found nowhere
(a dashboard id), a value from the wrong place (another region), an answer contradicting its results, a handoff to
the wrong agent, a handoff loop, a handoff that drops the conversation, the stated answer format broken, a tool
error the framework hands back and the model glosses over, a result cut short or in a new shape, an empty result
answered anyway, history dropped or rewritten, instructions changed, a tool's description changed, premature
termination. Good runs vary legitimately: other regions, ids and numbers, a null optional field, the two queries in
the other order, a paraphrase around the stated format, and a query the warehouse refuses once with a 503 (the
model asks again). Ground truth is located on the recorded faulty run by what its steps did (heldout.py's
locators).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from shapes import Status, reply  # noqa: E402

MODEL = "gpt-4o-mini"
AGENT = "data-desk"
SYSTEM = ("You are a data analyst for the sales warehouse. Describe a table before you query it, take figures from "
          "run_sql, publish every figure you report to the dashboard named in the request, then answer.")
NO_PUBLISH = "You are a data analyst for the sales warehouse. Answer questions with SQL."  # the publish rule is gone
OTHER = "You are a friendly assistant. Keep answers short and cheerful."
INTAKE = "You are the intake desk. Route data questions to the analyst and invoice questions to billing."
BILLING = "You are the billing desk. Help with invoices and refunds only."
REGIONS = ["EMEA", "APAC", "AMER", "LATAM"]
FORMAT = "REVENUE: <amount> EUR; CHANGE: <+/-pct>%"
Q3, Q2 = "2026-Q3", "2026-Q2"
DEPRECATED = "Deprecated: do not call. Use sample_sql instead."


class Now:
    fault: str | None = None
    variant = 0
    failed: set[str] = set()
    turn = 0


def _start(fault: str | None, variant: int) -> None:
    Now.fault, Now.variant, Now.failed, Now.turn = fault, variant, set(), 0


def dashboard(v: int) -> str:
    return f"D-{4400 + 13 * v}"


def task(v: int) -> str:
    return (f"What was {REGIONS[v % 4]} revenue in {Q3}, and how did it change from {Q2}? Publish it to dashboard "
            f"{dashboard(v)}. Answer exactly as '{FORMAT}'.")


def revenue(region: str, quarter: str) -> float:
    v, r = Now.variant, REGIONS.index(region) if region in REGIONS else 7
    base = 1_180_000 + 83_117 * v + 41_003 * r
    return round(base + (0 if quarter == Q3 else -37_250 - 9_011 * v) + 0.45, 2)


# ---- the tools (plain functions; each framework declares them its own way) -------------------------------------


def describe_table(table: str) -> str:
    """The columns of a warehouse table, with their types, its row count and its comment."""
    if table != "sales":
        raise ValueError(f"Catalog Error: table {table!r} does not exist")
    comment = None if Now.variant % 2 else "Regions: APAC, AMER, EMEA, LATAM. One row per order line."
    return json.dumps({"table": "sales", "columns": [{"name": "region", "type": "VARCHAR"}, {"name": "quarter", "type": "VARCHAR"},
                                                     {"name": "revenue", "type": "DECIMAL(12,2)"}],
                       "row_count": 48_210_000 + 1_337 * Now.variant, "comment": comment})


def _query(query: str) -> tuple[str, str]:
    region = re.search(r"region\s*=\s*'([^']*)'", query)
    quarter = re.search(r"quarter\s*=\s*'([^']*)'", query)
    return (region.group(1) if region else "", quarter.group(1) if quarter else "")


def run_sql(query: str) -> str:
    """Runs a SQL query on the sales warehouse and returns its result (columns and rows)."""
    region, quarter = _query(query)
    if Now.fault == "query_denied":
        raise PermissionError("permission denied for relation sales (role analyst_ro lacks SELECT)")
    if Now.variant >= 2 and quarter == Q3 and "sql" not in Now.failed:  # transient: the model asks again (a good variation)
        Now.failed.add("sql")
        raise ConnectionError("503 Service Unavailable: warehouse busy, retry the query")
    rows = [[revenue(region, quarter)]] if region in REGIONS and quarter in (Q3, Q2) else []
    if Now.fault == "empty_answered" and quarter == Q2:
        rows = []
    if Now.fault == "shape_change":
        return json.dumps({"data": {"records": [{"revenue": r[0]} for r in rows]}, "meta": {"engine": "v2"}})
    text = json.dumps({"columns": ["revenue"], "rows": rows, "row_count": len(rows), "cached": None if Now.variant % 2 else False})
    if Now.fault == "result_cut" and quarter == Q3:
        return text[:32] + " ...[truncated]"
    return text


def sample_sql(query: str) -> str:
    """Runs a SQL query on a 1% sample of the sales warehouse: fast, for trying a query out, not for reporting."""
    region, quarter = _query(query)
    rows = [[round(revenue(region, quarter) * 0.0102, 2)]] if region in REGIONS else []
    return json.dumps({"columns": ["revenue"], "rows": rows, "row_count": len(rows), "sampled": 0.01})


def publish(dashboard_id: str, metric: str, value: float) -> str:
    """Publishes a metric's value to a dashboard."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"value must be a number, got {value!r}")
    return json.dumps({"dashboard_id": dashboard_id, "metric": metric, "value": value, "version": 3 + Now.variant,
                       "published_at": f"2026-10-0{1 + Now.variant}T09:00:00Z"})


def email_results(to: str, subject: str, body: str) -> str:
    """Emails a result to an address."""
    return json.dumps({"sent": True, "to": to, "message_id": f"m-{7000 + Now.variant}"})


TOOLS: dict[str, Callable[..., str]] = {f.__name__: f for f in (describe_table, run_sql, sample_sql, publish, email_results)}


def description(name: str) -> str:
    if Now.fault == "description_changed" and name == "run_sql":
        return DEPRECATED
    return TOOLS[name].__doc__ or ""


# ---- the model: reads the chat.completions request it is sent ----------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content or "")


def _parsed(text: str) -> Any:
    value: Any = text
    while isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return value


def _figure(value: Any) -> float | None:
    """The revenue a query's result holds (None: no rows)."""
    if isinstance(value, dict) and "rows" in value:
        return value["rows"][0][0] if value["rows"] else None
    if isinstance(value, dict) and "data" in value:
        records = value["data"].get("records") or []
        return records[0]["revenue"] if records else None
    if isinstance(value, str):  # cut short: the digits it still shows
        m = re.search(r"\[\[(\d+)", value)
        return float(m.group(1)) if m else None
    return None


def answer(q3: float, q2: float | None, region: str, dash: str) -> str:
    change = "n/a" if not q2 else f"{(q3 - q2) / q2 * 100:+.1f}"
    text = f"REVENUE: {q3:.2f} EUR; CHANGE: {change}%"
    return f"Published to {dash}. {text}" if Now.variant % 2 else text  # a paraphrase around the stated format


def model(body: dict[str, Any]) -> dict[str, Any]:
    fault, v = Now.fault, Now.variant
    messages = body.get("messages") or []
    offered = {t["function"]["name"]: t["function"].get("description") or "" for t in body.get("tools") or ()}
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    if "intake desk" in system:
        return reply(None, ("transfer_to_billing" if fault == "wrong_handoff" else "transfer_to_analyst", {}))
    if "billing desk" in system:
        return reply("I can only help with invoices and refunds. Please ask the data team about revenue.")
    if "data analyst" not in system:
        return reply("Great question! Revenue is looking healthy - have a wonderful day!")
    if fault == "handoff_loop" and "transfer_to_intake" in offered:
        return reply(None, ("transfer_to_intake", {}))
    asked = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
    m = re.search(r"What was (\w+) revenue", asked)
    d = re.search(r"dashboard (D-\d+)", asked)
    if m is None or d is None:
        return reply("Which region and quarter do you need, and which dashboard should I publish to?")
    region, dash = m.group(1), d.group(1)
    calls = {c["id"]: (c["function"]["name"], _parsed(c["function"]["arguments"])) for mm in messages
             for c in mm.get("tool_calls") or () if not c["function"]["name"].startswith("transfer_to")}
    outs = []  # (name, arguments, value, error) in the order the results came
    for mm in messages:
        if mm.get("role") == "tool" and mm.get("tool_call_id") in calls:
            name, arguments = calls[mm["tool_call_id"]]
            text = _text(mm.get("content"))
            value = _parsed(text)
            error = not isinstance(value, (dict, list)) and not text.startswith('{"columns"') or isinstance(value, dict) and "error" in value
            outs.append((name, arguments, value, text if error else None))
    sql = "sample_sql" if fault == "wrong_tool" or "Deprecated" in offered.get("run_sql", "") else "run_sql"
    if fault == "wrong_region":  # the region named first in the table's comment, not the one asked for
        region = next(r for r in REGIONS if r != region)
    queries = {q: f"SELECT SUM(revenue) AS revenue FROM sales WHERE region = '{region}' AND quarter = '{q}'" for q in (Q3, Q2)}
    latest: dict[str, tuple[Any, str | None]] = {}
    for name, arguments, value, error in outs:
        if name in ("run_sql", "sample_sql"):
            latest[_query(arguments.get("query", ""))[1]] = (value, error)
    described = any(n == "describe_table" for n, *_ in outs)
    if not described and not latest and fault != "skip_describe":
        return reply(None, ("describe_table", {"table": "sales"}))
    figures = {q: _figure(value) for q, (value, error) in latest.items() if error is None or "truncated" in error}
    errors = {q: error for q, (value, error) in latest.items() if error is not None and q not in figures}
    if fault == "query_denied" and errors:  # the refusal glossed over: figures from nowhere
        return reply(answer(1_512_340.00, 1_455_100.00, region, dash))
    tries = {q: sum(1 for n, a, *_ in outs if n in ("run_sql", "sample_sql") and _query(a.get("query", ""))[1] == q) for q in (Q3, Q2)}
    again = [q for q in (Q3, Q2) if q not in latest or q in errors and tries[q] < 3 and ("503" in errors[q] or "try again" in errors[q].lower())]
    if again:
        order = again if v % 2 == 0 else list(reversed(again))
        return reply(None, *[(sql, {"query": queries[q]}) for q in order])
    if errors:
        return reply(f"The warehouse refused the query: {next(iter(errors.values()))}")
    q3, q2 = figures.get(Q3), figures.get(Q2)
    if fault == "repeat_query" and sum(1 for n, a, value, error in outs if n == sql and error is None and _query(a.get("query", ""))[1] == Q3) < 2:
        return reply(None, (sql, {"query": queries[Q3]}))  # asks again for what it has just read
    if q3 is None:
        return reply(f"The warehouse has no {region} rows for {Q3}.")
    if q2 is None and fault != "empty_answered":
        return reply(f"No {Q2} rows for {region}. " + answer(q3, None, region, dash))
    if q2 is None:  # no rows for the quarter before, and it answers with a change anyway
        q2 = round(q3 / 1.064, 2)
    published = [a for n, a, value, error in outs if n == "publish" and error is None]
    failed_publish = [a for n, a, value, error in outs if n == "publish" and error is not None]
    if "publish every figure" in system and not published:
        target = dash if fault != "made_up_dashboard" else f"D-{int(dash[2:]) + 5021}"
        value: Any = q3 if fault != "value_as_text" or failed_publish else f"{q3 / 1e6:.2f}M"
        return reply(None, ("publish", {"dashboard_id": target, "metric": f"revenue_{region.lower()}_{Q3.lower()}", "value": value}))
    if fault == "forbidden_email" and not any(n == "email_results" for n, *_ in outs):
        return reply(None, ("email_results", {"to": "finance-all@partner-corp.example", "subject": f"{region} revenue {Q3}",
                                              "body": answer(q3, q2, region, dash)}))
    if fault == "misread":  # reads the quarters the wrong way round
        q3, q2 = q2, q3
    if fault == "made_up_figure":
        q3 = round(q3 + 250_000.0, 2)
    if fault == "format_broken":
        return reply(f"{region} brought in about {q3 / 1e6:.1f} million euros in {Q3}, a little more than in {Q2}.")
    return reply(answer(q3, q2, region, dash))


# ---- the harness: what each turn sends -------------------------------------------------------------------------


def instructions(turn: int) -> str:
    if Now.fault == "role_swap":
        return OTHER
    return NO_PUBLISH if Now.fault == "instructions_changed" and turn >= 2 else SYSTEM


def window(turn: int, messages: list[Any], *, tool_role: Callable[[Any], bool], calls_of: Callable[[Any], bool],
           rewrite: Callable[[Any, str], Any]) -> list[Any]:
    """What a turn sends, in the framework's own message objects: all of them, or what a faulty memory kept."""
    if Now.fault == "history_dropped" and turn >= 2:
        last = max((i for i, m in enumerate(messages) if calls_of(m)), default=None)
        if last is not None:
            return messages[:2] + messages[last:]  # the system prompt and the question, then the latest turn only
    if Now.fault == "history_rewritten" and turn >= 2:  # a faulty summariser swaps two digits of every figure
        return [rewrite(m, re.sub(r"\[\[(\d)(\d)(\d)", r"[[\1\3\2", _text(m.content))) if tool_role(m) else m for m in messages]
    return messages


def max_turns() -> int:
    return 2 if Now.fault == "premature_stop" else 10


# ---- recorders ------------------------------------------------------------------------------------------------


class Recorder:
    def __init__(self, options: dict[str, Any], url: str) -> None:
        self.options, self.url = options, url
        import agentotel

        agentotel.instrument(directory=options["store"], service_name=AGENT)

    def run(self, question: str) -> str:
        import agentotel

        with agentotel.run(AGENT, task=question) as run:
            try:
                run.output = self.body(question)
            except Exception:  # noqa: BLE001 - the run records the failure
                pass
        return run.id

    def body(self, question: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        import agentotel

        agentotel.shutdown()


class Agents(Recorder):
    """The OpenAI Agents SDK: intake -> analyst (function tools; the analyst may hand back) or -> billing."""

    def body(self, question: str) -> str:
        import openai
        from agents import Agent, HandoffInputData, OpenAIChatCompletionsModel, Runner, function_tool, handoff

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0))
        turn = {"n": 0}

        def analyst_instructions(context: Any, agent: Any) -> str:
            n, turn["n"] = turn["n"], turn["n"] + 1
            return instructions(n)

        tools = [function_tool(f, description_override=description(name)) for name, f in TOOLS.items()]
        analyst = Agent(name="analyst", instructions=analyst_instructions, tools=tools, model=chat)
        billing = Agent(name="billing", instructions=BILLING, model=chat)

        def forget(data: HandoffInputData) -> HandoffInputData:  # a faulty handoff filter: the conversation is not passed on
            return data.clone(input_history=(), pre_handoff_items=(), new_items=())

        intake = Agent(name="intake", instructions=INTAKE, model=chat,
                       handoffs=[handoff(analyst, input_filter=forget) if Now.fault == "handoff_forgets" else analyst, billing])
        analyst.handoffs = [intake]

        async def go() -> str:
            result = await Runner.run(intake, question, max_turns=max_turns())
            return str(result.final_output)
        return asyncio.run(go())


def _langgraph(url: str, question: str) -> str:
    import warnings

    from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import ToolNode, create_react_agent

    tools = []
    for name, f in TOOLS.items():
        t = tool(f)
        t.description = description(name)
        tools.append(t)
    llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=url, max_retries=0)
    turn = {"n": 0}

    def prompt(state: dict[str, Any]) -> list[Any]:
        n, turn["n"] = turn["n"], turn["n"] + 1
        sent = window(n, [SystemMessage(instructions(n)), *state["messages"]], tool_role=lambda m: isinstance(m, ToolMessage),
                      calls_of=lambda m: isinstance(m, AIMessage) and bool(m.tool_calls),
                      rewrite=lambda m, text: m.model_copy(update={"content": text}))
        return sent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the tool node hands a failing tool's error to the model (a ToolMessage with status error), as most
        # LangGraph agents are set up
        graph = create_react_agent(llm, ToolNode(tools, handle_tool_errors=True), prompt=prompt)
    out = graph.invoke({"messages": [("user", question)]}, {"recursion_limit": 2 * max_turns() + 1})
    return str(out["messages"][-1].content)


class LangGraph(Recorder):
    def body(self, question: str) -> str:
        return _langgraph(self.url, question)


class PydanticAI(Recorder):
    def body(self, question: str) -> str:
        import openai
        from pydantic_ai import Agent, ModelRetry, RunContext
        from pydantic_ai.capabilities import ProcessHistory
        from pydantic_ai.messages import ModelRequest, ToolReturnPart
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
        from pydantic_ai.usage import UsageLimits

        client = openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0)
        chat = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        turn = {"n": 0}

        def keep(messages: list[Any]) -> list[Any]:
            n, turn["n"] = turn["n"], turn["n"] + 1
            if Now.fault == "history_dropped" and n >= 2 and len(messages) > 3:
                return messages[:1] + messages[-2:]
            if Now.fault == "history_rewritten" and n >= 2:
                return [ModelRequest(parts=[ToolReturnPart(p.tool_name, re.sub(r"\[\[(\d)(\d)(\d)", r"[[\1\3\2", str(p.content)), p.tool_call_id)
                                            if isinstance(p, ToolReturnPart) else p for p in m.parts], instructions=m.instructions)
                        if isinstance(m, ModelRequest) else m for m in messages]
            return messages

        agent = Agent(chat, name="analyst", retries=3, capabilities=[ProcessHistory(keep)])

        @agent.instructions
        def analyst(ctx: RunContext[None]) -> str:
            return instructions(ctx.run_step - 1)

        def plain(f: Callable[..., str]) -> Callable[..., str]:
            import functools

            @functools.wraps(f)  # pydantic-ai reads the tool's schema off the signature
            def call(**kwargs: Any) -> str:
                try:
                    return f(**kwargs)
                except (ConnectionError, PermissionError, ValueError, TypeError) as exc:
                    raise ModelRetry(str(exc)) from None
            return call

        for name, f in TOOLS.items():
            if name == "publish":
                continue
            agent.tool_plain(plain(f), description=description(name))

        globals()["RunContext"] = RunContext  # the tool's annotations are strings here, read in this module's namespace

        @agent.tool(description=description("publish"))
        def publish(ctx: RunContext[None], dashboard_id: str, metric: str, value: float) -> str:
            return plain(TOOLS["publish"])(dashboard_id=dashboard_id, metric=metric, value=value)

        return str(agent.run_sync(question, usage_limits=UsageLimits(request_limit=max_turns())).output)


class OiLangGraph:
    """The LangGraph agent under OpenInference's langchain instrumentation; spans by OTLP to agentotel-collector."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.url = url
        self.provider = TracerProvider(resource=Resource.create({"service.name": AGENT}))
        self.provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=options["otlp"])))
        trace.set_tracer_provider(self.provider)
        LangChainInstrumentor().instrument(tracer_provider=self.provider)
        self.tracer = self.provider.get_tracer("data-desk-app")

    def run(self, question: str) -> str:
        from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
        from opentelemetry.trace import Status as SpanStatus, StatusCode

        with self.tracer.start_as_current_span(AGENT, attributes={
                SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.AGENT.value,
                SpanAttributes.INPUT_VALUE: question}) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                root.set_attribute(SpanAttributes.OUTPUT_VALUE, _langgraph(self.url, question))
            except Exception as exc:  # noqa: BLE001 - the root records the failure
                root.record_exception(exc)
                root.set_status(SpanStatus(StatusCode.ERROR))
        return trace_id

    def close(self) -> None:
        self.provider.shutdown()


RECORDERS: dict[str, Any] = {"agents": Agents, "langgraph": LangGraph, "pydantic-ai": PydanticAI, "oi-lg": OiLangGraph}
HISTORY = (0, 1)  # earlier healthy runs: other regions, ids, figures
ODD = {"langgraph", "pydantic-ai"}  # good and faulty runs of variant 3 (the queries the other way round, a null comment);
# the others variant 2. Both meet the warehouse's 503 once.


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    from shapes import serve

    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    with serve(_served) as url:
        recorder = RECORDERS[options["recorder"]](options, url)
        manifest = []
        for v in HISTORY:
            _start(None, v)
            manifest.append({"fault": None, "role": "history", "run": recorder.run(task(v))})
        variant = 3 if options["recorder"] in ODD else 2
        for fault in options["faults"]:
            for role, f in (("good", None), ("faulty", fault)):
                _start(f, variant)
                manifest.append({"fault": fault, "role": role, "run": recorder.run(task(variant))})
        recorder.close()
    return manifest


def _served(body: dict[str, Any]) -> dict[str, Any]:
    try:
        return model(body)
    except Status:
        raise
    except Exception as exc:  # a bug here is the harness's: say so in the recorder's stderr
        import traceback

        traceback.print_exc()
        raise Status(500, f"scripted model failed: {exc}") from exc


# ---- the pairs; where each fault's cause shows on the recorded faulty run ---------------------------------------


def pairs() -> list[Any]:
    from heldout import Pair, _asked, _llm, _names, answer, asking, last_step, nth_llm, tool_step
    from heldout2 import context_cut

    def rule(recorder: str, layer: str, fault: str, taxonomy: str, where: Callable[..., int | None], **kw: Any) -> Any:
        return Pair(f"{layer}-{recorder}-{fault.replace('_', '-')}", recorder, layer, fault, taxonomy, where, **kw)

    def handing(name: str) -> Callable[[list[dict[str, Any]]], int | None]:
        """The first model call that handed over to `name`'s agent."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            return next((s["index"] for s in _llm(steps) if f"transfer_to_{name}" in _names(s)), None)
        return find

    def given(phrase: str, absent: bool = False) -> Callable[[list[dict[str, Any]]], int | None]:
        """The first model call whose input holds `phrase` (or, with absent, the first without it)."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            return next((s["index"] for s in steps if s["type"] == "llm" and (phrase in json.dumps(s.get("input"))) != absent), None)
        return find

    def analyst_first(steps: list[dict[str, Any]]) -> int | None:
        """The analyst's first model call: the first offered run_sql (after the handoff, under the Agents SDK)."""
        after = handing("analyst")(steps) or 0
        return next((s["index"] for s in steps if s["type"] == "llm" and s["index"] > after), None)

    def key(name: str, arguments: Any) -> str:
        values = [str(arguments[k]) for k in sorted(arguments)] if isinstance(arguments, dict) else [str(arguments)]
        return json.dumps([name, values])

    def asked_again(steps: list[dict[str, Any]]) -> int | None:
        """The first model call that asked for a call which had already answered it (not a retry after an error)."""
        answered: set[str] = set()
        for s in steps:
            if s["type"] == "tool" and s["status"] == "ok":
                answered.add(key(s.get("tool_name") or s["name"], s.get("input")))
            elif s in _llm(steps) and {key(n, a) for n, a in _asked(s)} & answered:
                return s["index"]
        return None

    def empty_query(steps: list[dict[str, Any]]) -> int | None:
        return tool_step("run_sql", where=lambda s: '"rows": []' in json.dumps(s.get("output")).replace('\\"', '"'))(steps)

    def cut_query(steps: list[dict[str, Any]]) -> int | None:
        return tool_step("run_sql", where=lambda s: "truncated" in str(s.get("output")))(steps)

    def denied(steps: list[dict[str, Any]]) -> int | None:
        return tool_step("run_sql", where=lambda s: "permission denied" in json.dumps([s.get("output"), s.get("error")]))(steps)

    def shaped(steps: list[dict[str, Any]]) -> int | None:
        return tool_step("run_sql", where=lambda s: "records" in str(s.get("output")))(steps)

    def rewritten(steps: list[dict[str, Any]]) -> int | None:
        """The first model call given a figure no query returned."""
        returned = set(re.findall(r"\[\[(\d+\.?\d*)", " ".join(str(s.get("output")) for s in steps if s["type"] == "tool")))
        for s in _llm(steps):
            shown = set(re.findall(r"\[\[(\d+\.?\d*)", json.dumps(s.get("input")).replace('\\"', '"')))
            if shown - returned:
                return s["index"]
        return None

    first = nth_llm(0)
    return [
        # the OpenAI Agents SDK: intake -> analyst
        rule("agents", "workflow", "wrong_handoff", "MAST FM-2.x Inter-agent misalignment: handed to the wrong agent", handing("billing")),
        rule("agents", "workflow", "handoff_loop", "MAST FM-1.3 Step repetition (a handoff loop)", handing("intake")),
        rule("agents", "memory", "handoff_forgets", "MAST FM-1.4 Loss of conversation history (handoff filter)", analyst_first),
        rule("agents", "prompt", "instructions_changed", "MAST FM-1.1 Disobey task specification (prompt changed mid-run)",
             given(NO_PUBLISH)),
        rule("agents", "tool", "made_up_dashboard", "ToolScan Incorrect argument value (an id in no task or result)", asking("publish")),
        rule("agents", "tool", "wrong_tool", "ToolScan Wrong tool selection (a similar tool)", asking("sample_sql")),
        rule("agents", "model", "misread", "TRAIL Wrong tool output interpretation", answer),
        rule("agents", "model", "format_broken", "MAST FM-1.1 Disobey task specification (answer format)", answer),
        rule("agents", "product", "forbidden_email", "AgentErrorTaxonomy Action: a forbidden action", asking("email_results")),
        rule("agents", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
        rule("agents", "tool", "description_changed", "ToolScan Tool documentation error (description offered differs)", analyst_first),
        rule("agents", "tool", "query_denied", "TRAIL Authentication errors (error handed back, glossed over)", answer, diff_where=denied),
        # LangGraph under agentotel
        rule("langgraph", "tool", "query_denied", "TRAIL Authentication errors (ToolNode error glossed over)", answer, diff_where=denied),
        rule("langgraph", "tool", "shape_change", "TRAIL API issues (the result's structure changed)", shaped),
        rule("langgraph", "tool", "result_cut", "TRAIL Tool output truncated", cut_query),
        rule("langgraph", "memory", "history_dropped", "MAST FM-1.4 Loss of conversation history", context_cut),
        rule("langgraph", "memory", "history_rewritten", "AgentErrorTaxonomy Memory: a summary that changed the facts", rewritten),
        rule("langgraph", "prompt", "instructions_changed", "MAST FM-1.1 Disobey task specification (prompt changed mid-run)",
             given(NO_PUBLISH)),
        rule("langgraph", "model", "repeat_query", "MAST FM-1.3 Step repetition", asked_again),
        rule("langgraph", "model", "made_up_figure", "TRAIL Hallucinated facts (a figure found in no result)", answer),
        rule("langgraph", "product", "empty_answered", "TRAIL Poor information retrieval (no rows, answered anyway)", answer,
             diff_where=empty_query),
        rule("langgraph", "product", "skip_describe", "AgentErrorTaxonomy Planning: required step skipped", asking("run_sql")),
        rule("langgraph", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
        rule("langgraph", "tool", "value_as_text", "ToolScan Invalid argument type", asking("publish")),
        # pydantic-ai under agentotel
        rule("pydantic-ai", "tool", "made_up_dashboard", "ToolScan Incorrect argument value (an id in no task or result)", asking("publish")),
        rule("pydantic-ai", "model", "wrong_region", "MAST FM-2.6 Reasoning-action mismatch (a value from the wrong place)", asking("run_sql")),
        rule("pydantic-ai", "model", "format_broken", "MAST FM-1.1 Disobey task specification (answer format)", answer),
        rule("pydantic-ai", "memory", "history_dropped", "MAST FM-1.4 Loss of conversation history", context_cut),
        rule("pydantic-ai", "prompt", "instructions_changed", "MAST FM-1.1 Disobey task specification (prompt changed mid-run)",
             given(NO_PUBLISH)),
        rule("pydantic-ai", "tool", "description_changed", "ToolScan Tool documentation error (description offered differs)", first),
        rule("pydantic-ai", "product", "forbidden_email", "AgentErrorTaxonomy Action: a forbidden action", asking("email_results")),
        rule("pydantic-ai", "model", "misread", "TRAIL Wrong tool output interpretation", answer),
        rule("pydantic-ai", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
        rule("pydantic-ai", "tool", "shape_change", "TRAIL API issues (the result's structure changed)", shaped),
        rule("pydantic-ai", "prompt", "role_swap", "MAST FM-1.2 Disobey role specification (another agent's prompt)", first),
        # LangGraph under OpenInference's langchain instrumentation, through agentotel-collector
        rule("oi-lg", "tool", "query_denied", "TRAIL Authentication errors (ToolNode error glossed over)", answer, diff_where=denied),
        rule("oi-lg", "tool", "wrong_tool", "ToolScan Wrong tool selection (a similar tool)", asking("sample_sql")),
        rule("oi-lg", "model", "made_up_figure", "TRAIL Hallucinated facts (a figure found in no result)", answer),
        rule("oi-lg", "model", "repeat_query", "MAST FM-1.3 Step repetition", asked_again),
        rule("oi-lg", "memory", "history_dropped", "MAST FM-1.4 Loss of conversation history", context_cut),
        rule("oi-lg", "prompt", "instructions_changed", "MAST FM-1.1 Disobey task specification (prompt changed mid-run)",
             given(NO_PUBLISH)),
        rule("oi-lg", "product", "empty_answered", "TRAIL Poor information retrieval (no rows, answered anyway)", answer,
             diff_where=empty_query),
        rule("oi-lg", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
        rule("oi-lg", "tool", "result_cut", "TRAIL Tool output truncated", cut_query),
        rule("oi-lg", "model", "format_broken", "MAST FM-1.1 Disobey task specification (answer format)", answer),
    ]


# Pairs the detectors still miss, and why (the slow test holds the set to exactly these).
DIFF_MISSED: dict[str, str] = {
    # (a miss only some recordings have: which of the two refused spans ends first varies)
    "tool-oi-lg-query-denied": "both parallel queries were refused; diff names the other one of the two (their canonical "
                               "order), which the locator, by time, does not",
}
# (session 15: the two misread pairs, an answer swapping two figures the tools returned, are answer_misread's)
CHECK_MISSED: dict[str, str] = {}

# The data desk's policy: results go to dashboards, never by email; a query needs the table described first.
POLICY = {"forbidden_tools": ["email_results"], "required_before": {"run_sql": ["describe_table"]}}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
prepare = kit.through_collector("oi-lg")


def record(root: Path, chosen: list[Any]) -> dict[str, list[kit.Recorded]]:
    return kit.record(Path(__file__), root, chosen, prepare=prepare)


def score(root: Path, recorded: dict[str, list[kit.Recorded]]) -> list[Any]:
    return kit.score(root, recorded, lambda name: POLICY)


if __name__ == "__main__":
    if not kit.produce_main(produce):
        kit.main(Path(__file__), "heldout4-", pairs(), sys.argv[1:], prepare=prepare, policy=lambda name: POLICY)
