"""@tool and @retrieval: every function kind, schemas, call ids, bad input, capture off."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import hashlib
import json
import threading
from typing import Annotated, Any, Literal, Optional

import pytest
from opentelemetry.trace import SpanKind, StatusCode

import agentotel
from agentotel import _context
from agentotel import semconv as sc
from agentotel.runs import run
from agentotel.tools import registered_tools, retrieval, schema_hash, tool

from .conftest import all_text


def args_of(span) -> Any:
    return json.loads(span.attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS])


def result_of(span) -> Any:
    return json.loads(span.attributes[sc.GEN_AI_TOOL_CALL_RESULT])


# --- Tools of every kind --------------------------------------------------------------------------------


@tool
def get_weather(city: str, units: str = "metric") -> dict:
    """Current weather for a city."""
    return {"city": city, "temp": 21, "units": units}


def test_a_plain_function_outside_a_run(recorded):
    assert get_weather("Paris") == {"city": "Paris", "temp": 21, "units": "metric"}
    span = recorded.one("execute_tool get_weather")
    assert span.kind is SpanKind.INTERNAL
    assert span.attributes[sc.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert span.attributes[sc.GEN_AI_TOOL_NAME] == "get_weather"
    assert span.attributes[sc.GEN_AI_TOOL_TYPE] == "function"
    assert span.attributes[sc.GEN_AI_TOOL_DESCRIPTION] == "Current weather for a city."
    assert span.attributes[sc.AGENTOTEL_TOOL_SCHEMA_HASH] == get_weather.tool_info.schema_hash  # the registry is keyed by name; other modules define get_weather too
    assert args_of(span) == {"city": "Paris"}  # as called: defaults are not filled in
    assert result_of(span) == {"city": "Paris", "temp": 21, "units": "metric"}
    assert sc.AGENTOTEL_RUN_ID not in span.attributes
    assert span.status.status_code is StatusCode.UNSET


def test_a_plain_function_inside_a_run(recorded):
    with run("agent", user="u", session="s", trigger="test") as current:
        get_weather(city="Oslo", units="imperial")
    span = recorded.one("execute_tool get_weather")
    root = recorded.one("invoke_agent agent")
    assert span.parent.span_id == root.context.span_id
    assert span.attributes[sc.AGENTOTEL_RUN_ID] == current.id
    assert span.attributes[sc.ENDUSER_ID] == "u" and span.attributes[sc.GEN_AI_CONVERSATION_ID] == "s"
    assert args_of(span) == {"city": "Oslo", "units": "imperial"}


def test_spans_inside_a_tool_are_its_children(recorded):
    @tool
    def outer():
        recorded.tracer("http").start_span("GET").end()
        return inner()

    @tool
    def inner():
        return 1

    outer()
    outer_span = recorded.one("execute_tool outer")
    assert recorded.one("GET").parent.span_id == outer_span.context.span_id
    assert recorded.one("execute_tool inner").parent.span_id == outer_span.context.span_id


class Calculator:
    factor = 10

    @tool
    def scale(self, x: int) -> int:
        """Multiply by the factor."""
        return x * self.factor

    @classmethod
    @tool
    def describe(cls, verbose: bool = False) -> str:
        return cls.__name__

    @tool
    @staticmethod
    def negate(x: int) -> int:
        return -x


def test_methods_leave_self_and_cls_out(recorded):
    calc = Calculator()
    assert calc.scale(4) == 40
    assert Calculator.describe(verbose=True) == "Calculator"
    assert calc.negate(3) == -3 and Calculator.negate(1) == -1
    assert args_of(recorded.one("execute_tool scale")) == {"x": 4}
    assert args_of(recorded.one("execute_tool describe")) == {"verbose": True}
    assert [args_of(s) for s in recorded.named("execute_tool negate")] == [{"x": 3}, {"x": 1}]
    schema = registered_tools()["scale"].schema
    assert list(schema["parameters"]["properties"]) == ["x"]


async def test_an_async_function(recorded):
    @tool
    async def fetch(url: str) -> str:
        await asyncio.sleep(0)
        recorded.tracer("http").start_span("GET").end()
        return "body"

    async with run("agent", trigger="test") as current:
        assert await fetch("https://example.com") == "body"
    span = recorded.one("execute_tool fetch")
    assert args_of(span) == {"url": "https://example.com"}
    assert result_of(span) == "body"
    assert span.attributes[sc.AGENTOTEL_RUN_ID] == current.id
    assert recorded.one("GET").parent.span_id == span.context.span_id


async def test_an_async_function_outside_a_run(recorded):
    @tool
    async def ping() -> str:
        return "pong"

    assert await ping() == "pong"
    assert result_of(recorded.one("execute_tool ping")) == "pong"


def test_tool_keeps_function_metadata():
    assert get_weather.__name__ == "get_weather"
    assert get_weather.__doc__ == "Current weather for a city."
    assert get_weather.tool_info.name == "get_weather"


def test_name_and_description_overrides(recorded):
    @tool(name="weather.lookup", description="Looks up weather.")
    def lookup(city: str) -> str:
        """Docstring that is not used."""
        return city

    lookup("Rome")
    span = recorded.one("execute_tool weather.lookup")
    assert span.attributes[sc.GEN_AI_TOOL_NAME] == "weather.lookup"
    assert span.attributes[sc.GEN_AI_TOOL_DESCRIPTION] == "Looks up weather."
    assert registered_tools()["weather.lookup"].description == "Looks up weather."


def test_public_decorators_are_the_same_objects():
    assert agentotel.tool is tool and agentotel.retrieval is retrieval


# --- Generators -------------------------------------------------------------------------------------


@tool
def count_up(n: int):
    for i in range(n):
        yield {"i": i}
    return "finished"


def test_generator_span_ends_on_exhaustion_with_the_yielded_items(recorded):
    with run("agent", trigger="test") as current:
        assert list(count_up(3)) == [{"i": 0}, {"i": 1}, {"i": 2}]
    span = recorded.one("execute_tool count_up")
    assert result_of(span) == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert span.attributes[sc.AGENTOTEL_RUN_ID] == current.id
    assert span.end_time is not None


def test_generator_span_is_not_current_between_items(recorded):
    tracer = recorded.tracer()
    with tracer.start_as_current_span("caller") as caller:
        gen = count_up(2)
        next(gen)
        between = tracer.start_span("between")  # started by the caller while the generator is paused
        between.end()
        list(gen)
    assert recorded.one("between").parent.span_id == caller.get_span_context().span_id


def test_generator_return_value_and_send_pass_through(recorded):
    @tool
    def echo():
        received = yield "ready"
        while received is not None:
            received = yield f"got {received}"
        return "done"

    gen = echo()
    assert next(gen) == "ready"
    assert gen.send("a") == "got a"
    with pytest.raises(StopIteration) as stop:
        gen.send(None)
    assert stop.value.value == "done"
    assert result_of(recorded.one("execute_tool echo")) == ["ready", "got a"]


def test_generator_span_ends_on_close(recorded):
    gen = count_up(100)
    next(gen)
    assert recorded.named("execute_tool count_up") == []
    gen.close()
    span = recorded.one("execute_tool count_up")
    assert result_of(span) == [{"i": 0}]
    assert span.status.status_code is StatusCode.UNSET


def test_generator_span_ends_when_garbage_collected(recorded):
    def abandon():
        gen = count_up(100)
        next(gen)
        next(gen)

    abandon()
    gc.collect()
    assert result_of(recorded.one("execute_tool count_up")) == [{"i": 0}, {"i": 1}]


def test_generator_never_started_makes_no_span(recorded):
    gen = count_up(3)
    del gen
    gc.collect()
    assert recorded.spans == []


def test_generator_errors_and_thrown_exceptions(recorded):
    @tool
    def fragile():
        yield 1
        raise RuntimeError("broke mid-way")

    gen = fragile()
    assert next(gen) == 1
    with pytest.raises(RuntimeError, match="broke mid-way"):
        next(gen)
    span = recorded.one("execute_tool fragile")
    assert span.status.status_code is StatusCode.ERROR and span.attributes[sc.ERROR_TYPE] == "RuntimeError"

    @tool
    def resilient():
        while True:
            try:
                yield "working"
            except ValueError:
                yield "recovered"

    gen = resilient()
    next(gen)
    assert gen.throw(ValueError("nudge")) == "recovered"
    gen.close()
    assert result_of(recorded.one("execute_tool resilient")) == ["working", "recovered"]


def test_generator_result_is_bounded(recorded):
    @tool
    def many():
        yield from range(1000)

    assert sum(many()) == sum(range(1000))
    result = result_of(recorded.one("execute_tool many"))
    assert len(result) == 101 and result[-1] == "[900 more items]"


async def test_async_generator_exhausted_and_closed(recorded):
    @tool
    async def stream(n: int):
        for i in range(n):
            await asyncio.sleep(0)
            yield i

    async with run("agent", trigger="test") as current:
        assert [x async for x in stream(3)] == [0, 1, 2]
        gen = stream(10)
        assert await gen.__anext__() == 0
        await gen.aclose()
    first, second = recorded.named("execute_tool stream")
    assert result_of(first) == [0, 1, 2] and result_of(second) == [0]
    assert first.attributes[sc.AGENTOTEL_RUN_ID] == current.id


def test_abandoned_async_generator_span_ends_when_the_loop_finalises_it(recorded):
    @tool
    async def feed():
        for i in range(100):
            yield i

    async def main():
        gen = feed()
        assert await gen.__anext__() == 0
        del gen  # abandoned mid-stream: asyncio schedules its aclose() on the loop
        for _ in range(3):
            await asyncio.sleep(0)

    asyncio.run(main())
    span = recorded.one("execute_tool feed")
    assert result_of(span) == [0] and span.end_time is not None
    assert span.status.status_code is StatusCode.UNSET


async def test_async_generator_error(recorded):
    @tool
    async def failing():
        yield 1
        raise LookupError("gone")

    with pytest.raises(LookupError):
        async for _ in failing():
            pass
    assert recorded.one("execute_tool failing").attributes[sc.ERROR_TYPE] == "LookupError"


# --- Errors -----------------------------------------------------------------------------------------


def test_errors_are_recorded_and_re_raised_unchanged(recorded):
    error = ConnectionError("upstream down")

    @tool
    def call_api():
        raise error

    with pytest.raises(ConnectionError) as raised:
        call_api()
    assert raised.value is error
    span = recorded.one("execute_tool call_api")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[sc.ERROR_TYPE] == "ConnectionError"
    assert span.status.description == "ConnectionError: upstream down"
    assert sc.GEN_AI_TOOL_CALL_RESULT not in span.attributes


async def test_async_errors_are_re_raised_unchanged(recorded):
    @tool
    async def call_api():
        raise TimeoutError("slow")

    with pytest.raises(TimeoutError, match="slow"):
        await call_api()
    assert recorded.one("execute_tool call_api").attributes[sc.ERROR_TYPE] == "TimeoutError"


def test_secrets_in_error_messages_are_redacted(recorded):
    @tool
    def connect():
        raise PermissionError("login failed with password=hunter2")

    with pytest.raises(PermissionError, match="hunter2"):  # the user's exception is untouched
        connect()
    span = recorded.one("execute_tool connect")
    assert "hunter2" not in all_text([span])
    # The message, and in the stack trace both the quoted source line and the message line.
    assert span.attributes[sc.AGENTOTEL_PAYLOAD_REDACTIONS] == 3


# --- Schemas ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Filters:
    tags: list[str]
    limit: int = 10


def test_schema_is_derived_from_signature_and_hints():
    @tool
    def search_issues(
        query: str,
        state: Literal["open", "closed"] = "open",
        labels: Optional[list[str]] = None,
        filters: Filters | None = None,
        weights: dict[str, float] | None = None,
        page: Annotated[int, "1-based page number"] = 1,
        *extra: str,
        **options: Any,
    ) -> list[dict]:
        """Search issues."""
        return []

    info = registered_tools()["search_issues"]
    params = info.schema["parameters"]
    assert info.schema["name"] == "search_issues" and info.schema["description"] == "Search issues."
    assert params["required"] == ["query"]
    assert params["additionalProperties"] is True
    props = params["properties"]
    assert props["query"] == {"type": "string"}
    assert props["state"] == {"enum": ["open", "closed"], "default": "open"}
    assert props["labels"] == {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None}
    assert props["filters"]["anyOf"][0]["properties"] == {"tags": {"type": "array", "items": {"type": "string"}}, "limit": {"type": "integer"}}
    assert props["weights"]["anyOf"][0] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["page"] == {"type": "integer", "description": "1-based page number", "default": 1}
    assert props["extra"] == {"type": "array", "items": {"type": "string"}}


def test_schema_hash_is_sha256_of_canonical_json():
    schema = {"b": [1, 2], "a": "é"}
    canonical = '{"a":"é","b":[1,2]}'
    assert schema_hash(schema) == hashlib.sha256(canonical.encode()).hexdigest()[:16]
    assert schema_hash({"a": "é", "b": [1, 2]}) == schema_hash(schema)


def test_a_changed_interface_changes_the_hash():
    def make(with_limit: bool):
        if with_limit:

            def lookup(city: str, limit: int = 5) -> str:
                """Look up."""
                return city

        else:

            def lookup(city: str) -> str:
                """Look up."""
                return city

        return tool(lookup).tool_info.schema_hash

    assert make(False) == make(False)
    assert make(False) != make(True)


# --- Linking to the model's request ------------------------------------------------------------------


def test_a_tool_call_the_model_asked_for_gets_its_id(recorded):
    with run("agent", trigger="test"):
        _context.record_tool_calls(
            [
                _context.PendingToolCall("call_1", "get_weather", {"city": "Paris"}),
                _context.PendingToolCall("call_2", "get_weather", '{"city": "Oslo"}'),
            ]
        )
        get_weather("Oslo")
        get_weather(city="Paris")
        get_weather("Paris")  # asked for once only
        get_weather("Rome")  # never asked for
    ids = [s.attributes.get(sc.GEN_AI_TOOL_CALL_ID) for s in recorded.named("execute_tool get_weather")]
    assert ids == ["call_2", "call_1", None, None]


def test_tool_calls_of_the_outer_run_are_claimed_in_a_sub_agent(recorded):
    with run("planner", trigger="test"):
        _context.record_tool_calls([_context.PendingToolCall("call_9", "get_weather", {"city": "Lima"})])
        with run("worker"):
            get_weather("Lima")
    assert recorded.one("execute_tool get_weather").attributes[sc.GEN_AI_TOOL_CALL_ID] == "call_9"


# --- Bad input -----------------------------------------------------------------------------------------


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("repr exploded")

    def __str__(self) -> str:
        raise RuntimeError("str exploded")


def test_unserialisable_recursive_and_raising_arguments(recorded):
    @tool
    def process(lock, node, weird, data=None):
        return {"ok": True, "node": node}

    node: dict = {"name": "root"}
    node["self"] = node
    lock = threading.Lock()
    weird = Unprintable()
    result = process(lock, node, weird, data={1, 2})
    assert result["ok"] is True and result["node"] is node
    span = recorded.one("execute_tool process")
    arguments = args_of(span)
    assert arguments["node"] == {"name": "root", "self": "[cycle]"}
    assert arguments["weird"].startswith("<unrepresentable")
    assert arguments["data"] == [1, 2]
    assert result_of(span)["node"]["self"] == "[cycle]"


def test_huge_results_are_truncated_and_marked(recorded, configure):
    configure(max_value_bytes=4096)

    @tool
    def dump():
        return {"rows": [{"id": i, "text": "x" * 100} for i in range(10_000)]}

    assert len(dump()["rows"]) == 10_000
    span = recorded.one("execute_tool dump")
    text = span.attributes[sc.GEN_AI_TOOL_CALL_RESULT]
    assert len(text.encode()) <= 4096
    assert "rows" in json.loads(text)
    assert span.attributes[sc.AGENTOTEL_PAYLOAD_TRUNCATED] is True


def test_arguments_are_recorded_before_a_mutating_tool_runs(recorded):
    @tool
    def append_item(items: list, item: str) -> int:
        items.append(item)
        items.append("more")
        return len(items)

    items = ["a"]
    assert append_item(items, "b") == 3
    assert items == ["a", "b", "more"]
    assert args_of(recorded.one("execute_tool append_item")) == {"items": ["a"], "item": "b"}


def test_wrong_call_raises_the_same_error_as_undecorated(recorded):
    def plain(a, b):
        return a + b

    decorated = tool(plain)
    with pytest.raises(TypeError) as undecorated_error:
        plain(1, 2, 3)
    with pytest.raises(TypeError) as decorated_error:
        decorated(1, 2, 3)
    assert str(decorated_error.value) == str(undecorated_error.value)


def test_an_instrumentation_failure_never_reaches_the_tool(recorded, monkeypatch):
    monkeypatch.setenv("AGENTOTEL_RAISE_INTERNAL_ERRORS", "0")  # production behaviour: log and go on

    def broken_tracer():
        raise RuntimeError("tracer unavailable")

    import agentotel.tools as tools_module

    monkeypatch.setattr(tools_module, "_tracer", broken_tracer)
    assert get_weather("Paris")["city"] == "Paris"
    assert list(count_up(2)) == [{"i": 0}, {"i": 1}]
    assert recorded.spans == []


# --- Retrieval ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Doc:
    id: str
    page_content: str
    score: float


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        (["first text", "second text"], [{"content": "first text"}, {"content": "second text"}]),
        ([{"id": "d1", "score": 0.9, "text": "alpha"}], [{"id": "d1", "score": 0.9, "content": "alpha"}]),
        ([Doc("d2", "beta", 0.5)], [{"id": "d2", "score": 0.5, "content": "beta"}]),
        ([({"page_content": "gamma", "metadata": {"source": "a.md"}}, 0.25)], [{"id": "a.md", "score": 0.25, "content": "gamma"}]),
        ({"matches": [{"id": "m1", "score": 1}]}, [{"id": "m1", "score": 1.0}]),
        ({"query": "q", "passages": [{"id": "D-1", "score": 0.9, "text": "alpha"}]}, [{"id": "D-1", "score": 0.9, "content": "alpha"}]),
        ({"query": "q", "found": [{"id": "D-2", "text": "beta"}]}, [{"id": "D-2", "content": "beta"}]),  # the one list it holds
        ([{"title": "Remote work", "url_path": "/remote"}], [{"content": {"title": "Remote work", "url_path": "/remote"}}]),
        ([], []),
    ],
)
def test_retrieval_documents_of_every_shape(recorded, returned, expected):
    @retrieval(data_source="kb")
    def search(query: str, k: int = 5):
        return returned

    assert search("what is agentotel?") is returned
    span = recorded.one("retrieval kb")
    assert span.attributes[sc.GEN_AI_OPERATION_NAME] == "retrieval"
    assert span.attributes[sc.GEN_AI_DATA_SOURCE_ID] == "kb"
    assert json.loads(span.attributes[sc.GEN_AI_RETRIEVAL_QUERY_TEXT]) == "what is agentotel?"
    assert json.loads(span.attributes[sc.GEN_AI_RETRIEVAL_DOCUMENTS]) == expected


async def test_async_retrieval_inside_a_run(recorded):
    @retrieval
    async def vector_search(text: str):
        return [{"id": "v1", "score": 0.7, "content": "doc with sk-proj-abcdefghijklmnopqrstuvwxyz"}]

    async with run("agent", trigger="test") as current:
        await vector_search("q")
    span = recorded.one("retrieval vector_search")
    assert span.attributes[sc.AGENTOTEL_RUN_ID] == current.id
    assert json.loads(span.attributes[sc.GEN_AI_RETRIEVAL_DOCUMENTS]) == [{"id": "v1", "score": 0.7, "content": "doc with [REDACTED]"}]
    assert span.attributes[sc.AGENTOTEL_PAYLOAD_REDACTIONS] == 1


def test_retrieval_query_is_found_by_name_or_first_string(recorded):
    @retrieval(data_source="idx")
    def lookup(k: int, needle: str):
        return []

    lookup(3, "haystack")
    assert json.loads(recorded.one("retrieval idx").attributes[sc.GEN_AI_RETRIEVAL_QUERY_TEXT]) == "haystack"


def test_retrieval_never_consumes_an_iterator_result(recorded):
    @retrieval(data_source="lazy")
    def lazy(query: str):
        return (d for d in ["a", "b"])

    assert list(lazy("q")) == ["a", "b"]


# --- Capture off is really off ---------------------------------------------------------------------

PLANTED = "PLANTED-PAYLOAD-7f3a"


def test_capture_off_records_no_payload_byte(recorded, configure):
    configure(capture_content=False)

    @tool
    def echo(text: str, extra: dict) -> dict:
        return {"echo": text, "extra": extra}

    @tool
    def stream(text: str):
        yield text

    @tool
    def explode(text: str):
        raise ValueError(f"cannot handle {text}")

    @retrieval(data_source="kb")
    def search(query: str):
        return [{"id": "doc-1", "score": 0.5, "content": f"{PLANTED} content"}, f"{PLANTED} bare"]

    with run("agent", user="u", trigger="test", task=f"task {PLANTED}") as current:
        echo(PLANTED, {"nested": [PLANTED]})
        list(stream(PLANTED))
        with pytest.raises(ValueError):
            explode(PLANTED)
        search(f"query {PLANTED}")
        current.output = f"output {PLANTED}"
    with pytest.raises(RuntimeError):
        with run("failing", trigger="test"):
            raise RuntimeError(PLANTED)

    spans = recorded.spans
    assert len(spans) == 6  # two runs, three tools, one retrieval
    assert PLANTED not in all_text(spans)
    for span in spans:
        for key in (sc.GEN_AI_TOOL_CALL_ARGUMENTS, sc.GEN_AI_TOOL_CALL_RESULT, sc.AGENTOTEL_RUN_TASK,
                    sc.AGENTOTEL_RUN_OUTPUT, sc.GEN_AI_RETRIEVAL_QUERY_TEXT):  # fmt: skip
            assert key not in span.attributes
    # Not content: document ids and scores, error types, names.
    documents = json.loads(recorded.one("retrieval kb").attributes[sc.GEN_AI_RETRIEVAL_DOCUMENTS])
    assert documents == [{"id": "doc-1", "score": 0.5}, {}]
    assert recorded.one("execute_tool explode").attributes[sc.ERROR_TYPE] == "ValueError"


# --- Replay seam ----------------------------------------------------------------------------------------


class _Recorded:
    """A replay server answering one tool call from a recording."""

    def __init__(self) -> None:
        self.asked: list = []

    def serve_tool(self, name, arguments):
        self.asked.append((name, arguments))
        if arguments == {"city": "Paris"}:
            return True, {"city": "Paris", "temp": -5, "units": "recorded"}
        return False, None


def test_a_replay_answers_the_tool_call_instead_of_its_body(recorded):
    from agentotel.cases import _active

    server = _Recorded()
    token = _active.activate(server)
    try:
        assert get_weather("Paris") == {"city": "Paris", "temp": -5, "units": "recorded"}
        assert get_weather("Oslo")["temp"] == 21  # not recorded: the body runs
    finally:
        _active.deactivate(token)
    assert server.asked == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
    first, second = recorded.named("execute_tool get_weather")
    assert result_of(first)["units"] == "recorded" and result_of(second)["units"] == "metric"
