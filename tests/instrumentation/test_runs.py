"""run(): the root span, the Run handle, nesting, and attribution on every span of a run."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from opentelemetry import baggage, context, propagate
from opentelemetry.trace import SpanKind, StatusCode

import agentotel
from agentotel import semconv as sc
from agentotel.runs import Run, infer_trigger, run

ATTRIBUTION = (sc.AGENTOTEL_RUN_ID, sc.ENDUSER_ID, sc.GEN_AI_CONVERSATION_ID, sc.AGENTOTEL_RUN_TRIGGER)


def attribution(span) -> tuple:
    return tuple(span.attributes.get(key) for key in ATTRIBUTION)


def test_run_opens_an_invoke_agent_root_span(recorded):
    with run("triage", user="alice", session="s-1", trigger="test", run_id="run-1", task="fix it") as current:
        assert isinstance(current, Run)
        current.output = {"answer": 42}
    root = recorded.one("invoke_agent triage")
    assert root.kind is SpanKind.INTERNAL and root.parent is None
    assert root.attributes[sc.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert root.attributes[sc.GEN_AI_AGENT_NAME] == "triage"
    assert root.attributes[sc.AGENTOTEL_RUN_NAME] == "triage"
    assert attribution(root) == ("run-1", "alice", "s-1", "test")
    assert root.attributes[sc.AGENTOTEL_RUN_TASK] == '"fix it"'
    assert root.attributes[sc.AGENTOTEL_RUN_OUTPUT] == '{"answer":42}'
    assert current.id == "run-1"
    assert current.trace_id == format(root.context.trace_id, "032x") and len(current.trace_id) == 32
    assert root.status.status_code is StatusCode.UNSET


def test_run_ids_are_fresh_uuids_when_not_given(recorded):
    with run("a") as first:
        pass
    with run("a") as second:
        pass
    assert first.id != second.id and len(first.id) == 36
    assert [s.attributes[sc.AGENTOTEL_RUN_ID] for s in recorded.spans] == [first.id, second.id]


def test_metadata_and_agent_version(recorded):
    with run("a", metadata={"ticket": "ENG-42", "token": "abc"}, agent_version="1.2", trigger="test"):
        pass
    root = recorded.one("invoke_agent a")
    assert root.attributes[sc.AGENTOTEL_RUN_METADATA] == '{"ticket":"ENG-42","token":"[REDACTED]"}'
    assert root.attributes[sc.AGENTOTEL_PAYLOAD_REDACTIONS] == 1
    assert root.attributes[sc.GEN_AI_AGENT_VERSION] == "a@1.2"


def test_an_exception_marks_the_run_and_passes_through_unchanged(recorded):
    error = KeyError("missing")
    with pytest.raises(KeyError) as raised:
        with run("failing", trigger="test"):
            raise error
    assert raised.value is error
    root = recorded.one("invoke_agent failing")
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes[sc.ERROR_TYPE] == "KeyError"
    assert [e.name for e in root.events] == ["exception"]


def test_custom_exception_types_are_fully_qualified(recorded):
    class AgentGaveUp(Exception):
        pass

    with pytest.raises(AgentGaveUp):
        with run("failing", trigger="test"):
            raise AgentGaveUp()
    assert recorded.one("invoke_agent failing").attributes[sc.ERROR_TYPE] == f"{__name__}.{AgentGaveUp.__qualname__}"


def test_nested_runs_are_sub_agents_with_their_own_ids(recorded):
    with run("planner", user="alice", session="s", trigger="test") as outer:
        with run("coder") as inner:
            recorded.tracer().start_span("work").end()
    outer_span = recorded.one("invoke_agent planner")
    inner_span = recorded.one("invoke_agent coder")
    work = recorded.one("work")
    assert inner.id != outer.id and inner.trace_id == outer.trace_id
    assert inner_span.parent.span_id == outer_span.context.span_id
    assert inner_span.attributes[sc.AGENTOTEL_RUN_PARENT_ID] == outer.id
    assert sc.AGENTOTEL_RUN_PARENT_ID not in outer_span.attributes
    # The sub-agent inherits user, session and trigger; its spans carry its own run id.
    assert attribution(inner_span) == (inner.id, "alice", "s", "test")
    assert attribution(work) == (inner.id, "alice", "s", "test")
    assert work.parent.span_id == inner_span.context.span_id


async def test_async_with(recorded):
    async with run("async-agent", user="bob", trigger="test") as current:
        await asyncio.sleep(0)
        recorded.tracer().start_span("inside").end()
        current.output = "ok"
    root = recorded.one("invoke_agent async-agent")
    assert root.attributes[sc.AGENTOTEL_RUN_OUTPUT] == '"ok"'
    assert recorded.one("inside").attributes[sc.AGENTOTEL_RUN_ID] == current.id


def test_decorator_on_a_function(recorded):
    @run("summarise", user="carol", trigger="test")
    def summarise(text: str, limit: int = 10) -> str:
        recorded.tracer().start_span("inside").end()
        return text[:limit]

    assert summarise("hello world", limit=5) == "hello"
    assert summarise("again") == "again"
    roots = recorded.named("invoke_agent summarise")
    assert len(roots) == 2
    assert roots[0].attributes[sc.AGENTOTEL_RUN_TASK] == '{"text":"hello world","limit":5}'
    assert roots[0].attributes[sc.AGENTOTEL_RUN_OUTPUT] == '"hello"'
    assert roots[0].attributes[sc.AGENTOTEL_RUN_ID] != roots[1].attributes[sc.AGENTOTEL_RUN_ID]
    assert all(s.attributes[sc.ENDUSER_ID] == "carol" for s in recorded.spans)


async def test_decorator_on_an_async_function(recorded):
    @run("fetch", trigger="test")
    async def fetch(n: int) -> int:
        await asyncio.sleep(0)
        return n * 2

    assert await fetch(21) == 42
    root = recorded.one("invoke_agent fetch")
    assert root.attributes[sc.AGENTOTEL_RUN_OUTPUT] == "42"


def test_decorated_method_task_leaves_self_out(recorded):
    class Agent:
        @run("method-agent", trigger="test")
        def solve(self, problem: str) -> str:
            return problem.upper()

    assert Agent().solve("abc") == "ABC"
    assert recorded.one("invoke_agent method-agent").attributes[sc.AGENTOTEL_RUN_TASK] == '{"problem":"abc"}'


def test_decorating_a_generator_is_refused_clearly():
    with pytest.raises(TypeError, match="generator"):

        @run("streaming")
        def stream():
            yield 1


def test_bare_decorator_uses_the_function_name(recorded):
    @agentotel.run
    def nightly():
        return 1

    assert nightly() == 1
    assert recorded.one("invoke_agent nightly")


def test_decorated_function_errors_pass_through(recorded):
    @run("bad", trigger="test")
    def bad():
        raise ValueError("nope")

    with pytest.raises(ValueError, match="nope"):
        bad()
    assert recorded.one("invoke_agent bad").status.status_code is StatusCode.ERROR


# --- Attribution ------------------------------------------------------------------------------------


def test_other_instrumentations_spans_are_stamped(recorded):
    http = recorded.tracer("opentelemetry.instrumentation.httpx")
    with run("a", user="u", session="s", trigger="test", run_id="r") as current:
        with http.start_as_current_span("GET", kind=SpanKind.CLIENT):
            recorded.tracer("sqlalchemy").start_span("SELECT").end()
    for name in ("GET", "SELECT"):
        assert attribution(recorded.one(name)) == ("r", "u", "s", "test")
    assert current.id == "r"


def test_spans_outside_a_run_are_not_stamped(recorded):
    with run("a", trigger="test"):
        pass
    recorded.tracer().start_span("after").end()
    assert attribution(recorded.one("after")) == (None, None, None, None)


def test_a_span_keeps_its_own_user(recorded):
    with run("a", user="agent-user", trigger="test"):
        recorded.tracer().start_span("server", attributes={sc.ENDUSER_ID: "http-user"}).end()
    assert recorded.one("server").attributes[sc.ENDUSER_ID] == "http-user"


def test_threads_started_inside_a_run_keep_parent_and_attribution(recorded):
    tracer = recorded.tracer("worker")

    def work(name: str) -> None:
        with tracer.start_as_current_span(name):
            pass

    class Worker(threading.Thread):  # a subclass overriding run() is covered too
        def run(self) -> None:
            work("subclass-thread")

    with run("threads", user="u", session="s", trigger="test") as current:
        with tracer.start_as_current_span("parent") as parent:
            threads = [threading.Thread(target=work, args=(f"thread-{i}",)) for i in range(3)] + [Worker()]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            with ThreadPoolExecutor(max_workers=2) as pool:
                list(pool.map(work, [f"pool-{i}" for i in range(4)]))
    names = [f"thread-{i}" for i in range(3)] + ["subclass-thread"] + [f"pool-{i}" for i in range(4)]
    for name in names:
        span = recorded.one(name)
        assert span.parent is not None and span.parent.span_id == parent.get_span_context().span_id, name
        assert span.context.trace_id == parent.get_span_context().trace_id
        assert attribution(span) == (current.id, "u", "s", "test"), name


def test_threads_started_outside_a_run_are_untouched(recorded):
    with run("a", trigger="test"):
        pass
    thread = threading.Thread(target=lambda: recorded.tracer().start_span("background").end())
    thread.start()
    thread.join()
    assert "run" not in vars(thread)  # no context was carried over
    background = recorded.one("background")
    assert background.parent is None and attribution(background) == (None, None, None, None)


def test_a_pool_created_before_the_run_still_attributes_tasks_submitted_inside(recorded):
    pool = ThreadPoolExecutor(max_workers=1)
    pool.submit(lambda: None).result()  # the worker thread exists before the run
    try:
        with run("late", trigger="test") as current:
            pool.submit(lambda: recorded.tracer().start_span("task").end()).result()
    finally:
        pool.shutdown()
    assert recorded.one("task").attributes[sc.AGENTOTEL_RUN_ID] == current.id


async def test_asyncio_tasks_keep_parent_and_attribution(recorded):
    tracer = recorded.tracer("worker")

    async def work(name: str) -> None:
        await asyncio.sleep(0)
        with tracer.start_as_current_span(name):
            await asyncio.sleep(0)

    async with run("tasks", user="u", trigger="test") as current:
        with tracer.start_as_current_span("parent") as parent:
            await asyncio.gather(*(asyncio.create_task(work(f"task-{i}")) for i in range(5)))
            await asyncio.to_thread(lambda: tracer.start_span("to-thread").end())
    for name in [f"task-{i}" for i in range(5)] + ["to-thread"]:
        span = recorded.one(name)
        assert span.parent.span_id == parent.get_span_context().span_id, name
        assert attribution(span)[:2] == (current.id, "u"), name


async def test_concurrent_runs_in_tasks_do_not_mix(recorded):
    tracer = recorded.tracer("worker")

    async def agent(user: str) -> str:
        async with run("agent", user=user, trigger="test") as current:
            for _ in range(3):
                await asyncio.sleep(0)
                tracer.start_span(f"step-{user}").end()
            return current.id

    ids = await asyncio.gather(*(agent(f"user-{i}") for i in range(4)))
    for i, run_id in enumerate(ids):
        steps = recorded.named(f"step-user-{i}")
        assert len(steps) == 3
        assert {attribution(s)[:2] for s in steps} == {(run_id, f"user-{i}")}


# --- Trigger -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "interactive", "expected"),
    [
        ({"GITHUB_ACTIONS": "true"}, True, "ci"),
        ({"CI": "1"}, False, "ci"),
        ({"GITLAB_CI": "true"}, False, "ci"),
        ({"CI": "false"}, True, "cli"),
        ({}, True, "cli"),
        ({}, False, "api"),
    ],
)
def test_trigger_inference(environ, interactive, expected):
    assert infer_trigger(environ, interactive) == expected


def test_trigger_is_inferred_when_not_given(recorded):
    with run("a") as current:
        pass
    assert current.trigger in {"ci", "cli", "api"}
    assert recorded.one("invoke_agent a").attributes[sc.AGENTOTEL_RUN_TRIGGER] == current.trigger


# --- Baggage across processes ----------------------------------------------------------------------


def _outgoing_headers() -> dict[str, str]:
    headers: dict[str, str] = {}
    propagate.inject(headers)
    return headers


def test_no_baggage_leaves_the_process_by_default(recorded):
    with run("a", user="alice", session="s", trigger="test"):
        headers = _outgoing_headers()
    assert "traceparent" in headers
    assert "alice" not in headers.get("baggage", "")


def test_propagate_sends_run_user_and_session_as_baggage(recorded):
    with run("a", user="alice", session="s-1", trigger="test", run_id="run-9", propagate=True):
        headers = _outgoing_headers()
    entries = dict(entry.split("=", 1) for entry in headers["baggage"].split(","))
    assert entries[sc.AGENTOTEL_RUN_ID] == "run-9"
    assert entries[sc.ENDUSER_ID] == "alice"
    assert entries[sc.GEN_AI_CONVERSATION_ID] == "s-1"
    assert baggage.get_all() == {}  # nothing left behind after the run


def test_a_downstream_process_that_accepts_baggage_attributes_spans_from_it(recorded, configure):
    with run("upstream", user="alice", session="s-1", trigger="test", run_id="run-9", propagate=True):
        headers = _outgoing_headers()
    configure(accept_baggage=True)
    # The receiving side (another process): an HTTP server instrumentation extracts the headers.
    token = context.attach(propagate.extract(headers))
    try:
        recorded.tracer("server").start_span("handle").end()
        with run("downstream") as downstream:
            pass
    finally:
        context.detach(token)
    assert attribution(recorded.one("handle")) == ("run-9", "alice", "s-1", "test")
    down = recorded.one("invoke_agent downstream")
    assert down.attributes[sc.AGENTOTEL_RUN_PARENT_ID] == "run-9"
    assert downstream.user == "alice" and downstream.id != "run-9"


def test_inbound_baggage_is_ignored_unless_the_process_accepts_it(recorded):
    # Any HTTP caller can send baggage: by default it names no user and grafts nothing onto another run.
    headers = {"baggage": f"{sc.AGENTOTEL_RUN_ID}=victim-run,{sc.ENDUSER_ID}=admin,{sc.GEN_AI_CONVERSATION_ID}=s-x"}
    token = context.attach(propagate.extract(headers))
    try:
        recorded.tracer("server").start_span("handle").end()
        with run("downstream", trigger="test") as downstream:
            pass
    finally:
        context.detach(token)
    assert attribution(recorded.one("handle")) == (None, None, None, None)
    down = recorded.one("invoke_agent downstream")
    assert sc.AGENTOTEL_RUN_PARENT_ID not in down.attributes
    assert downstream.user is None and down.attributes.get(sc.ENDUSER_ID) is None


# --- Environment -------------------------------------------------------------------------------------


def test_the_outermost_run_records_its_environment(recorded, configure):
    configure(capture_environment=True)
    with run("a", trigger="test"):
        with run("sub"):
            pass
    root = recorded.one("invoke_agent a")
    assert root.attributes.get(sc.AGENTOTEL_ENV_HASH)
    assert root.attributes.get(sc.AGENTOTEL_ENV_SNAPSHOT, "").startswith("{")
    assert sc.AGENTOTEL_ENV_HASH not in recorded.one("invoke_agent sub").attributes


def test_environment_capture_can_be_turned_off(recorded, configure):
    configure(capture_environment=False)
    with run("a", trigger="test"):
        pass
    attributes = recorded.one("invoke_agent a").attributes
    assert sc.AGENTOTEL_ENV_HASH not in attributes and sc.AGENTOTEL_ENV_SNAPSHOT not in attributes
