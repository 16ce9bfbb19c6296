"""A second held-out fault-injection set for `diff` and `check`: runs recorded the ways the detectors saw least.

    python tests/analysis/heldout2.py [RECORDER|PAIR ...]    # records the pairs, prints the table

Not the diagnosis benchmark's generator, not the framework twins, not heldout.py's agents: a travel desk
(search flights, read fare rules of the two cheapest in parallel, book one with bags, confirm) recorded five
ways, each in a process of its own (these instrumentations patch the SDKs for good):

- `oi`: a plain openai tool loop under the real OpenInference openai instrumentation; the app's root is an
  OpenInference CHAIN span and its tools are TOOL spans without any declared schema (`tool.parameters`); the
  in-process ParquetSpanExporter. No agentotel environment snapshot, no run attributes.
- `ollm`: the same loop under the real OpenLLMetry (traceloop) openai instrumentation, its tools as traceloop
  `tool` spans (`traceloop.entity.input` = `{"args": [], "kwargs": {...}}`) under a `workflow` span, sent over
  OTLP/HTTP to an agentotel-collector.
- `vercel`: spans as the Vercel AI SDK writes them (`ai.generateText` > `ai.generateText.doGenerate` and
  `ai.toolCall`, messages in its own content-part shape), built through the real OpenTelemetry SDK.
- `langgraph`: create_react_agent + ChatOpenAI under agentotel; harness faults through its `prompt` hook.
- `pydantic-ai`: a pydantic-ai agent under agentotel; arguments failing the tool's schema are pydantic-ai's
  own validation retry; harness faults through `history_processors` and usage limits.

The model on 127.0.0.1 (shapes.serve) reads the conversation it is sent. Faults come from MAST, TRAIL,
ToolScan and AgentErrorTaxonomy, preferring what the other sets cover least: hallucinated tool output,
wrong interpretation of a tool output, arguments failing the schema, goal deviation, unaware of termination,
premature termination, timeouts, auth errors returned as results, a rate limit not recovered from, context
handling failures, a required step skipped. Every good run varies legitimately from the agent's earlier
runs: other routes, ids and prices, a null optional field (`terminal`), the other order of parallel calls,
a paraphrased answer, and a model call the loop retries after a 429. Ground truth is located on the
recorded faulty run by what its steps did (heldout.py's locators), never by position in the corpus.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

import _heldout_kit as kit  # noqa: E402
from shapes import Status, reply, results, system, users  # noqa: E402

MODEL = "gpt-4o-mini"
AGENT = "trip-desk"
SYSTEM = ("You are the travel desk. Search flights for the route and date asked, read the fare rules before "
          "booking, book the cheapest flight with seats left for the passenger, then confirm with the booking reference.")
NO_RULES = ("You are the travel desk. Search flights for the route and date asked, book the cheapest flight with seats "
            "left for the passenger, then confirm with the booking reference.")  # the fare-rules clause is gone
OTHER = "You are a friendly assistant. Keep answers short and cheerful."
ROUTES = [("LIS", "BER"), ("OSL", "MAD"), ("DUB", "VIE"), ("CPH", "ATH")]
PASSENGERS = ["Ana Silva", "Ola Nordmann", "Sean Byrne", "Freja Holm"]
CARRIERS = ["TP", "SK", "EI", "LH"]


class Now:
    fault: str | None = None
    variant = 0
    calls = 0  # model requests of this run
    failed: set[str] = set()


def _start(fault: str | None, variant: int) -> None:
    Now.fault, Now.variant, Now.calls, Now.failed = fault, variant, 0, set()


def task(variant: int) -> str:
    origin, destination = ROUTES[variant % 4]
    return f"Book a flight from {origin} to {destination} on 2026-12-{10 + variant:02d} for {PASSENGERS[variant % 4]}, one checked bag."


# ---- the tools -----------------------------------------------------------------------------------------


def _flights(origin: str, destination: str, date: str) -> list[dict[str, Any]]:
    v = Now.variant
    out = []
    for i in range(3):
        n = 100 + 13 * v + 7 * i
        out.append({"id": f"{CARRIERS[(v + i) % 4]}{n}", "depart": f"{date}T{7 + 4 * i:02d}:{10 * v % 60:02d}",
                    "price_eur": round(89 + 23 * ((v + 2 * i) % 5) + 0.5 * i, 2), "seats_left": 0 if i == v % 3 else 3 + i,
                    "terminal": None if (v + i) % 2 else f"T{1 + i % 2}"})
    return out


def search_flights(origin: str, destination: str, date: str) -> dict[str, Any]:
    """Flights on a route and day: id, departure, price (EUR) and seats left."""
    if Now.fault == "search_timeout":
        raise TimeoutError("flight search upstream did not answer within 15 s")
    return {"route": f"{origin}-{destination}", "date": date, "flights": _flights(origin, destination, date)}


def get_fare_rules(flight_id: str) -> dict[str, Any]:
    """A flight's fare rules: refundable or not, change fee, bags included."""
    n = sum(map(ord, flight_id))
    return {"flight_id": flight_id, "refundable": n % 2 == 0, "change_fee_eur": 40 + n % 5 * 10, "bags_included": n % 3 == 0}


def book_flight(flight_id: str, passenger: str, bags: int) -> dict[str, Any]:
    """Book a seat on a flight for a passenger with a number of checked bags."""
    if not isinstance(bags, int) or isinstance(bags, bool):
        raise ValueError(f"bags must be an integer, got {bags!r}")
    if Now.fault == "book_401":
        return {"error": "401 Unauthorized: the booking session token has expired"}
    full = [f["id"] for f in _flights("", "", "2026-12-01") if f["seats_left"] == 0]
    if any(flight_id[2:] == f[2:] for f in full):
        raise RuntimeError(f"no seats left on {flight_id}")
    return {"booking_ref": f"BK{7340 + 17 * Now.variant + len(passenger)}", "flight_id": flight_id, "passenger": passenger, "bags": bags}


TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (search_flights, get_fare_rules, book_flight)}
SCHEMAS = {
    "search_flights": {"type": "object", "properties": {"origin": {"type": "string"}, "destination": {"type": "string"},
                                                        "date": {"type": "string"}}, "required": ["origin", "destination", "date"]},
    "get_fare_rules": {"type": "object", "properties": {"flight_id": {"type": "string"}}, "required": ["flight_id"]},
    "book_flight": {"type": "object", "properties": {"flight_id": {"type": "string"}, "passenger": {"type": "string"},
                                                     "bags": {"type": "integer"}}, "required": ["flight_id", "passenger", "bags"]},
}


def offered() -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "description": f.__doc__, "parameters": SCHEMAS[n]}} for n, f in TOOLS.items()]


# ---- the model -----------------------------------------------------------------------------------------


def _found(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The results the conversation carries (parsed dicts) and the failures (text that is not a result)."""
    out, errors = [], []
    for r in results(body):
        if isinstance(r, str):
            try:
                r = json.loads(r)
            except ValueError:
                pass
        if isinstance(r, dict) and "error" not in r:
            out.append(r)
        else:
            errors.append(str(r))
    return out, errors


def model(body: dict[str, Any]) -> dict[str, Any]:
    Now.calls += 1
    fault, v = Now.fault, Now.variant
    if v >= 2 and Now.calls == 2 and "429" not in Now.failed:  # the loop retries it: a good variation
        Now.failed.add("429")
        raise Status(429, "Rate limit reached for gpt-4o-mini: 200 requests per minute")
    if fault == "model_429" and Now.calls == 4:
        raise Status(429, "Rate limit reached for gpt-4o-mini: tokens per minute exceeded")
    if "travel desk" not in system(body):
        return reply("Happy to help! Where would you like to go, and when?")
    asked = " ".join(users(body))
    m = re.search(r"from ([A-Z]{3}) to ([A-Z]{3}) on (\d{4}-\d\d-\d\d)(?: for ([A-Z][a-z]+ [A-Z][a-z]+))?", asked)
    if m is None:
        return reply("Which route and date would you like?")
    origin, destination, date, passenger = m.groups()
    passenger = passenger or "Guest"
    found, errors = _found(body)
    searches = [r for r in found if "flights" in r]
    rules = {r["flight_id"]: r for r in found if "refundable" in r}
    bookings = [r for r in found if "booking_ref" in r]
    if not searches:
        if errors and fault == "search_timeout":  # goes on as if the search had answered: a made-up flight
            return reply(f"Booked {passenger} on TP 4410 from {origin} to {destination} on {date} at 08:05, EUR 119.00. "
                         f"Booking reference BK9921.")
        if fault == "goal_deviation":
            destination = "BCN" if destination != "BCN" else "MAD"
        return reply(None, ("search_flights", {"origin": origin, "destination": destination, "date": date}))
    flights = searches[-1]["flights"]
    open_ = sorted((f for f in flights if f["seats_left"] > 0), key=lambda f: f["price_eur"])
    pick = open_[0]
    if fault == "misread_output":  # takes the cheapest listed, the sold-out one, for the cheapest bookable
        pick = min(flights, key=lambda f: f["price_eur"])
    wants_rules = "fare rules" in system(body) and fault != "skip_rules"
    if wants_rules and pick["id"] not in rules and not bookings:
        ids = [pick["id"]] + [f["id"] for f in open_ if f["id"] != pick["id"]][:1]
        if v % 2:
            ids.reverse()  # another valid order
        return reply(None, *[("get_fare_rules", {"flight_id": i}) for i in ids])
    failed_booking = [e for e in errors if "seats" in e or "bags" in e]
    if not bookings and not (fault == "book_401" and errors):
        if failed_booking and fault == "misread_output":
            pick = open_[0]
        bags: Any = 1
        if fault == "bags_as_text" and not failed_booking:
            bags = "one"
        return reply(None, ("book_flight", {"flight_id": pick["id"], "passenger": passenger, "bags": bags}))
    if fault == "unaware_done" and len(searches) == 1:  # the booking is made, and it searches again
        return reply(None, ("search_flights", {"origin": origin, "destination": destination, "date": date}))
    ref = bookings[-1]["booking_ref"] if bookings else f"BK{7340 + 17 * v + len(passenger)}"
    flight = next(f for f in flights if f["id"] == (bookings[-1]["flight_id"] if bookings else pick["id"]))
    price = flight["price_eur"]
    if fault == "made_up_ref":
        ref, price = f"BK{int(ref[2:]) + 503}", round(price - 20, 2)
    rule = rules.get(flight["id"])
    note = "" if rule is None else (" The fare is refundable." if rule["refundable"] else
                                    f" The fare is not refundable; changes cost EUR {rule['change_fee_eur']}.")
    if v % 2:
        return reply(f"Done: {passenger}, {flight['id']} {origin}->{destination} {flight['depart'].replace('T', ' ')}, "
                     f"EUR {price:.2f}, reference {ref}.{note}")
    return reply(f"Booked {passenger} on {flight['id']} from {origin} to {destination}, departing {flight['depart'].replace('T', ' at ')}, "
                 f"EUR {price:.2f}. Booking reference {ref}.{note}")


# ---- the harness: what the loop sends and how long it goes on -------------------------------------------


def instructions() -> str:
    return {"prompt_swapped": OTHER, "rules_clause_dropped": NO_RULES}.get(Now.fault or "", SYSTEM)


def window(turn: int, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a turn sends: the whole conversation, or what a faulty context manager kept of it."""
    if Now.fault == "history_dropped" and turn >= 2:
        # keeps the system prompt, the task and the latest exchange: the search results are gone
        last = max(i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls"))
        return messages[:2] + messages[last:]
    if Now.fault == "task_truncated" and turn >= 1:
        cut = [dict(m) for m in messages]
        cut[1]["content"] = re.sub(r" for [A-Z][a-z]+ [A-Z][a-z]+", "", cut[1]["content"])  # a window cut mid-sentence
        return cut
    return messages


def max_turns() -> int:
    return 2 if Now.fault == "premature_stop" else 8


def run_only() -> int | None:
    return 1 if Now.fault == "parallel_dropped" else None


def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    return TOOLS[name](**arguments)


def plain_loop(create: Callable[[list[dict[str, Any]]], dict[str, Any]], on_tool: Callable[[str, str, dict[str, Any]], str],
               question: str) -> str:
    """An ordinary tool loop over chat-completions messages; retries a model call once after a 429 unless the
    fault is that it does not."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": instructions()}, {"role": "user", "content": question}]
    for turn in range(max_turns()):
        sent = window(turn, messages)
        try:
            message = create(sent)
        except Exception as exc:  # noqa: BLE001 - a rate limit, as the SDK raises it
            if "429" not in str(exc) and "rate" not in str(exc).lower() or Now.fault == "model_429":
                raise
            message = create(sent)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return message.get("content") or ""
        for call in calls[:run_only()]:
            arguments = json.loads(call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": on_tool(call["id"], call["function"]["name"], arguments)})
    return "I could not finish."


def _result_text(name: str, arguments: dict[str, Any]) -> str:
    try:
        return json.dumps(call_tool(name, arguments))
    except Exception as exc:  # noqa: BLE001 - the loop shows the model the error
        return f"Error: {exc}"


# ---- recorders: each runs in a process of its own -----------------------------------------------------


def _provider(store: str, otlp: str | None) -> Any:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": AGENT}))
    if otlp:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=otlp)))
    else:
        from agentotel.store import ParquetSpanExporter

        provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(store)))
    trace.set_tracer_provider(provider)
    return provider


def _openai_create(url: str) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
    import openai

    client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)

    def create(messages: list[dict[str, Any]]) -> dict[str, Any]:
        response = client.chat.completions.create(model=MODEL, messages=messages, tools=offered())
        return response.choices[0].message.model_dump(exclude_none=True)
    return create


def _traced(span: Any, error: bool) -> None:
    from opentelemetry.trace import Status as SpanStatus, StatusCode

    if error:
        span.set_status(SpanStatus(StatusCode.ERROR))


class Recorder:
    """Records one run of the travel desk; returns its run id (the trace id for another instrumentation)."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        self.options, self.url = options, url

    def run(self, question: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _Foreign(Recorder):
    """A recorder through another instrumentation's own tracer provider (`self.provider`)."""

    provider: Any

    def close(self) -> None:
        self.provider.shutdown()


def _answered(root: Any, loop: Callable[[], str], record: Callable[[str], None]) -> str:
    """The root span's trace id, once the loop's answer is handed to `record` (or its failure is on the root)."""
    trace_id = format(root.get_span_context().trace_id, "032x")
    try:
        record(loop())
    except Exception as exc:  # noqa: BLE001 - the root span records the failure
        root.record_exception(exc)
        _traced(root, True)
    return trace_id


def _called(span: Any, name: str, arguments: dict[str, Any], record: Callable[[str], None]) -> str:
    """The tool's result text as a tool span of another instrumentation keeps it: the value's JSON handed to
    `record`, or the exception recorded on the span (the loop shows the model its text)."""
    try:
        value = call_tool(name, arguments)
    except Exception as exc:  # noqa: BLE001 - the instrumentation records it
        span.record_exception(exc)
        _traced(span, True)
        return f"Error: {exc}"
    text = json.dumps(value)
    record(text)
    return text


class OpenInference(_Foreign):
    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        from openinference.instrumentation.openai import OpenAIInstrumentor

        self.provider = _provider(options["store"], None)
        OpenAIInstrumentor().instrument(tracer_provider=self.provider)
        self.tracer = self.provider.get_tracer("trip-desk-app")
        self.create = _openai_create(url)

    def run(self, question: str) -> str:
        from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes

        kind = SpanAttributes.OPENINFERENCE_SPAN_KIND

        def on_tool(call_id: str, name: str, arguments: dict[str, Any]) -> str:
            with self.tracer.start_as_current_span(name, attributes={
                    kind: OpenInferenceSpanKindValues.TOOL.value, SpanAttributes.TOOL_NAME: name,
                    SpanAttributes.INPUT_VALUE: json.dumps(arguments)}) as span:
                text = _result_text(name, arguments)
                span.set_attribute(SpanAttributes.OUTPUT_VALUE, text)
                _traced(span, text.startswith("Error: "))
                return text

        with self.tracer.start_as_current_span(AGENT, attributes={kind: OpenInferenceSpanKindValues.CHAIN.value,
                                                                  SpanAttributes.INPUT_VALUE: question}) as root:
            return _answered(root, lambda: plain_loop(self.create, on_tool, question),
                             lambda answer: root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer))

class OpenLLMetry(_Foreign):
    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        self.provider = _provider(options["store"], options["otlp"])
        OpenAIInstrumentor().instrument(tracer_provider=self.provider)
        self.tracer = self.provider.get_tracer("trip-desk-app")
        self.create = _openai_create(url)

    def run(self, question: str) -> str:
        kind, name_, input_, output = "traceloop.span.kind", "traceloop.entity.name", "traceloop.entity.input", "traceloop.entity.output"

        def on_tool(call_id: str, name: str, arguments: dict[str, Any]) -> str:
            # what traceloop's @tool decorator writes: the call's args and kwargs, the returned value
            with self.tracer.start_as_current_span(f"{name}.tool", attributes={
                    kind: "tool", name_: name, input_: json.dumps({"args": [], "kwargs": arguments})}) as span:
                return _called(span, name, arguments, lambda text: span.set_attribute(output, text))

        with self.tracer.start_as_current_span(f"{AGENT}.workflow", attributes={kind: "workflow", name_: AGENT,
                                                                               input_: json.dumps({"args": [question]})}) as root:
            return _answered(root, lambda: plain_loop(self.create, on_tool, question),
                             lambda answer: root.set_attribute(output, json.dumps(answer)))

class Vercel(_Foreign):
    """Spans as the Vercel AI SDK's generateText writes them, the model answering in-process."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.provider = _provider(options["store"], None)
        self.tracer = self.provider.get_tracer("ai")

    @staticmethod
    def _messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()}
        out: list[dict[str, Any]] = []
        for m in messages:
            if m["role"] == "system":
                out.append({"role": "system", "content": m["content"]})
            elif m["role"] == "user":
                out.append({"role": "user", "content": [{"type": "text", "text": m["content"]}]})
            elif m["role"] == "assistant":
                parts = [{"type": "text", "text": m["content"]}] if m.get("content") else []
                parts += [{"type": "tool-call", "toolCallId": c["id"], "toolName": c["function"]["name"],
                           "input": json.loads(c["function"]["arguments"])} for c in m.get("tool_calls") or ()]
                out.append({"role": "assistant", "content": parts})
            else:
                try:
                    value: Any = {"type": "json", "value": json.loads(m["content"])}
                except ValueError:
                    value = {"type": "error-text", "value": m["content"]}
                out.append({"role": "tool", "content": [{"type": "tool-result", "toolCallId": m["tool_call_id"],
                                                         "toolName": names.get(m["tool_call_id"]), "output": value}]})
        return out

    def run(self, question: str) -> str:
        tools = [json.dumps({"type": "function", "name": n, "description": f.__doc__, "inputSchema": SCHEMAS[n]}) for n, f in TOOLS.items()]

        def create(messages: list[dict[str, Any]]) -> dict[str, Any]:
            attributes = {"ai.operationId": "ai.generateText.doGenerate", "ai.model.id": MODEL, "ai.model.provider": "openai.chat",
                          "ai.prompt.messages": json.dumps(self._messages(messages)), "ai.prompt.tools": tools,
                          "ai.prompt.toolChoice": json.dumps({"type": "auto"}), "gen_ai.system": "openai.chat",
                          "gen_ai.request.model": MODEL}
            with self.tracer.start_as_current_span("ai.generateText.doGenerate", attributes=attributes) as span:
                try:
                    body = model({"messages": messages, "tools": offered()})
                except Status as exc:
                    span.record_exception(exc)
                    _traced(span, True)
                    raise RuntimeError(f"{exc.code} {exc}") from None
                message = body["choices"][0]["message"]
                if message.get("content"):
                    span.set_attribute("ai.response.text", message["content"])
                calls = [{"toolCallId": c["id"], "toolName": c["function"]["name"], "input": c["function"]["arguments"]}
                         for c in message.get("tool_calls") or ()]
                if calls:
                    span.set_attribute("ai.response.toolCalls", json.dumps(calls))
                span.set_attribute("ai.response.finishReason", "tool-calls" if calls else "stop")
                span.set_attribute("ai.response.model", MODEL)
                span.set_attribute("ai.usage.inputTokens", len(json.dumps(messages)) // 4)
                span.set_attribute("ai.usage.outputTokens", 12)
                return {k: v for k, v in message.items() if v is not None}

        def on_tool(call_id: str, name: str, arguments: dict[str, Any]) -> str:
            with self.tracer.start_as_current_span("ai.toolCall", attributes={
                    "ai.operationId": "ai.toolCall", "ai.toolCall.name": name, "ai.toolCall.id": call_id,
                    "ai.toolCall.args": json.dumps(arguments)}) as span:
                return _called(span, name, arguments, lambda text: span.set_attribute("ai.toolCall.result", text))

        with self.tracer.start_as_current_span("ai.generateText", attributes={
                "ai.operationId": "ai.generateText", "ai.model.id": MODEL, "ai.telemetry.functionId": AGENT,
                "ai.prompt": json.dumps({"system": instructions(), "prompt": question})}) as root:
            return _answered(root, lambda: plain_loop(create, on_tool, question),
                             lambda answer: root.set_attribute("ai.response.text", answer))

class LangGraph(Recorder):
    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel

        agentotel.instrument(directory=options["store"], service_name=AGENT)

    def run(self, question: str) -> str:
        import warnings

        import agentotel
        from langchain_core.messages import SystemMessage
        from langchain_core.tools import StructuredTool
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import ToolNode, create_react_agent

        def tool(f: Callable[..., Any]) -> Any:
            return StructuredTool.from_function(lambda **kw: json.dumps(f(**kw)), name=f.__name__, description=f.__doc__,
                                                args_schema=SCHEMAS[f.__name__])

        llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=self.url, max_retries=1)
        turn = {"n": 0}

        def prompt(state: dict[str, Any]) -> list[Any]:
            from langchain_core.messages import convert_to_openai_messages, convert_to_messages

            sent = [{"role": "system", "content": instructions()}, *convert_to_openai_messages(state["messages"])]
            sent = window(turn["n"], sent)
            turn["n"] += 1
            return [SystemMessage(sent[0]["content"]), *convert_to_messages(sent[1:])]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # the tool node hands a failing tool's error to the model (as most LangGraph agents are set up)
            graph = create_react_agent(llm, ToolNode([tool(f) for f in TOOLS.values()], handle_tool_errors=True), prompt=prompt)
        with agentotel.run(AGENT, task=question) as run:
            try:
                out = graph.invoke({"messages": [("user", question)]}, {"recursion_limit": 2 * max_turns()})
                run.output = str(out["messages"][-1].content)
            except Exception:  # noqa: BLE001 - the run records the failure
                pass
        return run.id

    def close(self) -> None:
        import agentotel

        agentotel.shutdown()


class PydanticAI(Recorder):
    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel

        agentotel.instrument(directory=options["store"], service_name=AGENT)

    def run(self, question: str) -> str:
        import agentotel
        from pydantic_ai import Agent, ModelRetry
        from pydantic_ai.messages import ModelRequest
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
        from pydantic_ai.usage import UsageLimits

        import openai

        client = openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=1)
        chat = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        turn = {"n": 0}

        def keep(messages: list[Any]) -> list[Any]:
            """The faults' context handling, on pydantic-ai's own message list."""
            n, turn["n"] = turn["n"], turn["n"] + 1
            if Now.fault == "history_dropped" and n >= 2 and len(messages) > 3:
                return messages[:1] + messages[-2:]
            if Now.fault == "task_truncated" and n >= 1:
                first = messages[0]
                parts = [type(p)(content=re.sub(r" for [A-Z][a-z]+ [A-Z][a-z]+", "", p.content)) if hasattr(p, "content")
                         and isinstance(p.content, str) and p.part_kind == "user-prompt" else p for p in first.parts]
                return [ModelRequest(parts=parts, instructions=getattr(first, "instructions", None)), *messages[1:]]
            return messages

        from pydantic_ai.capabilities import ProcessHistory

        agent = Agent(chat, name=AGENT, instructions=instructions(), retries=2, capabilities=[ProcessHistory(keep)])

        def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(f)  # pydantic-ai reads the tool's schema off the signature and annotations
            def call(**kwargs: Any) -> str:
                try:
                    return json.dumps(f(**kwargs))
                except (TimeoutError, RuntimeError) as exc:
                    raise ModelRetry(str(exc)) from None
            return call

        for f in TOOLS.values():
            agent.tool_plain(wrap(f))
        with agentotel.run(AGENT, task=question) as run:
            try:
                run.output = str(agent.run_sync(question, usage_limits=UsageLimits(request_limit=max_turns() + 1)).output)
            except Exception:  # noqa: BLE001 - the run records the failure
                pass
        return run.id

    def close(self) -> None:
        import agentotel

        agentotel.shutdown()


RECORDERS: dict[str, type[Recorder]] = {"oi": OpenInference, "ollm": OpenLLMetry, "vercel": Vercel, "langgraph": LangGraph,
                                        "pydantic-ai": PydanticAI}

HISTORY = (0, 1)  # earlier healthy runs: other routes, ids, prices
VARIANT = 2  # the good and the faulty run: a 429 the loop retries, a null terminal, the other order of parallel calls


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """In this process: the recorder's history runs, then each fault's good and faulty run. Returns the manifest."""
    from shapes import serve

    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
    with serve(model) as url:
        recorder = RECORDERS[options["recorder"]](options, url)
        manifest = []
        for v in HISTORY:
            _start(None, v)
            manifest.append({"fault": None, "role": "history", "run": recorder.run(task(v))})
        for fault in options["faults"]:
            for role, f in (("good", None), ("faulty", fault)):
                _start(f, VARIANT)
                manifest.append({"fault": fault, "role": role, "run": recorder.run(task(VARIANT))})
        recorder.close()
    return manifest


# ---- the pairs, and where each fault's cause shows on the recorded faulty run --------------------------

def after_first(name: str) -> Callable[[list[dict[str, Any]]], int | None]:
    """The first model call after the first call of `name` ran (the model's next decision)."""
    from heldout import tool_step

    def find(steps: list[dict[str, Any]]) -> int | None:
        ran = tool_step(name)(steps)
        return next((s["index"] for s in steps if s["type"] == "llm" and ran is not None and s["index"] > ran), None)
    return find


def context_cut(steps: list[dict[str, Any]]) -> int | None:
    """The first model call that answered while not given a message the call before it was given (dropped, or cut
    short). A call that failed (a 429 retried) answered nothing: its retry is the call the cut context acted on."""
    def given(step: dict[str, Any]) -> list[str]:
        value = step.get("input")
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return []
        return [json.dumps(m, sort_keys=True) for m in value] if isinstance(value, list) else []

    llm = [s for s in steps if s["type"] == "llm" and s["status"] == "ok"]
    for before, step in zip(llm, llm[1:]):
        now = set(given(step))
        if any(m not in now for m in given(before)):
            return step["index"]
    return None


# (session 26) The step is found, the layer is the model's: the answer gives a flight (BK9921) nothing the model was
# given holds, right after the search timed out - an invention, as heldout15-18 (built later, blind) all file a value
# made up after a timeout. This set's truth keeps the timeout's layer; the two conventions disagree, check follows the
# later sets.
_TIMEOUT_INVENTED = ("tool_error_ignored@4/model: the step is right; the layer is the model's, which invented BK9921 after "
                     "the timeout (heldout15-18's convention for a value made up after a failure), where this set files the tool")


def rule(recorder: str, layer: str, fault: str, taxonomy: str, where: Callable[..., int | None], **kw: Any) -> Any:
    from heldout import Pair

    return Pair(f"{layer}-{recorder}-{fault.replace('_', '-')}", recorder, layer, fault, taxonomy, where, **kw)


def pairs() -> list[Any]:
    """Every pair. heldout.py (its locators, Pair, Score) is imported here, not in a recorder's process: it declares
    agentotel tools, which an agentotel recorder's environment snapshot would list."""
    from heldout import answer, asking, failed_step, last_step, nth_llm, tool_step

    return [
    # OpenInference
    rule("oi", "prompt", "prompt_swapped", "MAST FM-1.2 Disobey role specification", nth_llm(0)),
    rule("oi", "tool", "book_401", "TRAIL Authentication errors (returned as a result)", tool_step("book_flight")),
    rule("oi", "model", "made_up_ref", "TRAIL Hallucinated tool output", answer),
    rule("oi", "memory", "history_dropped", "TRAIL Context handling failures", context_cut),
    rule("oi", "product", "skip_rules", "AgentErrorTaxonomy Planning: constraint ignorance", asking("book_flight")),
    rule("oi", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
    # OpenLLMetry through the collector
    rule("ollm", "prompt", "rules_clause_dropped", "MAST FM-1.1 Disobey task specification", nth_llm(0)),
    rule("ollm", "tool", "bags_as_text", "ToolScan / TRAIL Formatting errors (argument fails the schema)", asking("book_flight")),
    rule("ollm", "model", "model_429", "TRAIL Rate limits (not recovered)", failed_step),
    rule("ollm", "model", "unaware_done", "MAST FM-1.5 Unaware of termination conditions", asking("search_flights", 1)),
    rule("ollm", "memory", "task_truncated", "TRAIL Context handling failures (task cut)", context_cut),
    rule("ollm", "model", "goal_deviation", "MAST FM-2.3 Task derailment", asking("search_flights")),
    # Vercel AI SDK spans
    rule("vercel", "tool", "search_timeout", "TRAIL Timeouts (the answer goes on as if it had results)", answer,
         diff_where=tool_step("search_flights"), check_missed=_TIMEOUT_INVENTED),
    rule("vercel", "workflow", "parallel_dropped", "AgentErrorTaxonomy Action: requested calls left unanswered", after_first("get_fare_rules")),
    rule("vercel", "model", "misread_output", "TRAIL Wrong tool output interpretation", asking("get_fare_rules"),
         check_missed="choosing the flight its search result lists with 0 seats is a misreading of the data no "
         "rule judges; the booking's error is recovered from (the model books another flight)"),
    rule("vercel", "product", "skip_rules", "AgentErrorTaxonomy Planning: constraint ignorance", asking("book_flight")),
    rule("vercel", "tool", "book_401", "TRAIL Authentication errors (returned as a result)", tool_step("book_flight")),
    rule("vercel", "model", "goal_deviation", "MAST FM-2.3 Task derailment", asking("search_flights")),
    rule("vercel", "memory", "task_truncated", "TRAIL Context handling failures (task cut)", context_cut),
    # LangGraph under agentotel
    rule("langgraph", "tool", "bags_as_text", "ToolScan / TRAIL Formatting errors (argument fails the schema)", asking("book_flight")),
    rule("langgraph", "memory", "history_dropped", "TRAIL Context handling failures", context_cut),
    rule("langgraph", "prompt", "rules_clause_dropped", "MAST FM-1.1 Disobey task specification", nth_llm(0)),
    rule("langgraph", "tool", "search_timeout", "TRAIL Timeouts (the answer goes on as if it had results)", answer,
         diff_where=tool_step("search_flights"), check_missed=_TIMEOUT_INVENTED),
    rule("langgraph", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
    # pydantic-ai under agentotel
    rule("pydantic-ai", "tool", "book_401", "TRAIL Authentication errors (returned as a result)", tool_step("book_flight")),
    rule("pydantic-ai", "model", "made_up_ref", "TRAIL Hallucinated tool output", answer),
    rule("pydantic-ai", "model", "goal_deviation", "MAST FM-2.3 Task derailment", asking("search_flights")),
    rule("pydantic-ai", "memory", "task_truncated", "TRAIL Context handling failures (task cut)", context_cut),
    rule("pydantic-ai", "product", "skip_rules", "AgentErrorTaxonomy Planning: constraint ignorance", asking("book_flight")),
    ]

# The policy of every recorder's agent: the fare rules are evidence a booking needs.
POLICY = {"required_before": {"book_flight": ["get_fare_rules"]}}
NO_POLICY = {"ollm", "langgraph"}  # agents whose prompt fault removes that rule: held to their own history only


# The OpenLLMetry recorder's spans reach its store through agentotel-collector's OTLP receiver.
prepare = kit.through_collector("ollm")


def _policy(recorder: str) -> dict[str, Any] | None:
    return None if recorder in NO_POLICY else POLICY


def record(root: Path, chosen: list[Any]) -> dict[str, list[kit.Recorded]]:
    return kit.record(Path(__file__), root, chosen, prepare=prepare)


def score(root: Path, recorded: dict[str, list[kit.Recorded]]) -> list[Any]:
    return kit.score(root, recorded, _policy)


if __name__ == "__main__":
    if not kit.produce_main(produce):
        kit.main(Path(__file__), "heldout2-", pairs(), sys.argv[1:], prepare=prepare, policy=_policy)
