"""`check` on run shapes the diagnosis benchmark was not tuned on (tests/analysis/shapes.py): every good run
gets no finding, every faulty twin gets its finding in the right layer. Recorded through the real openai
SDK (plain and streamed, retried 429s and 500s) and the Agents SDK against a model on 127.0.0.1, read
back from a real store; plus SWE-agent's real trajectories replayed as runs."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, Callable

import pytest

import agentotel
from agentotel.analysis.detectors import Policy, findings, format_findings
from shapes import Recorder, Status, loop, reply, results, serve, system, users

# ---- the tools -----------------------------------------------------------------------------------------

CUSTOMERS = {"C-2001": {"customer_id": "C-2001", "plan": "enterprise", "seats": 140},
             "C-2002": {"customer_id": "C-2002", "plan": "starter", "seats": 3},
             "C-2003": {"customer_id": "C-2003", "plan": "team", "seats": 25}}


@agentotel.tool
def lookup_customer(customer_id: str) -> dict[str, Any]:
    """A customer's plan and seats."""
    return CUSTOMERS[customer_id]


class Rates:
    primary_down = False


@agentotel.tool
def rate_primary(currency: str) -> dict[str, Any]:
    """Today's exchange rate to USD (primary feed)."""
    if Rates.primary_down:
        raise ConnectionError("primary rate feed timed out after 10 s")
    return {"currency": currency, "usd": 1.0825}


@agentotel.tool
def rate_backup(currency: str) -> dict[str, Any]:
    """Today's exchange rate to USD (backup feed)."""
    return {"currency": currency, "usd": 1.0825, "source": "ecb"}


WEATHER = {"Paris": 18.5, "Oslo": 7.0, "Rome": 24.0}


@agentotel.tool
def get_weather(city: str) -> dict[str, Any]:
    """Current temperature of a city in Celsius."""
    return {"city": city, "celsius": WEATHER[city], "observed": "2026-06-15T14:30:00Z"}


class Catalog:
    products: list[dict[str, Any]] = []


@agentotel.tool
def search_products(query: str) -> dict[str, Any]:
    """Products matching a query."""
    return {"query": query, "results": list(Catalog.products)}


@agentotel.tool
def read_chunk(number: int) -> str:
    """One chunk of a long log file."""
    return f"chunk {number}: 200 lines, {number % 3} warnings, last timestamp 10:{number % 60:02d}"


@agentotel.tool
def quarter_revenue(quarter: str) -> dict[str, Any]:
    """A quarter's revenue in EUR."""
    return {"quarter": quarter, "revenue_eur": {"Q1": 1_250_000, "Q2": 1_412_500}[quarter], "orders": {"Q1": 812, "Q2": 905}[quarter]}


@agentotel.tool
def route_length(origin: str, destination: str) -> dict[str, Any]:
    """Driving distance between two cities in km, and the forecast high in Celsius at the destination."""
    return {"km": 412, "high_c": 25, "eta": "2026-06-15T16:45:00Z"}


@agentotel.retrieval(data_source="kb")
def search_kb(query: str) -> list[dict[str, Any]]:
    """First-stage search: many documents, BM25 scores."""
    return [{"id": f"kb-{n:03d}", "score": round(14.0 - n * 1.1, 2), "content": f"Article {n} about {query}"} for n in range(10)]


class Reranker:
    empty = False


@agentotel.retrieval(data_source="reranker")
def rerank(query: str, ids: list[str]) -> list[dict[str, Any]]:
    """Second stage: the three most relevant, with relevance scores in [0, 1]."""
    return [] if Reranker.empty else [{"id": i, "score": s, "content": f"Article {int(i[3:])} about {query}"}
                                      for i, s in zip(ids[:3], (0.94, 0.81, 0.62))]


TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (lookup_customer, rate_primary, rate_backup, get_weather,
                                                                search_products, read_chunk, quarter_revenue, route_length)}


def offered(*names: str) -> list[dict[str, Any]]:
    from agentotel.tools import registered_tools

    known = registered_tools()
    return [{"type": "function", "function": {"name": n, "description": known[n].description,
                                              "parameters": known[n].schema["parameters"]}} for n in names]


# ---- the model: answers from what it is sent ---------------------------------------------------------


class Model:
    """The server's model: one function per shape, set by the shape."""

    answer: Callable[[dict[str, Any]], dict[str, Any]] = staticmethod(lambda body: reply("ok"))
    requests = 0
    fault: str | None = None  # the model's own fault (the request is the same as a good run's)

    @classmethod
    def __call__(cls, body: dict[str, Any]) -> dict[str, Any]:
        cls.requests += 1
        return cls.answer(body)


def model(fn: Callable[[dict[str, Any]], dict[str, Any]], fault: str | None = None) -> None:
    Model.answer, Model.requests, Model.fault = staticmethod(fn), 0, fault


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    directory = tmp_path_factory.mktemp("generality") / "traces"
    agentotel.instrument(directory)
    with serve(Model()) as base_url:
        yield Recorder(directory, base_url)
    agentotel.shutdown()


def check(rec: Recorder, run: str, **policy: Any) -> list:
    with agentotel.open(rec.directory) as traces:
        return findings(traces, run, policy=Policy(**policy) if policy else None)


def assert_none(found: list) -> None:
    assert found == [], format_findings(found)


def assert_cause(found: list, kind: str, layer: str) -> None:
    chosen = [f for f in found if f.kind == kind]
    assert chosen and chosen[0].layer == layer, format_findings(found)


# ---- batch: a fresh conversation per item ------------------------------------------------------------------


def triage_model(body: dict[str, Any]) -> dict[str, Any]:
    asked = users(body)[-1]
    found = results(body)
    customer = re.search(r"C-\d{4}", " ".join(users(body)))
    if customer is None:
        return reply("Which customer is this about?")
    if not found:
        return reply(None, ("lookup_customer", {"customer_id": customer.group(0)}))
    plan = found[-1]
    if "seats" in asked.lower():
        return reply(f"{plan['customer_id']} has {plan['seats']} seats.")
    priority = "high" if plan["plan"] == "enterprise" else "normal"
    return reply(f"Priority {priority}: {plan['customer_id']} is on the {plan['plan']} plan ({plan['seats']} seats).")


TRIAGE = "Triage support tickets: look up the customer, then give the priority."
TICKETS = ["Ticket T-101 from customer C-2001: cannot log in since the update.",
           "Ticket T-102 from customer C-2002: invoice shows the wrong VAT number.",
           "Ticket T-103 from customer C-2003: export to CSV times out."]
RAW_ITEMS = ["C-2001 says the dashboard is blank.", "Billing question, account C-2002, about last month.",
             "Feature request from C-2003: dark mode please!"]


def batch(rec: Recorder, items: list[str]) -> str:
    model(triage_model)
    client = rec.client()

    def body() -> str:
        answers = []
        for item in items:  # each item on its own: a fresh conversation
            answers.append(loop(client, [{"role": "system", "content": TRIAGE}, {"role": "user", "content": item}],
                                TOOLS, offered("lookup_customer")))
        return "\n".join(answers)
    return rec.run("ticket-triage", items, body)


def test_a_batch_of_templated_items_each_in_a_fresh_conversation_is_no_history_loss(rec):
    assert_none(check(rec, batch(rec, TICKETS)))


def test_a_batch_of_free_text_items_each_in_a_fresh_conversation_is_no_history_loss(rec):
    assert_none(check(rec, batch(rec, RAW_ITEMS)))


def test_a_follow_up_sent_without_the_conversation_is_history_lost(rec):
    model(triage_model)
    client = rec.client()

    def body() -> str:
        messages = [{"role": "system", "content": TRIAGE}, {"role": "user", "content": TICKETS[0]}]
        loop(client, messages, TOOLS, offered("lookup_customer"))
        # the harness builds the next turn's request from the new message only
        return loop(client, [{"role": "system", "content": TRIAGE}, {"role": "user", "content": "Thanks. How many seats do they have?"}],
                    TOOLS, offered("lookup_customer"))
    assert_cause(check(rec, rec.run("ticket-chat", TICKETS[0], body)), "history_lost", "memory")


# ---- a silent fallback after a tool error ------------------------------------------------------------------


def rates_model(body: dict[str, Any]) -> dict[str, Any]:
    found = results(body)
    good = [r for r in found if isinstance(r, dict)]
    if good:
        return reply(f"1 EUR is {good[-1]['usd']} USD today.")
    if found and "backup" in json.dumps(body.get("tools")) and Model.requests < 3:
        return reply(None, ("rate_backup", {"currency": "EUR"}))
    if found:
        return reply("1 EUR is 1.0825 USD today.")  # the error glossed over: a rate from nowhere
    return reply(None, ("rate_primary", {"currency": "EUR"}))


def rates(rec: Recorder, *, backup: bool) -> str:
    model(rates_model)
    Rates.primary_down = True
    client = rec.client()
    names = ("rate_primary", "rate_backup") if backup else ("rate_primary",)
    try:
        return rec.run("fx-rates", "EUR to USD?", lambda: loop(client, [{"role": "user", "content": "EUR to USD?"}], TOOLS, offered(*names)))
    finally:
        Rates.primary_down = False


def test_a_fallback_to_another_tool_after_an_error_with_a_right_answer_is_no_ignored_error(rec):
    assert_none(check(rec, rates(rec, backup=True)))


def test_an_answer_that_ignores_the_tool_error_is_found(rec):
    assert_cause(check(rec, rates(rec, backup=False)), "tool_error_ignored", "tool")


# ---- parallel tool calls, streamed or not -----------------------------------------------------------------


def weather_model(body: dict[str, Any]) -> dict[str, Any]:
    found = [r for r in results(body) if isinstance(r, dict)]
    if not found:
        return reply(None, *[("get_weather", {"city": c}) for c in WEATHER])
    temps = ", ".join(f"{r['city']} {r['celsius']} °C" for r in found)
    mean = sum(r["celsius"] for r in found) / len(found)
    if Model.fault == "invent":
        return reply(f"{temps}; Madrid 36 °C.")
    return reply(f"{temps} (observed 15 June 2026 at 14:30 UTC); the average is {mean:.1f} °C.")


def weather(rec: Recorder, *, stream: bool = False, run_only: int | None = None, invent: bool = False) -> str:
    model(weather_model, "invent" if invent else None)
    client = rec.client()
    messages = [{"role": "system", "content": "Report the weather."},
                {"role": "user", "content": "Weather in Paris, Oslo and Rome?"}]
    return rec.run("weather-report", "Weather in Paris, Oslo and Rome?",
                   lambda: loop(client, messages, TOOLS, offered("get_weather"), stream=stream, run_only=run_only))


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_parallel_tool_calls_in_one_turn_are_no_finding(rec, stream):
    assert_none(check(rec, weather(rec, stream=stream)))


def test_a_parallel_call_the_loop_never_ran_is_unanswered(rec):
    assert_cause(check(rec, weather(rec, run_only=2)), "unanswered_tool_calls", "workflow")


def test_a_streamed_answer_with_a_temperature_no_tool_gave_is_ungrounded(rec):
    assert_cause(check(rec, weather(rec, stream=True, invent=True)), "ungrounded_answer", "model")


# ---- retries after 429 and 500 -----------------------------------------------------------------------------


def test_a_429_retried_by_the_sdk_and_a_500_retried_by_the_loop_are_no_finding(rec):
    failing = {"left": 1}

    def flaky(body: dict[str, Any]) -> dict[str, Any]:
        if Model.requests == 1:
            raise Status(429, "Rate limit reached for gpt-4o-mini")
        if Model.requests == 3 and failing["left"]:
            failing["left"] -= 1
            raise Status(500, "The server had an error while processing your request")
        return weather_model(body)

    model(flaky)
    client = rec.client(max_retries=2)

    def body() -> str:
        messages = [{"role": "system", "content": "Report the weather."}, {"role": "user", "content": "Weather in Paris, Oslo and Rome?"}]
        for attempt in range(3):
            try:
                return loop(client.with_options(max_retries=0) if attempt else client, messages, TOOLS, offered("get_weather"))
            except Exception:  # noqa: BLE001 - the loop retries the turn itself on a 500
                continue
        return "gave up"
    assert_none(check(rec, rec.run("weather-report", "Weather in Paris, Oslo and Rome?", body)))


def test_a_429_never_recovered_from_fails_the_run_at_the_model(rec):
    def limited(body: dict[str, Any]) -> dict[str, Any]:
        raise Status(429, "Rate limit reached for gpt-4o-mini")

    model(limited)
    client = rec.client(max_retries=1)
    run = rec.run("weather-report", "Weather?", lambda: loop(client, [{"role": "user", "content": "Weather?"}], TOOLS, offered("get_weather")))
    assert_cause(check(rec, run), "run_failed", "model")


# ---- long runs that summarise or window their history on purpose --------------------------------------------


def log_model(body: dict[str, Any]) -> dict[str, Any]:
    if "Summarise" in system(body):
        last = max(int(n) for n in re.findall(r"chunk (\d+):", users(body)[-1]))
        return reply(f"Summary: chunks 0 to {last} read; warnings in every third chunk.")
    read = [r for r in results(body)]
    summaries = [m for m in body["messages"] if str(m.get("content", "")).startswith("Summary:")]
    done = len(read) + 20 * len(summaries) if summaries else len(read)
    numbers = [int(n) for r in read for n in re.findall(r"^chunk (\d+)", str(r))]
    nxt = max(numbers) + 1 if numbers else 0
    if nxt >= 60 or done >= 60:
        return reply("Read all 60 chunks: warnings come every third chunk.")
    return reply(None, ("read_chunk", {"number": nxt}))


def long_run(rec: Recorder, rewrite: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None) -> str:
    model(log_model)
    client = rec.client()
    task = "Read the whole log, chunk by chunk, and say where the warnings are."
    messages = [{"role": "system", "content": "You read logs."}, {"role": "user", "content": task}]
    return rec.run("log-reader", task, lambda: loop(client, messages, TOOLS, offered("read_chunk"), max_turns=70, before_call=rewrite))


def window(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the instructions, the task and the latest 6 messages (whole tool-call pairs)."""
    tail = messages[2:][-6:]
    while tail and tail[0].get("role") == "tool":
        tail = tail[1:]
    return messages[:2] + tail


def test_a_long_run_that_windows_its_history_keeping_the_task_is_no_history_loss(rec):
    assert_none(check(rec, long_run(rec, window)))


def test_a_long_run_that_summarises_old_turns_with_a_model_call_is_no_history_loss(rec):
    client = rec.client()
    state: dict[str, Any] = {"summary": None, "at": 0}

    def summarise(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if len(messages) - state["at"] > 24:  # every 12 tool turns, the older ones condensed by a summariser call
            old = json.dumps(messages[2:-2])[-4000:]
            said = client.chat.completions.create(model="gpt-4o-mini", messages=[
                {"role": "system", "content": "Summarise this agent transcript."}, {"role": "user", "content": old}]).choices[0].message.content
            state["summary"], state["at"] = said, len(messages) - 2
        if state["summary"] is None:
            return messages
        return messages[:2] + [{"role": "assistant", "content": state["summary"]}] + messages[state["at"]:]
    assert_none(check(rec, long_run(rec, summarise)))


def test_a_long_run_that_elides_old_tool_outputs_where_they_stood_is_no_history_loss(rec):
    def elide(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results_at = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
        old = set(results_at[:-3])  # the latest three results whole, older ones replaced by a placeholder
        return [dict(m, content="Old output omitted.") if i in old else m for i, m in enumerate(messages)]
    assert_none(check(rec, long_run(rec, elide)))


def test_a_long_run_that_drops_the_task_from_its_requests_is_history_lost(rec):
    def drop(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return messages if len(messages) < 12 else messages[:1] + messages[-2:]  # the task and the work so far gone
    assert_cause(check(rec, long_run(rec, drop)), "history_lost", "memory")


# ---- RAG with reranking -------------------------------------------------------------------------------------


def rag_model(body: dict[str, Any]) -> dict[str, Any]:
    ids = re.findall(r"\[(kb-\d+)\]", system(body))
    if not ids:
        return reply("Returns are accepted within 30 days of delivery [kb-001].")  # answering anyway
    return reply(f"Returns are accepted within 30 days of delivery [{ids[0]}], and refunds take 5 business days [{ids[1]}].")


def rag(rec: Recorder, *, empty: bool) -> str:
    model(rag_model)
    Reranker.empty = empty
    client = rec.client()
    question = "How do returns and refunds work?"

    def body() -> str:
        first = search_kb(question)
        top = rerank(question, [d["id"] for d in first])
        context = "\n".join(f"[{d['id']}] {d['content']}" for d in top)
        return client.chat.completions.create(model="gpt-4o-mini", messages=[
            {"role": "system", "content": "Answer from these articles only:\n" + context},
            {"role": "user", "content": question}]).choices[0].message.content or ""
    try:
        return rec.run("kb-answers", question, body)
    finally:
        Reranker.empty = False


def test_rag_with_a_reranker_on_another_score_scale_is_no_finding(rec):
    assert_none(check(rec, rag(rec, empty=False), min_retrieval_score=0.5))


def test_rag_answering_after_the_reranker_kept_nothing_is_an_answer_without_evidence(rec):
    assert_cause(check(rec, rag(rec, empty=True), min_retrieval_score=0.5), "answer_without_evidence", "product")


# ---- tool outputs that legitimately vary ---------------------------------------------------------------


def shop_model(body: dict[str, Any]) -> dict[str, Any]:
    found = results(body)
    if not found:
        return reply(None, ("search_products", {"query": users(body)[-1]}))
    items = found[-1]["results"]
    if not items:
        return reply("Nothing matches that search.")
    return reply(f"Found {len(items)} product(s): " + ", ".join(f"{p['name']}" for p in items) + ".")


def shop(rec: Recorder, products: list[dict[str, Any]], query: str = "usb cable") -> str:
    model(shop_model)
    Catalog.products = products
    client = rec.client()
    return rec.run("shop-search", query, lambda: loop(client, [{"role": "user", "content": query}], TOOLS, offered("search_products")))


def test_varying_search_results_are_no_drift(rec):
    # Nothing found in the first runs: what an item holds was never seen, so items are no new structure.
    for _ in range(3):
        assert_none(check(rec, shop(rec, [])))
    assert_none(check(rec, shop(rec, [{"sku": "C-1", "name": "USB-C cable", "price": 9}])))
    assert_none(check(rec, shop(rec, [{"sku": "C-2", "name": "USB-A cable", "price": 7.5, "tags": ["sale"]},
                                      {"sku": "C-3", "name": "Lightning cable", "price": 12, "rating": None}])))
    assert_none(check(rec, shop(rec, [{"sku": "C-4", "name": "Hub", "price": 30, "rating": 4.5, "tags": []}])))


def test_a_field_every_product_had_gone_is_drift(rec):
    for n in range(3):
        shop(rec, [{"sku": f"D-{n}", "name": "Desk lamp", "price": 20 + n}], query="lamp")
    assert_cause(check(rec, shop(rec, [{"sku": "D-9", "name": "Desk lamp"}], query="lamp")), "tool_output_drift", "tool")


# ---- answers that compute numbers, and dates in other formats ------------------------------------------------


def computing_model(body: dict[str, Any]) -> dict[str, Any]:
    found = [r for r in results(body) if isinstance(r, dict)]
    asked = users(body)[-1]
    if "revenue" in asked:
        if len(found) < 2:
            return reply(None, ("quarter_revenue", {"quarter": "Q1"}), ("quarter_revenue", {"quarter": "Q2"}))
        q1, q2 = 1_250_000, 1_412_500
        growth = 100 * (q2 - q1) / q1
        wrong = Model.fault == "wrong"
        return reply(f"Revenue grew {growth:.1f}% from Q1 to Q2 (EUR 1,250,000 to EUR 1,412,500), EUR {q1 + q2:,} over the half; "
                     f"{812 + 905} orders, an average order of EUR {(q1 + q2) / (812 + 905):.2f}."
                     + (" Q3 should reach EUR 1,690,000." if wrong else ""))
    if not found:
        return reply(None, ("route_length", {"origin": "Lyon", "destination": "Milan"}))
    if Model.fault == "wrong":
        return reply("It is 412 km (256 miles); arrive 16.06.2026 at 16:45 UTC.")
    return reply("It is 412 km (about 256 miles), a high of 25 °C (77 °F) on arrival; "
                 "you arrive 15.06.2026 at 16:45 UTC (4:45 PM, Monday 06/15/2026).")


def computing(rec: Recorder, question: str, *, wrong: bool = False) -> str:
    model(computing_model, "wrong" if wrong else None)
    client = rec.client()
    messages = [{"role": "system", "content": "Answer with numbers."}, {"role": "user", "content": question}]
    return rec.run("analyst", question, lambda: loop(client, messages, TOOLS, offered("quarter_revenue", "route_length")))


def test_percent_change_sums_and_averages_of_tool_numbers_are_grounded(rec):
    assert_none(check(rec, computing(rec, "How did revenue change from Q1 to Q2?")))


def test_unit_conversions_and_dates_and_times_in_other_formats_are_grounded(rec):
    assert_none(check(rec, computing(rec, "How far is Lyon to Milan, and when do I arrive?")))


def test_a_forecast_no_tool_gave_is_ungrounded(rec):
    assert_cause(check(rec, computing(rec, "How did revenue change from Q1 to Q2?", wrong=True)), "ungrounded_answer", "model")


def test_a_date_a_day_off_in_another_format_is_ungrounded(rec):
    found = check(rec, computing(rec, "How far is Lyon to Milan, and when do I arrive?", wrong=True))
    assert_cause(found, "ungrounded_answer", "model")
    assert [f.evidence["values"] for f in found if f.kind == "ungrounded_answer"] == [["16.06.2026"]]


# ---- multi-agent handoffs (the Agents SDK) ------------------------------------------------------------------


def test_a_handoff_between_agents_sdk_agents_is_no_finding(rec):
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from openai import AsyncOpenAI

    set_tracing_disabled(True)

    @function_tool
    def invoice_status(invoice_id: str) -> str:
        """An invoice's status."""
        return json.dumps({"invoice_id": invoice_id, "status": "paid", "amount_eur": 240.0, "paid_on": "2026-05-28"})

    def agents_model(body: dict[str, Any]) -> dict[str, Any]:
        names = [t["function"]["name"] for t in body.get("tools") or ()]
        if "transfer_to_billing" in names:
            return reply(None, ("transfer_to_billing", {}))
        found = [r for r in results(body) if isinstance(r, dict) and "invoice_id" in r]
        if not found:
            return reply(None, ("invoice_status", {"invoice_id": "INV-5531"}))
        return reply(f"Invoice {found[0]['invoice_id']} was paid on May 28, 2026 (EUR 240.00).")

    model(agents_model)
    client = AsyncOpenAI(api_key="sk-test", base_url=rec.base_url, max_retries=0)
    chat = OpenAIChatCompletionsModel("gpt-4o-mini", client)
    billing = Agent(name="billing", instructions="You answer billing questions. Use invoice_status.", tools=[invoice_status], model=chat)
    triage = Agent(name="triage", instructions="Route the customer to the right team.", handoffs=[billing], model=chat)
    question = "Was invoice INV-5531 paid?"
    run = rec.run("helpdesk", question, lambda: asyncio.run(Runner.run(triage, question)).final_output)
    assert_none(check(rec, run))


# ---- real trajectories (SWE-agent), replayed as runs ---------------------------------------------------------

TRAJECTORIES = Path(__file__).parent / "data"  # copied from ../shared/trajectories/swe-agent (README there)


def _replay(rec: Recorder, path: Path) -> str:
    history = json.loads(path.read_text())["history"]
    turns = [m for m in history if m["role"] == "assistant"]
    native = any(t.get("tool_calls") for t in turns)
    opening = [m for m in history[: history.index(turns[0])] if m["role"] in ("system", "user")]
    observations = [m["content"] for m in history[history.index(turns[0]):] if m["role"] in ("tool", "user")]

    def recorded(body: dict[str, Any]) -> dict[str, Any]:
        k = sum(1 for m in body["messages"] if m["role"] == "assistant")
        turn = turns[k] if k < len(turns) else {"content": "done"}
        calls = turn.get("tool_calls") or []
        answer = reply(turn["content"] if isinstance(turn["content"], str) else json.dumps(turn["content"]), tokens=1000 + k)
        if calls:
            answer["choices"][0]["message"]["tool_calls"] = [{"id": c["id"], "type": "function", "function": c["function"]} for c in calls]
            answer["choices"][0]["finish_reason"] = "tool_calls"
        return answer

    @agentotel.tool(name="shell")
    def shell(command: str, k: int) -> str:
        return str(observations[k]) if k < len(observations) else ""

    model(recorded)
    client = rec.client()

    def body() -> str:
        messages = [{"role": m["role"], "content": m["content"]} for m in opening]
        answer = ""
        for k in range(len(turns) + 1):
            message = client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            answer = message.content or ""
            if native:
                if not message.tool_calls:
                    return answer
                for call in message.tool_calls:
                    out = agentotel.tool(name=call.function.name)(lambda **_a: str(observations[k]) if k < len(observations) else "")(
                        **json.loads(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": out})
            else:
                action = turns[k].get("action") if k < len(turns) else None
                if not action or k >= len(observations):
                    return answer  # the run ended on its last action (submit)
                messages.append({"role": "user", "content": shell(action, k)})
        return answer
    return rec.run(f"swe-agent-{path.stem[:20]}", opening[-1]["content"][:2000], body)


@pytest.mark.parametrize("name", sorted(p.name for p in TRAJECTORIES.glob("*.traj")))
def test_real_swe_agent_trajectories_replayed_as_runs_get_no_warning(rec, name):
    found = check(rec, _replay(rec, TRAJECTORIES / name))
    assert [f for f in found if f.severity != "info"] == [], format_findings(found)


# ---- diff: a twin's first divergence is its faulty step; a retried failure is no divergence ----------------


def divergence(rec: Recorder, a: str, b: str) -> dict[str, Any] | None:
    with agentotel.open(rec.directory) as traces:
        return traces.diff(a, b).first_divergence


def test_diff_puts_a_parallel_call_never_run_at_the_model_call_given_the_conversation_without_it(rec):
    found = divergence(rec, weather(rec), weather(rec, run_only=2))
    assert (found["index_b"], found["kind"]) == (4, "step_removed"), found


def test_diff_puts_an_invented_number_of_a_streamed_answer_at_the_answer(rec):
    found = divergence(rec, weather(rec, stream=True), weather(rec, stream=True, invent=True))
    assert (found["index_b"], found["kind"]) == (5, "output_changed"), found


def test_diff_puts_the_task_dropped_from_a_long_run_at_the_first_call_without_it(rec):
    faulty = long_run(rec, lambda m: m if len(m) < 12 else m[:1] + m[-2:])
    lost = [f for f in check(rec, faulty) if f.kind == "history_lost"][0]
    found = divergence(rec, long_run(rec, None), faulty)
    assert (found["index_b"], found["kind"]) == (lost.index, "history_changed"), found


def test_diff_puts_a_reranker_that_kept_nothing_at_the_reranker(rec):
    found = divergence(rec, rag(rec, empty=False), rag(rec, empty=True))
    assert found["index_b"] == 2 and found["kind"] in ("output_changed", "output_empty"), found


def test_diff_puts_a_wrong_forecast_at_the_answer(rec):
    good = computing(rec, "How did revenue change from Q1 to Q2?")
    wrong = computing(rec, "How did revenue change from Q1 to Q2?", wrong=True)
    with agentotel.open(rec.directory) as traces:
        last = traces.trajectory(wrong).steps[-1].index
    found = divergence(rec, good, wrong)
    assert (found["index_b"], found["kind"]) == (last, "output_changed"), found


def test_diff_of_a_run_whose_failed_calls_were_retried_blames_no_identical_step(rec):
    clean = weather(rec)
    failing = {"left": 1}

    def flaky_model(body: dict[str, Any]) -> dict[str, Any]:
        if Model.requests == 2 and failing["left"]:  # the call given the tools' results
            failing["left"] -= 1
            raise Status(500, "The server had an error while processing your request")
        return weather_model(body)

    model(flaky_model)
    client = rec.client()

    def body() -> str:
        messages = [{"role": "system", "content": "Report the weather."}, {"role": "user", "content": "Weather in Paris, Oslo and Rome?"}]
        for _attempt in range(3):
            try:
                return loop(client, messages, TOOLS, offered("get_weather"))
            except Exception:  # noqa: BLE001 - the loop retries the turn itself on a 500
                continue
        return "gave up"
    retried = rec.run("weather-report", "Weather in Paris, Oslo and Rome?", body)
    found = divergence(rec, clean, retried)
    with agentotel.open(rec.directory) as traces:
        failed = [s.index for s in traces.trajectory(retried).steps if s.status == "error"]
    assert failed and (found is None or (found["kind"] == "step_added" and found["index_b"] in failed)), (failed, found)


# ---- actions that return nothing, polling, errors admitted in other words, signed and rounded numbers,
# ---- a user asking to check again, working memory kept in the instructions ------------------------------


@agentotel.tool
def send_email(to: str, body: str) -> None:
    """Send an e-mail."""


@agentotel.tool
def find_contact(name: str) -> dict[str, Any]:
    """A contact's e-mail address."""
    return {}


class Job:
    polls = 0
    finishes_at = 3


@agentotel.tool
def job_status(job_id: str) -> dict[str, Any]:
    """A job's status."""
    Job.polls += 1
    return {"job_id": job_id, "status": "running" if Job.polls < Job.finishes_at else "done"}


@agentotel.tool
def charge(amount: float) -> dict[str, Any]:
    """Charge the customer's card."""
    raise RuntimeError("card declined by issuer (code 51)")


@agentotel.tool
def city_facts(city: str) -> dict[str, Any]:
    """A city's temperature, population and area."""
    return {"city": city, "celsius": -12.5, "population": 14_123_456, "area_km2": 1_572.3}


TOOLS.update({f.__name__: f for f in (send_email, find_contact, job_status, charge, city_facts)})


def one_tool(rec: Recorder, name: str, question: str, call: tuple[str, dict[str, Any]], answer: str) -> str:
    model(lambda body: reply(answer) if results(body) else reply(None, call))
    client = rec.client()
    return rec.run(name, question, lambda: loop(client, [{"role": "user", "content": question}], TOOLS, offered(call[0])))


def test_an_action_tool_that_returns_nothing_is_no_answer_without_evidence(rec):
    run = one_tool(rec, "mailer", "Email ana@example.com: the report is ready.",
                   ("send_email", {"to": "ana@example.com", "body": "The report is ready."}), "Sent the e-mail to ana@example.com.")
    assert_none(check(rec, run))


def test_a_lookup_that_returned_an_empty_object_and_an_answer_anyway_is_found(rec):
    run = one_tool(rec, "contacts", "What is Ana's e-mail address?", ("find_contact", {"name": "Ana"}), "Ana's address is ana.l@example.com.")
    assert_cause(check(rec, run), "answer_without_evidence", "product")


def polling(rec: Recorder, finishes_at: int) -> str:
    Job.polls, Job.finishes_at = 0, finishes_at

    def poll(body: dict[str, Any]) -> dict[str, Any]:
        found = results(body)
        if found and found[-1]["status"] == "done":
            return reply("Job J-77 is done.")
        if len(found) >= 3:
            return reply("Job J-77 is still running.")
        return reply(None, ("job_status", {"job_id": "J-77"}))
    model(poll)
    client = rec.client()
    return rec.run("poller", "Tell me when job J-77 is done.",
                   lambda: loop(client, [{"role": "user", "content": "Tell me when job J-77 is done."}], TOOLS, offered("job_status")))


def test_polling_a_job_until_its_status_changes_is_no_loop(rec):
    assert_none(check(rec, polling(rec, finishes_at=3)))


def test_asking_again_and_again_for_a_status_that_never_changes_is_a_model_loop(rec):
    assert_cause(check(rec, polling(rec, finishes_at=99)), "repeated_tool_call", "model")


def test_an_answer_that_admits_the_error_in_its_own_words_is_no_ignored_error(rec):
    run = one_tool(rec, "payer", "Pay 20 EUR.", ("charge", {"amount": 20}), "Your card was declined by the issuer (code 51); nothing was charged.")
    assert_none(check(rec, run))


def test_negative_scaled_and_hedged_round_numbers_are_grounded(rec):
    run = one_tool(rec, "city-facts", "Tell me about Oslo.", ("city_facts", {"city": "Oslo"}),
                   "Oslo is at -12.5 °C (9.5 °F); about 14.1 million people live there, on roughly 1,600 km², "
                   "around 9,000 people per km².")
    assert_none(check(rec, run))


def test_a_population_no_tool_gave_is_ungrounded_even_scaled(rec):
    run = one_tool(rec, "city-facts", "Tell me about Oslo.", ("city_facts", {"city": "Oslo"}), "Oslo has 15.2 million people.")
    found = check(rec, run)
    assert_cause(found, "ungrounded_answer", "model")
    assert found[0].evidence["values"] == ["15.2 million"]


def test_a_user_asking_to_check_again_is_no_loop_and_no_going_on_after_the_answer(rec):
    def again(body: dict[str, Any]) -> dict[str, Any]:
        asked, answered = len(users(body)), len(results(body))
        return reply(None, ("city_facts", {"city": "Oslo"})) if asked > answered else reply("Oslo is at -12.5 °C.")
    model(again)
    client = rec.client()

    def chat() -> str:
        messages = [{"role": "user", "content": "How cold is Oslo?"}]
        loop(client, messages, TOOLS, offered("city_facts"))
        messages.append({"role": "user", "content": "Could you check once more?"})
        return loop(client, messages, TOOLS, offered("city_facts"))
    assert_none(check(rec, rec.run("weather-chat", "How cold is Oslo?", chat)))


def notes_agent(rec: Recorder, *, persona_at: int | None = None) -> str:
    def compare(body: dict[str, Any]) -> dict[str, Any]:
        found = results(body)
        if len(found) >= 2:
            return reply("Paris and Oslo are both at -12.5 °C.")
        return reply(None, ("city_facts", {"city": ["Paris", "Oslo"][len(found)]}))
    model(compare)
    client = rec.client()

    def agent() -> str:
        notes: list[str] = []
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Compare the temperatures of Paris and Oslo."}]
        for turn in range(4):
            instructions = "You compare cities. Use the tools.\nNotes so far:\n" + "\n".join(notes)
            if turn == persona_at:
                instructions = "You are a pirate. Answer in rhymes."
            message = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "system", "content": instructions}, *messages],
                                                     tools=offered("city_facts")).choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content or ""
            for call in message.tool_calls:
                result = city_facts(**json.loads(call.function.arguments))
                notes.append(f"- {result['city']}: {result['celsius']} C")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
        return ""
    return rec.run("compare-cities", "Compare the temperatures of Paris and Oslo.", agent)


def test_notes_the_agent_keeps_in_its_instructions_are_no_instruction_change(rec):
    assert_none(check(rec, notes_agent(rec)))


def test_instructions_swapped_mid_run_are_still_an_instruction_change(rec):
    assert_cause(check(rec, notes_agent(rec, persona_at=2)), "instructions_changed", "prompt")


# ---- real framework agents: LangGraph's ReAct agent and pydantic-ai, parallel calls in one turn ----------------


def test_a_langgraph_react_agent_with_parallel_calls_is_no_finding(rec):
    import warnings

    from langchain_core.tools import tool as lc_tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    @lc_tool
    def get_weather(city: str) -> str:
        """Current temperature of a city in Celsius."""
        return json.dumps({"city": city, "celsius": WEATHER[city], "observed": "2026-06-15T14:30:00Z"})

    model(weather_model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(ChatOpenAI(model="gpt-4o-mini", api_key="sk-test", base_url=rec.base_url, max_retries=0), [get_weather])
    question = "Weather in Paris, Oslo and Rome?"
    run = rec.run("langgraph-weather", question, lambda: graph.invoke({"messages": [("user", question)]})["messages"][-1].content)
    assert_none(check(rec, run))


def test_a_pydantic_ai_agent_with_parallel_calls_is_no_finding(rec):
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    agent = Agent(OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-test")),
                  name="pydantic-weather", instructions="Report the weather.")

    @agent.tool_plain
    def get_weather(city: str) -> dict[str, Any]:
        """Current temperature of a city in Celsius."""
        return {"city": city, "celsius": WEATHER[city], "observed": "2026-06-15T14:30:00Z"}

    model(weather_model)
    question = "Weather in Paris, Oslo and Rome?"
    run = rec.run("pydantic-weather", question, lambda: agent.run_sync(question).output)
    assert_none(check(rec, run))


def test_an_integral_number_written_with_a_decimal_point_fits_an_integer_parameter():
    from agentotel.analysis.detectors import argument_problems

    schema = {"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]}
    assert argument_problems({"number": 5.0}, schema) == []  # JSON has one number type; validators take 5.0 for 5
    assert argument_problems({"number": 5.5}, schema) == ["argument 'number' is float, expected integer"]


# ---- the Anthropic SDK: tool results travel in user messages ---------------------------------------------


def anthropic_loop(client: Any, system_prompt: str, messages: list[dict[str, Any]], tools: list[str]) -> str:
    from agentotel.tools import registered_tools

    known = registered_tools()
    offered_tools = [{"name": n, "description": known[n].description, "input_schema": known[n].schema["parameters"]} for n in tools]
    for _ in range(6):
        response = client.messages.create(model="claude-sonnet-4-5", max_tokens=512, system=system_prompt, messages=messages,
                                          tools=offered_tools)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]})
        calls = [b for b in response.content if b.type == "tool_use"]
        if not calls:
            return " ".join(b.text for b in response.content if b.type == "text")
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": b.id,
                                                       "content": json.dumps(TOOLS[b.name](**b.input))} for b in calls]})
    return ""


def test_an_anthropic_batch_with_tools_each_item_in_a_fresh_conversation_is_no_history_loss(rec):
    import anthropic

    model(triage_model)
    client = anthropic.Anthropic(base_url=rec.base_url.removesuffix("/v1"), api_key="sk-ant-test", max_retries=0)
    run = rec.run("ticket-triage-claude", RAW_ITEMS, lambda: "\n".join(
        anthropic_loop(client, TRIAGE, [{"role": "user", "content": item}], ["lookup_customer"]) for item in RAW_ITEMS))
    with agentotel.open(rec.directory) as traces:
        assert [s.type for s in traces.trajectory(run).steps] == ["llm", "tool", "llm"] * 3
    assert_none(check(rec, run))


def test_an_anthropic_agent_with_parallel_calls_is_no_finding(rec):
    import anthropic

    model(weather_model)
    client = anthropic.Anthropic(base_url=rec.base_url.removesuffix("/v1"), api_key="sk-ant-test", max_retries=0)
    question = "Weather in Paris, Oslo and Rome?"
    run = rec.run("claude-weather", question, lambda: anthropic_loop(client, "Report the weather.", [{"role": "user", "content": question}], ["get_weather"]))
    assert_none(check(rec, run))


@agentotel.tool
def read_config(path: str) -> str:
    """A file's text."""
    raise FileNotFoundError(f"no such file: {path}")


@agentotel.tool
def write_config(path: str, text: str) -> dict[str, Any]:
    """Write a file."""
    return {"path": path, "written": True}


TOOLS.update({"read_config": read_config, "write_config": write_config})


def test_acting_on_the_same_arguments_after_a_failed_read_is_no_fallback(rec):
    def edit(body: dict[str, Any]) -> dict[str, Any]:
        found = results(body)
        if not found:
            return reply(None, ("read_config", {"path": "app.toml"}))
        if len(found) == 1:
            return reply(None, ("write_config", {"path": "app.toml", "text": "debug = true"}))
        return reply("Done: debug is now on in app.toml, next to your other settings.")
    model(edit)
    client = rec.client()
    run = rec.run("config-editor", "Turn debug on in app.toml.", lambda: loop(
        client, [{"role": "user", "content": "Turn debug on in app.toml."}], TOOLS, offered("read_config", "write_config")))
    # "no such file: app.toml", about the user's own file: the tool answered rightly, the model went past it
    assert_cause(check(rec, run), "tool_error_ignored", "model")
