"""A third held-out fault-injection set for `diff` and `check`: a research assistant with retrieval.

    python tests/analysis/heldout3.py [RECORDER|PAIR ...]    # records the pairs, prints the table

Not the benchmark's generator, not heldout.py's desks nor heldout2.py's travel desk: a literature desk that
searches papers (a retrieval with scores), reads the two best, cites one and answers with the effect size,
recorded four ways no held-out set used, each in a process of its own:

- `genai`: a google-genai function-calling loop (Gemini API) under agentotel; the search is an
  `agentotel.retrieval`, the reads and citations `agentotel.tool`s; Gemini's calls carry no ids.
- `bedrock`: a boto3 Bedrock `converse` tool loop under agentotel (tool errors as `toolResult` status error).
- `mcp`: the tools served by an in-process MCP server, called through the MCP client, the model driven by
  the anthropic SDK (tool_use / tool_result with is_error), under agentotel.
- `oi`: OpenInference's openai instrumentation for the model calls, the app's own OpenInference spans for
  the rest: a CHAIN root, a RETRIEVER span whose documents are `retrieval.documents.N.document.*`, TOOL spans.

The model on 127.0.0.1 reads the conversation it is sent (Gemini's and Bedrock's requests are read in chat
form). Faults prefer what the other sets cover least: retrieval that found nothing or only weak matches and
was used anyway, history dropped between turns, instructions changed mid-run, a tool description changed in
what is offered, a tool's result shape changed, premature termination, a search repeated, a tool error
ignored, an answer with numbers or ids found nowhere, arguments failing the schema. Good runs vary
legitimately: other topics, ids, scores and years, three or four documents found, a null optional `doi`, the
other order of the two reads, a paraphrased answer, and a citation call the loop retries after a transient
503. Ground truth is located on the recorded faulty run by what its steps did (heldout.py's locators).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from shapes import Status, reply, results, system, users  # noqa: E402

AGENT = "lit-desk"
SYSTEM = ("You are a research assistant. Search papers on the question, read the two most relevant, cite the best "
          "one with cite, then answer with its effect size and the citation.")
NO_CITE = ("You are a research assistant. Search papers on the question, read the two most relevant, then answer "
           "briefly.")  # the citation clause is gone (instructions changed mid-run)
TOPICS = ["spaced repetition on exam scores", "standing desks on back pain", "mindfulness apps on sleep quality",
          "cold showers on sick days"]
AUTHORS = ["Okafor", "Lindqvist", "Haddad", "Moreau", "Tanaka", "Novak"]


class Now:
    fault: str | None = None
    variant = 0
    calls = 0
    failed: set[str] = set()
    flaky = False  # this recorder's good and faulty runs meet a 429 on their second model call (the loop retries)


def _start(fault: str | None, variant: int) -> None:
    Now.fault, Now.variant, Now.calls, Now.failed = fault, variant, 0, set()


def task(variant: int) -> str:
    return f"What does the literature say about {TOPICS[variant % 4]}? Give the effect size with a citation."


# ---- the tools (plain functions; each recorder declares them its own way) ---------------------------------


def _papers(query: str) -> list[dict[str, Any]]:
    v = Now.variant
    out = []
    for i in range(3 + v % 2):  # three or four documents found
        n = 4100 + 37 * v + 11 * i
        score = round(0.93 - 0.11 * i - 0.01 * v, 2)
        if Now.fault == "weak_retrieval":
            score = round(score / 6, 3)
        out.append({"id": f"P-{n}", "title": f"{AUTHORS[(v + i) % 6]} et al.: a trial of {query}", "score": score,
                    "year": 2014 + (v + 3 * i) % 10, "doi": None if (v + i) % 2 else f"10.5555/lit.{n}",
                    "content": f"Randomised trial ({2014 + (v + 3 * i) % 10}) of {query}; see the full text for the effect size."})
    return out


def search_papers(query: str, limit: int) -> list[dict[str, Any]]:
    """Papers matching a research question, best match first, with a relevance score."""
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise ValueError(f"limit must be an integer, got {limit!r}")
    if Now.fault == "empty_search":
        return []
    if Now.variant % 2 and len(query.split()) > 3:
        return []  # this index only matches short queries: the model asks again, shorter (a good variation)
    return _papers(query)[:limit]


def read_paper(paper_id: str) -> dict[str, Any]:
    """A paper's full record: sample size, effect size (Cohen's d) and main finding."""
    if Now.fault == "read_403":
        raise PermissionError(f"403 Forbidden: {paper_id} is behind the publisher's paywall")
    n = int(paper_id[2:])
    d = round(0.12 + (n % 41) / 100, 2)
    size = 180 + (n % 23) * 40
    if Now.fault == "shape_change":  # the service answers in a new structure
        return {"id": paper_id, "stats": {"cohen_d": d, "participants": size}, "summary": "a small to moderate benefit"}
    return {"id": paper_id, "sample_size": size, "effect_size": d, "finding": "a small to moderate benefit"}


def cite(paper_id: str, style: str) -> dict[str, Any]:
    """A formatted citation of a paper."""
    if Now.variant >= 2 and "cite" not in Now.failed:  # transient: the loop retries it (a good variation)
        Now.failed.add("cite")
        raise ConnectionError("503 Service Unavailable: citation service busy, retry")
    n = int(paper_id[2:])
    return {"paper_id": paper_id, "citation": f"{AUTHORS[n % 6]} et al. ({2014 + n % 10})", "style": style}


TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (search_papers, read_paper, cite)}
SCHEMAS = {
    "search_papers": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                      "required": ["query", "limit"]},
    "read_paper": {"type": "object", "properties": {"paper_id": {"type": "string"}}, "required": ["paper_id"]},
    "cite": {"type": "object", "properties": {"paper_id": {"type": "string"}, "style": {"type": "string", "enum": ["apa", "mla"]}},
             "required": ["paper_id", "style"]},
}
DEPRECATED = "Deprecated: do not call. Answer from the search snippets instead."


def description(name: str) -> str:
    """What the loop offers the model as a tool's description (a fault changes one)."""
    if Now.fault == "tool_description_changed" and name == "read_paper":
        return DEPRECATED
    return TOOLS[name].__doc__ or ""


# ---- the model ---------------------------------------------------------------------------------------------


def _parsed(value: Any) -> Any:
    while isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return value


def _found(body: dict[str, Any]) -> tuple[list[Any], list[str]]:
    out, errors = [], []
    for r in results(body):
        if isinstance(r, str):
            try:
                r = json.loads(r)
            except ValueError:
                pass
        if isinstance(r, str) or (isinstance(r, dict) and "error" in r):
            errors.append(str(r))
        else:
            out.append(r)
    return out, errors


def model(body: dict[str, Any]) -> dict[str, Any]:
    Now.calls += 1
    fault, v = Now.fault, Now.variant
    if Now.flaky and v >= 2 and Now.calls == 2 and "429" not in Now.failed:
        Now.failed.add("429")
        raise Status(429, "Resource has been exhausted (e.g. check quota): 429 RESOURCE_EXHAUSTED")
    if "research assistant" not in system(body):
        return reply("Sure! What would you like to know?")
    asked = " ".join(users(body))
    m = re.search(r"literature say about (.+?)\?", asked)
    if m is None:
        return reply("Which question should I research?")
    topic = m.group(1)
    offered = {t["function"]["name"]: t["function"].get("description") or "" for t in body.get("tools") or ()}
    found, errors = _found(body)
    searches = [r for r in found if isinstance(r, list)]
    reads = {r["id"]: r for r in found if isinstance(r, dict) and "finding" in r or isinstance(r, dict) and "summary" in r}
    citations = [r for r in found if isinstance(r, dict) and "citation" in r]
    if not searches:
        limit: Any = "five" if fault == "limit_as_text" and not errors else 5
        return reply(None, ("search_papers", {"query": topic, "limit": limit}))
    hits = searches[-1]
    if not hits and len(searches) == 1 and v % 2:
        return reply(None, ("search_papers", {"query": " ".join(topic.split()[:3]), "limit": 5}))  # shorter
    if not hits:
        if fault == "empty_search":  # nothing found, and it answers from memory
            return reply("Studies agree on a moderate effect: Cohen's d = 0.38 across 2,400 participants (Brenner et al., 2019).")
        return reply("I found no papers on this question.")
    ranked = sorted(hits, key=lambda d: -d["score"])
    if "Deprecated" in offered.get("read_paper", ""):  # it trusts the description it was given
        best = ranked[0]
        return reply(f"The best match is {best['id']} ({best['title']}, {best['year']}): a randomised trial; effect size about d = 0.30.")
    want = [d["id"] for d in ranked[:2]]
    read_failed = [e for e in errors if "read" in e or "paywall" in e]
    if fault == "cite_unread" and not citations:  # cites the top hit without reading it
        return reply(None, ("cite", {"paper_id": want[0], "style": "apa"}))
    if fault == "cite_unread":
        return reply(f"{citations[-1]['citation']} ({want[0]}) is the best match: a randomised trial of {topic}.")
    if not reads and not read_failed:
        if fault == "swapped_id":  # reads a paper id no search returned (two digits swapped)
            want = [want[0][:3] + want[0][4] + want[0][3] + want[0][5:], *want[1:]]
        ids = list(reversed(want)) if v % 2 else want
        return reply(None, *[("read_paper", {"paper_id": i}) for i in ids])
    if fault == "repeat_search" and sum(1 for r in searches if r) == 1:  # the same search again, after reading
        return reply(None, ("search_papers", {"query": last_query(body), "limit": 5}))
    if not reads and read_failed and fault == "read_403":  # goes on as if it had read them
        best = ranked[0]
        return reply(f"{best['title']} ({best['year']}) reports d = 0.41 with 620 participants, a small to moderate benefit.")
    best_id = next((i for i in want if i in reads), next(iter(reads)))
    paper = reads[best_id]
    d = paper.get("effect_size", (paper.get("stats") or {}).get("cohen_d"))
    size = paper.get("sample_size", (paper.get("stats") or {}).get("participants"))
    wants_cite = "cite the best" in system(body)
    failed_cite = [e for e in errors if "503" in e]
    if wants_cite and not citations and not failed_cite:
        return reply(None, ("cite", {"paper_id": best_id, "style": "apa"}))
    if wants_cite and not citations:
        return reply(None, ("cite", {"paper_id": best_id, "style": "apa"}))
    citation = citations[-1]["citation"] if citations else best_id
    if fault == "made_up_effect":
        d, size = round(d + 0.19, 2), size + 800
    if fault == "made_up_citation":
        citation, best_id = "Whitfield & Osei (2011)", "P-9906"
    if v % 2:
        return reply(f"{citation} [{best_id}]: d = {d} (n = {size}), a small to moderate benefit.")
    return reply(f"The best evidence, {citation} ({best_id}), found an effect size of d = {d} in {size} participants: "
                 f"a small to moderate benefit.")


def last_query(body: dict[str, Any]) -> str:
    asked = [json.loads(c["function"]["arguments"]) for m in body.get("messages") or () for c in m.get("tool_calls") or ()
             if c["function"]["name"] == "search_papers"]
    return asked[-1]["query"]


# ---- the harness: what each turn sends, how long the loop goes on ------------------------------------------


def instructions(turn: int) -> str:
    return NO_CITE if Now.fault == "instructions_changed" and turn >= 2 else SYSTEM


def window(turn: int, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a turn sends (chat form, system first): the whole conversation, or what a faulty memory kept."""
    if Now.fault == "history_dropped" and turn >= 2:
        last = max(i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls"))
        return messages[:2] + messages[last:]  # the search and its results are gone
    if Now.fault == "result_cut":  # a context manager that keeps a placeholder for the papers' records
        return [{**m, "content": '"[record elided]"'} if m.get("role") == "tool" and '"sample_size"' in m["content"] else m
                for m in messages]
    if Now.fault == "history_rewritten" and turn >= 3:  # a faulty summariser rewrites the papers' numbers
        return [{**m, "content": re.sub(r'"effect_size": (\d)\.(\d)(\d)', r'"effect_size": \1.\3\2', m["content"])}
                if m.get("role") == "tool" else m for m in messages]
    return messages


def max_turns() -> int:
    return 2 if Now.fault == "premature_stop" else 8


def offered() -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "description": description(n), "parameters": SCHEMAS[n]}} for n in TOOLS]


def chat_loop(create: Callable[[list[dict[str, Any]]], dict[str, Any]], on_tool: Callable[[str, str, dict[str, Any]], tuple[Any, bool]],
              question: str) -> str:
    """A tool loop over chat-form messages. `on_tool` returns (result, failed); a failed call whose error says
    503 is retried once (as a transient error), any other failure is shown to the model as an error result."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    for turn in range(max_turns()):
        messages[0] = {"role": "system", "content": instructions(turn)}
        sent = window(turn, messages)
        try:
            message = create(sent)
        except Exception as exc:  # noqa: BLE001 - a rate limit, as the SDK raises it: retried once
            if "429" not in str(exc):
                raise
            message = create(sent)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return message.get("content") or ""
        for call in calls[:1] if Now.fault == "parallel_dropped" else calls:  # the fault runs a turn's first call only
            arguments = json.loads(call["function"]["arguments"])
            result, failed = on_tool(call["id"], call["function"]["name"], arguments)
            if failed and "503" in str(result):
                result, failed = on_tool(call["id"], call["function"]["name"], arguments)
            messages.append({"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"],
                             "content": f"Error: {result}" if failed else json.dumps(result)})
    return "I could not finish."


def run_tool(name: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
    try:
        return TOOLS[name](**arguments), False
    except Exception as exc:  # noqa: BLE001 - the loop shows the model the error
        return str(exc), True


# ---- the model server: chat completions and Anthropic messages (shapes.py's forms), Gemini, Bedrock ---------


def _from_gemini(body: dict[str, Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    sys_ = body.get("systemInstruction") or body.get("system_instruction")
    if sys_:
        messages.append({"role": "system", "content": " ".join(p.get("text", "") for p in sys_.get("parts") or ())})
    for c in body.get("contents") or ():
        parts = c.get("parts") or ()
        calls = [p["functionCall"] for p in parts if "functionCall" in p]
        answers = [p["functionResponse"] for p in parts if "functionResponse" in p]
        text = " ".join(p["text"] for p in parts if "text" in p)
        if c.get("role") == "model":
            messages.append({"role": "assistant", "content": text or None, "tool_calls": [
                {"id": f"g{i}", "type": "function", "function": {"name": f["name"], "arguments": json.dumps(f.get("args") or {})}}
                for i, f in enumerate(calls)]})
            continue
        for a in answers:
            response = a.get("response") or {}
            content = json.dumps(response["output"]) if "output" in response else f"Error: {response.get('error')}"
            messages.append({"role": "tool", "tool_call_id": a.get("id") or a["name"], "content": content})
        if text:
            messages.append({"role": "user", "content": text})
    tools = [{"type": "function", "function": {"name": f["name"], "description": f.get("description")}}
             for t in body.get("tools") or () for f in t.get("functionDeclarations") or ()]
    return {"messages": messages, "tools": tools}


def _to_gemini(answer: dict[str, Any]) -> dict[str, Any]:
    message = answer["choices"][0]["message"]
    parts: list[dict[str, Any]] = [{"text": message["content"]}] if message.get("content") else []
    parts += [{"functionCall": {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}}
              for c in message.get("tool_calls") or ()]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 200 + 40 * Now.calls, "candidatesTokenCount": 12, "totalTokenCount": 212 + 40 * Now.calls},
            "modelVersion": "gemini-2.0-flash-001", "responseId": f"r{uuid.uuid4().hex[:10]}"}


def _from_bedrock(body: dict[str, Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": " ".join(s.get("text", "") for s in body.get("system") or ())}]
    for m in body.get("messages") or ():
        blocks = m.get("content") or ()
        text = " ".join(b["text"] for b in blocks if "text" in b)
        if m["role"] == "assistant":
            calls = [{"id": b["toolUse"]["toolUseId"], "type": "function",
                      "function": {"name": b["toolUse"]["name"], "arguments": json.dumps(b["toolUse"]["input"])}} for b in blocks if "toolUse" in b]
            messages.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for b in blocks:
            if "toolResult" in b:
                r = b["toolResult"]
                inner = r.get("content") or [{}]
                value = json.dumps(inner[0]["json"].get("result")) if "json" in inner[0] else inner[0].get("text", "")
                messages.append({"role": "tool", "tool_call_id": r["toolUseId"],
                                 "content": f"Error: {value}" if r.get("status") == "error" else value})
        if text:
            messages.append({"role": "user", "content": text})
    tools = [{"type": "function", "function": {"name": t["toolSpec"]["name"], "description": t["toolSpec"].get("description")}}
             for t in (body.get("toolConfig") or {}).get("tools") or ()]
    return {"messages": messages, "tools": tools}


def _to_bedrock(answer: dict[str, Any]) -> dict[str, Any]:
    message = answer["choices"][0]["message"]
    content: list[dict[str, Any]] = [{"text": message["content"]}] if message.get("content") else []
    content += [{"toolUse": {"toolUseId": "tooluse_" + c["id"][5:], "name": c["function"]["name"],
                             "input": json.loads(c["function"]["arguments"])}} for c in message.get("tool_calls") or ()]
    return {"output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use" if message.get("tool_calls") else "end_turn",
            "usage": {"inputTokens": 200 + 40 * Now.calls, "outputTokens": 12, "totalTokens": 212 + 40 * Now.calls},
            "metrics": {"latencyMs": 5}}


def _from_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    from shapes import _as_chat

    chat = _as_chat(body)  # keeps the tools' names only: the descriptions are what this model reads too
    chat["tools"] = [{"type": "function", "function": {"name": t["name"], "description": t.get("description")}} for t in body.get("tools") or ()]
    for m, raw in zip([m for m in chat["messages"] if m["role"] == "tool"],
                      [b for m in body.get("messages") or () if isinstance(m["content"], list) for b in m["content"]
                       if b.get("type") == "tool_result"]):
        if raw.get("is_error") and not m["content"].startswith("Error"):
            m["content"] = f"Error: {m['content']}"
    return chat


@contextlib.contextmanager
def serve() -> Iterator[str]:
    """The model on 127.0.0.1: yields the root URL (chat completions at /v1, Anthropic at /v1/messages, Gemini
    at /v1beta/models/...:generateContent, Bedrock at /model/.../converse)."""
    from shapes import _anthropic

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            try:
                if self.path.endswith("/messages"):
                    out = _anthropic(model(_from_anthropic(body)))
                elif "generateContent" in self.path:
                    out = _to_gemini(model(_from_gemini(body)))
                elif self.path.endswith("/converse"):
                    out = _to_bedrock(model(_from_bedrock(body)))
                else:
                    out = model(body)
                    out["usage"]["prompt_tokens"] = out["usage"]["prompt_tokens"] or len(json.dumps(body.get("messages"))) // 4
                status, data = 200, json.dumps(out).encode()
            except Status as exc:
                status, data = exc.code, json.dumps({"error": {"message": str(exc), "type": "api_error"}}).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# ---- recorders: each runs in a process of its own -----------------------------------------------------------


class Recorder:
    def __init__(self, options: dict[str, Any], url: str) -> None:
        self.options, self.url = options, url

    def run(self, question: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        import agentotel

        agentotel.shutdown()


class _Agentotel(Recorder):
    """Under agentotel: the search an `agentotel.retrieval`, the other tools `agentotel.tool`s."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel

        agentotel.instrument(directory=options["store"], service_name=AGENT)
        self.tools = {"search_papers": agentotel.retrieval(data_source="papers")(search_papers),
                      "read_paper": agentotel.tool(read_paper), "cite": agentotel.tool(cite)}

    def on_tool(self, call_id: str, name: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
        try:
            return self.tools[name](**arguments), False
        except Exception as exc:  # noqa: BLE001
            return str(exc), True

    def create(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError

    def run(self, question: str) -> str:
        import agentotel

        with agentotel.run(AGENT, task=question) as run:
            try:
                run.output = chat_loop(self.create, self.on_tool, question)
            except Exception:  # noqa: BLE001 - the run records the failure
                pass
        return run.id


class Genai(_Agentotel):
    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        from google import genai

        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})

    def create(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()}
        contents: list[dict[str, Any]] = []
        for m in messages[1:]:
            if m["role"] == "user":
                contents.append({"role": "user", "parts": [{"text": m["content"]}]})
            elif m["role"] == "assistant":
                parts = [{"text": m["content"]}] if m.get("content") else []
                parts += [{"function_call": {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}}
                          for c in m.get("tool_calls") or ()]
                contents.append({"role": "model", "parts": parts})
            else:
                failed = m["content"].startswith("Error: ")
                response = {"error": m["content"][7:]} if failed else {"output": json.loads(m["content"])}
                part = {"function_response": {"name": names[m["tool_call_id"]], "response": response}}
                if contents and contents[-1]["role"] == "user" and "function_response" in contents[-1]["parts"][0]:
                    contents[-1]["parts"].append(part)  # one turn answers every call of the model's turn
                else:
                    contents.append({"role": "user", "parts": [part]})
        config = {"system_instruction": messages[0]["content"], "tools": [{"function_declarations": [
            {"name": t["function"]["name"], "description": t["function"]["description"], "parameters_json_schema": t["function"]["parameters"]}
            for t in offered()]}]}
        response = self.client.models.generate_content(model="gemini-2.0-flash", contents=contents, config=config)
        parts = response.candidates[0].content.parts or []
        text = " ".join(p.text for p in parts if p.text)
        calls = [{"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                  "function": {"name": p.function_call.name, "arguments": json.dumps(dict(p.function_call.args or {}))}}
                 for p in parts if p.function_call]
        return {"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})}


class Bedrock(_Agentotel):
    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import boto3
        from botocore.config import Config

        for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
            os.environ[name] = value
        self.client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url,
                                   config=Config(retries={"max_attempts": 1}))

    def create(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        converse: list[dict[str, Any]] = []
        for m in messages[1:]:
            if m["role"] == "user":
                converse.append({"role": "user", "content": [{"text": m["content"]}]})
            elif m["role"] == "assistant":
                blocks = [{"text": m["content"]}] if m.get("content") else []
                blocks += [{"toolUse": {"toolUseId": c["id"], "name": c["function"]["name"], "input": json.loads(c["function"]["arguments"])}}
                           for c in m.get("tool_calls") or ()]
                converse.append({"role": "assistant", "content": blocks})
            else:
                failed = m["content"].startswith("Error: ")
                inner = [{"text": m["content"][7:]}] if failed else [{"json": {"result": json.loads(m["content"])}}]
                block = {"toolResult": {"toolUseId": m["tool_call_id"], "content": inner, **({"status": "error"} if failed else {})}}
                if converse and converse[-1]["role"] == "user" and "toolResult" in converse[-1]["content"][0]:
                    converse[-1]["content"].append(block)
                else:
                    converse.append({"role": "user", "content": [block]})
        tools = [{"toolSpec": {"name": t["function"]["name"], "description": t["function"]["description"],
                               "inputSchema": {"json": t["function"]["parameters"]}}} for t in offered()]
        out = self.client.converse(modelId="amazon.nova-micro-v1:0", messages=converse, system=[{"text": messages[0]["content"]}],
                                   toolConfig={"tools": tools}, inferenceConfig={"maxTokens": 512})
        blocks = out["output"]["message"]["content"]
        text = " ".join(b["text"] for b in blocks if "text" in b)
        calls = [{"id": b["toolUse"]["toolUseId"], "type": "function",
                  "function": {"name": b["toolUse"]["name"], "arguments": json.dumps(b["toolUse"]["input"])}} for b in blocks if "toolUse" in b]
        return {"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})}


class Mcp(Recorder):
    """The tools on an in-process MCP server, called through the MCP client; the model through the anthropic SDK."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel
        from mcp.server.mcpserver import MCPServer

        agentotel.instrument(directory=options["store"], service_name=AGENT)
        self.server = MCPServer("papers-server")
        for f in TOOLS.values():
            self.server.tool()(self._plain(f))

    @staticmethod
    def _plain(f: Callable[..., Any]) -> Callable[..., Any]:
        import inspect

        from mcp.server.mcpserver.exceptions import ToolError

        def call(**kwargs: Any) -> str:
            try:
                return json.dumps(f(**kwargs))
            except Exception as exc:  # noqa: BLE001 - the server answers isError with the error's text
                raise ToolError(str(exc)) from exc
        call.__name__, call.__doc__ = f.__name__, f.__doc__
        call.__signature__ = inspect.signature(f).replace(return_annotation=str)  # type: ignore[attr-defined]
        return call

    def run(self, question: str) -> str:
        import agentotel
        import anthropic
        from mcp import Client

        # a generous timeout: two cores shared by several processes (a timed-out good run is not the agent's fault)
        model_client = anthropic.AsyncAnthropic(base_url=self.url, api_key="sk-ant-test", max_retries=0, timeout=120)

        async def main() -> str:
            async with Client(self.server) as client:
                listed = await client.session.list_tools()
                declared = {t.name: t for t in listed.tools}
                with agentotel.run(AGENT, task=question) as run:
                    try:
                        run.output = await loop(client, declared)
                    except Exception:  # noqa: BLE001 - the run records the failure
                        pass
            return run.id

        async def loop(client: Any, declared: dict[str, Any]) -> str:
            messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
            for turn in range(max_turns()):
                tools = [{"name": n, "description": description(n), "input_schema": t.input_schema} for n, t in declared.items()]
                sent = messages
                if Now.fault == "history_dropped" and turn >= 2:
                    sent = messages[:1] + messages[-2:]
                try:
                    message = await model_client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, system=instructions(turn),
                                                                 messages=sent, tools=tools)
                except anthropic.RateLimitError:  # retried once
                    message = await model_client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, system=instructions(turn),
                                                                 messages=sent, tools=tools)
                content = [b.model_dump(exclude_none=True) for b in message.content]
                messages.append({"role": "assistant", "content": content})
                uses = [b for b in content if b["type"] == "tool_use"]
                if not uses:
                    return " ".join(b.get("text", "") for b in content if b["type"] == "text")
                answers = []
                for use in uses:
                    result = await client.session.call_tool(use["name"], use["input"])
                    if result.is_error and "503" in _text(result):
                        result = await client.session.call_tool(use["name"], use["input"])
                    answers.append({"type": "tool_result", "tool_use_id": use["id"], "content": _text(result), "is_error": bool(result.is_error)})
                messages.append({"role": "user", "content": answers})
            return "I could not finish."

        return asyncio.run(main())


def _text(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


class OpenInference(Recorder):
    """OpenInference's openai instrumentation for the model; the app's own OpenInference CHAIN, RETRIEVER, TOOL spans."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import openai
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        from agentotel.store import ParquetSpanExporter

        self.provider = TracerProvider(resource=Resource.create({"service.name": AGENT}))
        self.provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(options["store"])))
        trace.set_tracer_provider(self.provider)
        OpenAIInstrumentor().instrument(tracer_provider=self.provider)
        self.tracer = self.provider.get_tracer("lit-desk-app")
        self.client = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)

    def close(self) -> None:
        self.provider.shutdown()

    def create(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        sent = [{k: v for k, v in m.items() if k != "name"} for m in messages]
        response = self.client.chat.completions.create(model="gpt-4o-mini", messages=sent, tools=offered())
        return response.choices[0].message.model_dump(exclude_none=True)

    def run(self, question: str) -> str:
        from openinference.semconv.trace import DocumentAttributes, OpenInferenceSpanKindValues, SpanAttributes
        from opentelemetry.trace import Status as SpanStatus, StatusCode

        kind = SpanAttributes.OPENINFERENCE_SPAN_KIND

        def on_tool(call_id: str, name: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
            if name == "search_papers":
                attributes = {kind: OpenInferenceSpanKindValues.RETRIEVER.value, SpanAttributes.INPUT_VALUE: arguments.get("query", "")}
            else:
                attributes = {kind: OpenInferenceSpanKindValues.TOOL.value, SpanAttributes.TOOL_NAME: name,
                              SpanAttributes.INPUT_VALUE: json.dumps(arguments)}
            with self.tracer.start_as_current_span(name, attributes=attributes) as span:
                value, failed = run_tool(name, arguments)
                if failed:
                    span.record_exception(RuntimeError(value))
                    span.set_status(SpanStatus(StatusCode.ERROR, value))
                elif name == "search_papers":
                    prefix = SpanAttributes.RETRIEVAL_DOCUMENTS
                    for i, d in enumerate(value):
                        span.set_attribute(f"{prefix}.{i}.{DocumentAttributes.DOCUMENT_ID}", d["id"])
                        span.set_attribute(f"{prefix}.{i}.{DocumentAttributes.DOCUMENT_SCORE}", d["score"])
                        span.set_attribute(f"{prefix}.{i}.{DocumentAttributes.DOCUMENT_CONTENT}", d["content"])
                        span.set_attribute(f"{prefix}.{i}.{DocumentAttributes.DOCUMENT_METADATA}",
                                           json.dumps({k: d[k] for k in ("title", "year", "doi")}))
                else:
                    span.set_attribute(SpanAttributes.OUTPUT_VALUE, json.dumps(value))
                return value, failed

        with self.tracer.start_as_current_span(AGENT, attributes={kind: OpenInferenceSpanKindValues.CHAIN.value,
                                                                  SpanAttributes.INPUT_VALUE: question}) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                root.set_attribute(SpanAttributes.OUTPUT_VALUE, chat_loop(self.create, on_tool, question))
            except Exception as exc:  # noqa: BLE001
                root.record_exception(exc)
                root.set_status(SpanStatus(StatusCode.ERROR))
        return trace_id


RECORDERS: dict[str, type[Recorder]] = {"genai": Genai, "bedrock": Bedrock, "mcp": Mcp, "oi": OpenInference}
HISTORY = (0, 1)  # earlier healthy runs: other topics, ids, scores, years
VARIANT = 2  # the good and the faulty run (3 for ODD): a 503 on cite the loop retries, a null doi, other ids


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    with serve() as url:
        recorder = RECORDERS[options["recorder"]](options, url)
        manifest = []
        for v in HISTORY:
            _start(None, v)
            manifest.append({"fault": None, "role": "history", "run": recorder.run(task(v))})
        for fault in options["faults"]:
            for role, f in (("good", None), ("faulty", fault)):
                _start(f, VARIANT + (1 if options["recorder"] in ODD else 0))
                Now.flaky = options["recorder"] in FLAKY
                manifest.append({"fault": fault, "role": role, "run": recorder.run(task(Now.variant))})
        recorder.close()
    return manifest


ODD = {"bedrock", "oi"}  # these recorders' good and faulty runs take variant 3: four documents, the reads the other way round,
# a first search too long for the index that finds nothing and a shorter one that finds them
FLAKY = {"genai", "mcp"}  # and these meet a 429 on their second model call, which the loop retries


# ---- the pairs; where each fault's cause shows on the recorded faulty run -----------------------------------


def pairs() -> list[Any]:
    from heldout import Pair, answer, asking, last_step, nth_llm, tool_step
    from heldout2 import after_first, context_cut

    def asked_again(steps: list[dict[str, Any]]) -> int | None:
        """The first model call that asked for a call it had asked for before (same tool, same arguments)."""
        from heldout import _asked, _llm

        seen: set[str] = set()
        for s in _llm(steps):
            keys = {json.dumps([n, a], sort_keys=True) for n, a in _asked(s)}
            if keys & seen:
                return s["index"]
            seen |= keys
        return None

    def rewritten(steps: list[dict[str, Any]]) -> int | None:
        """The first model call given a paper's effect size that no read of it returned (the rewrite may come after
        the model saw the true one, or before it ever did)."""
        returned = {(str(v.get("id")), v.get("effect_size")) for s in steps if s["type"] == "tool"
                    for v in [_parsed(s.get("output"))] if isinstance(v, dict) and "effect_size" in v}
        for s in steps:
            if s["type"] != "llm" or s["status"] != "ok":
                continue
            shown = re.findall(r'"id": "(P-\d+)", "sample_size": \d+, "effect_size": ([\d.]+)', json.dumps(s.get("input")).replace('\\"', '"'))
            if any((i, float(d)) not in returned for i, d in shown):
                return s["index"]
        return None

    def rule(recorder: str, layer: str, fault: str, taxonomy: str, where: Callable[..., int | None], **kw: Any) -> Any:
        return Pair(f"{layer}-{recorder}-{fault.replace('_', '-')}", recorder, layer, fault, taxonomy, where, **kw)

    def search(steps: list[dict[str, Any]]) -> int | None:
        """The last search before the answer (a retrieval step, or the search tool's step where the recorder has no
        retrieval kind): the one whose documents the answer went on (an earlier one found nothing and was reworded)."""
        said = answer(steps)
        ran = [s["index"] for s in steps if (s["type"] == "retrieval" or tool_step("search_papers")([s]) is not None)
               and (said is None or s["index"] < said)]
        return ran[-1] if ran else None

    def after_retrieval(steps: list[dict[str, Any]]) -> int | None:
        """The first model call after that search ran: the one that used what it found."""
        ran = search(steps)
        return next((s["index"] for s in steps if s["type"] == "llm" and s["status"] == "ok" and ran is not None and s["index"] > ran), None)

    return [
        # google-genai under agentotel
        rule("genai", "product", "empty_search", "TRAIL Poor information retrieval (nothing found, answered anyway)", answer,
             diff_where=search),
        rule("genai", "model", "made_up_effect", "TRAIL Hallucinated facts (numbers found in no result)", answer),
        rule("genai", "memory", "history_dropped", "MAST FM-1.4 Loss of conversation history", context_cut),
        rule("genai", "tool", "shape_change", "TRAIL API issues (the service's response changed)", tool_step("read_paper")),
        rule("genai", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
        rule("genai", "memory", "history_rewritten", "AgentErrorTaxonomy Memory: a summary that changed the facts", rewritten),
        rule("genai", "tool", "tool_description_changed", "ToolScan Tool documentation error (description offered differs)", nth_llm(0)),
        rule("genai", "tool", "swapped_id", "ToolScan Incorrect argument value (an id no result holds)", asking("read_paper")),
        rule("genai", "workflow", "parallel_dropped", "AgentErrorTaxonomy Action: requested calls left unanswered", after_first("read_paper")),
        rule("genai", "memory", "result_cut", "TRAIL Context handling failures (a result replaced by a placeholder)", after_first("read_paper")),
        # Bedrock converse under agentotel
        rule("bedrock", "prompt", "instructions_changed", "MAST FM-1.1 Disobey task specification (prompt changed mid-run)", nth_llm(2)),
        rule("bedrock", "tool", "read_403", "TRAIL Authentication errors (error ignored)", answer, diff_where=tool_step("read_paper")),
        rule("bedrock", "model", "repeat_search", "MAST FM-1.3 Step repetition", asked_again),
        rule("bedrock", "tool", "limit_as_text", "ToolScan Invalid argument type", asking("search_papers")),
        rule("bedrock", "product", "weak_retrieval", "TRAIL Poor information retrieval (low scores used)", after_retrieval,
             diff_where=search),
        rule("bedrock", "product", "cite_unread", "AgentErrorTaxonomy Planning: required step skipped", asking("cite")),
        rule("bedrock", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
        rule("bedrock", "workflow", "parallel_dropped", "AgentErrorTaxonomy Action: requested calls left unanswered", after_first("read_paper")),
        rule("bedrock", "memory", "result_cut", "TRAIL Context handling failures (a result replaced by a placeholder)", after_first("read_paper")),
        rule("bedrock", "product", "empty_search", "TRAIL Poor information retrieval (nothing found, answered anyway)", answer,
             diff_where=search),
        # MCP tools, the anthropic SDK
        rule("mcp", "tool", "tool_description_changed", "ToolScan Tool documentation error (description offered differs)", nth_llm(0)),
        rule("mcp", "model", "made_up_citation", "TRAIL Hallucinated facts (a citation found nowhere)", answer),
        rule("mcp", "tool", "read_403", "TRAIL Authentication errors (error ignored)", answer, diff_where=tool_step("read_paper")),
        rule("mcp", "memory", "history_dropped", "MAST FM-1.4 Loss of conversation history", context_cut),
        rule("mcp", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
        rule("mcp", "product", "cite_unread", "AgentErrorTaxonomy Planning: required step skipped", asking("cite")),
        rule("mcp", "tool", "swapped_id", "ToolScan Incorrect argument value (an id no result holds)", asking("read_paper")),
        rule("mcp", "model", "repeat_search", "MAST FM-1.3 Step repetition", asked_again),
        rule("mcp", "product", "weak_retrieval", "TRAIL Poor information retrieval (low scores used)", after_retrieval,
             diff_where=search),
        # OpenInference spans (openai instrumentation + the app's RETRIEVER / TOOL / CHAIN spans)
        rule("oi", "product", "weak_retrieval", "TRAIL Poor information retrieval (low scores used)", after_retrieval,
             diff_where=search),
        rule("oi", "product", "empty_search", "TRAIL Poor information retrieval (nothing found, answered anyway)", answer,
             diff_where=search),
        rule("oi", "prompt", "instructions_changed", "MAST FM-1.1 Disobey task specification (prompt changed mid-run)", nth_llm(2)),
        rule("oi", "model", "repeat_search", "MAST FM-1.3 Step repetition", asked_again),
        rule("oi", "model", "made_up_effect", "TRAIL Hallucinated facts (numbers found in no result)", answer),
        rule("oi", "memory", "history_rewritten", "AgentErrorTaxonomy Memory: a summary that changed the facts", rewritten),
        rule("oi", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
        rule("oi", "tool", "tool_description_changed", "ToolScan Tool documentation error (description offered differs)", nth_llm(0)),
        rule("oi", "tool", "swapped_id", "ToolScan Incorrect argument value (an id no result holds)", asking("read_paper")),
    ]


POLICY = {"min_retrieval_score": 0.3, "required_before": {"cite": ["read_paper"]}}


def record(root: Path, chosen: list[Any]) -> dict[str, list[kit.Recorded]]:
    return kit.record(Path(__file__), root, chosen)


def score(root: Path, recorded: dict[str, list[kit.Recorded]]) -> list[Any]:
    return kit.score(root, recorded, lambda name: POLICY)


if __name__ == "__main__":
    if not kit.produce_main(produce):
        kit.main(Path(__file__), "heldout3-", pairs(), sys.argv[1:], policy=lambda name: POLICY)
