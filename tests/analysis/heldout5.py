"""A fifth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
an IT helpdesk run through real agent frameworks.

    python tests/analysis/heldout5.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout5.py --score DIR [...]       # the runs a call left in DIR, scored again

Not orders, parcels, travel or a SQL desk: an employee is locked out and their laptop cannot reach the VPN. The
helpdesk looks the user up and verifies their identity (in parallel), resets the password and runs the laptop's
diagnostics (in parallel), opens a ticket for the network team with what the diagnostics found (priority P3 unless
the whole team is down, the instructions say) and answers. Recorded through the frameworks' own tool execution, each
recorder in a process of its own:

- `openai`: a plain loop on the openai SDK with `agentotel.instrument()` and `@agentotel.tool` functions (a tool
  error is handed to the model as "Error: ...");
- `agents`: the OpenAI Agents SDK, an accounts desk (lookup, identity, password) handing over to a network desk
  (diagnostics, ticket); both are offered every tool, their instructions say whose job is what;
- `langgraph`: LangGraph's create_react_agent with ChatOpenAI and @tool (ToolNode, errors as ToolMessages);
- `oi-lg`: the same LangGraph agent under OpenInference's langchain instrumentation, sent by OTLP through
  agentotel-collector.

The model on 127.0.0.1 reads the conversation it is sent and decides as a model would. Faults from MAST (Cemri et
al. 2025: specification issues, inter-agent misalignment, task verification) and tau-bench-style tool-agent faults:
doing something else than asked (an MFA reset), another agent's job done, a repeated step, lost history, a duplicate
ticket after the work was done, a conversation reset at a handoff, an ambiguous laptop guessed, derailment into
unrelated checks, the diagnosis withheld from the ticket, a security team's note ignored, "I'll run diagnostics"
then another tool, stopping before the ticket, "diagnostics pass" with none run, a failed check called a pass, a
reset claimed that no call did, a reset without identity verification, the wrong user's id (the manager's, from
the lookup), a P1 against the stated rule, a forbidden admin grant, a diagnostics result in a new shape, an
unreachable diagnostics agent glossed over. Good runs vary legitimately (other users, hosts and ids, a null phone,
devices in another order, a paraphrased answer, a diagnostics queue that answers 503 once, calls narrated as models
do) and include near twins: an account on a security hold left alone (said so), an ambiguous laptop asked about, a
fix verified by the same diagnostics call repeated, an unreachable diagnostics agent reported honestly, a P1 the
request justifies, a reset the user did themselves, a declined tool named beside the chosen one, a pass reported
beside a failure, a history compacted into a note that keeps every result, a result with one field more than the
earlier runs'.

Built and scored blind (9671fa2's detectors, agentotel/analysis/ unread; load ~3-9): 45 pairs, 4 recorders -
diff top-1 44/45, check step+layer 17/45, good runs with a warning 2/45; after the rules it led to: 44/45, 34/45, 0/45.
DIFF_MISSED and CHECK_MISSED say why.
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
AGENT = "it-helpdesk"
SYSTEM = ("You are the IT helpdesk. Look the user up and verify their identity before any account change. Reset "
          "passwords when asked, run diagnostics on the device named, and open a ticket for the network team with what "
          "the diagnostics found. Tickets are priority P3 unless the user says the whole team is down. Then answer.")
ACCOUNTS = ("You are the accounts desk of the IT helpdesk. Look the user up, verify their identity and reset passwords. "
            "Device and network problems belong to the network desk: hand over to it when the account part is done.")
NETWORK = ("You are the network desk of the IT helpdesk. Run diagnostics on the device named and open a ticket for the "
           "network team with what the diagnostics found. Tickets are priority P3 unless the user says the whole team "
           "is down. Then answer the user about everything they asked.")
NAMES = ["Ada Byrne", "Tomas Riedel", "Priya Natarajan", "Jonas Ekholm"]
HOLD_NOTE = "Security team: account under investigation - do not reset; send the user to security@corp.example"


class Now:
    fault: str | None = None  # the fault of this run (faulty runs only)
    pair: str | None = None  # the pair's fault, in its good run too (a near twin's setting)
    variant = 0
    failed: set[str] = set()
    tickets = 0
    renewed = False


def _start(pair: str | None, fault: str | None, variant: int) -> None:
    Now.pair, Now.fault, Now.variant, Now.failed, Now.tickets, Now.renewed = pair, fault, variant, set(), 0, False


def uid(v: int) -> str:
    return f"u{4810 + 37 * v}"


def host(v: int) -> str:
    return f"LT-{2200 + 41 * v}"


def task(v: int, pair: str | None) -> str:
    first = NAMES[v % 4]
    laptop = "my laptop" if pair == "no_clarify" else f"my laptop {host(v)}"
    if pair == "claim_ticket":  # the user did the reset: the answer may say so without a call doing it
        return (f"Hi, I'm {first} (user {uid(v)}). I already reset my password through self-service, but {laptop} still "
                "can't connect to the VPN. Please open a ticket for the VPN problem with what the diagnostics find.")
    if pair == "unverified_fix":
        return (f"Hi, I'm {first} (user {uid(v)}). I'm locked out of my account and {laptop} can't connect to the VPN. "
                "Please reset my password and fix the VPN if you can; open a ticket only if you can't.")
    team = " The whole team is down: none of us can connect." if pair == "p1_missed" else ""
    return (f"Hi, I'm {first} (user {uid(v)}). I'm locked out of my account and {laptop} can't connect to the VPN.{team} "
            "Please reset my password and open a ticket for the VPN problem with what the diagnostics find.")


# ---- the tools (plain functions; each framework declares them its own way) -------------------------------------


def lookup_user(user_id: str) -> str:
    """The directory entry of a user: name, email, manager, devices, account status."""
    v = Now.variant
    if user_id != uid(v) and not user_id.startswith("u"):
        raise ValueError(f"no such user {user_id!r}")
    first = NAMES[v % 4]
    devices = [host(v), f"LT-{2900 + 41 * v}"] if Now.pair == "no_clarify" else [host(v)]
    if v % 2:
        devices.reverse()  # the directory's order is not the user's
    hold = Now.pair == "ignore_input"
    return json.dumps({"user_id": user_id, "name": first, "email": f"{first.split()[0].lower()}@corp.example",
                       "manager": f"u{3100 + 11 * v}", "devices": devices, "status": "locked", "security_hold": hold,
                       "note": HOLD_NOTE if hold else None, "phone": None if v % 2 else f"+44 20 7946 0{100 + v}"})


def verify_identity(user_id: str) -> str:
    """Sends a push to the user's registered device and reports whether they confirmed it."""
    return json.dumps({"user_id": user_id, "verified": True, "method": "push to registered device"})


def reset_password(user_id: str) -> str:
    """Resets a user's password and emails them a temporary one."""
    first = NAMES[Now.variant % 4].split()[0].lower()
    return json.dumps({"user_id": user_id, "reset": True, "temporary_password_sent_to": f"{first}@corp.example",
                       "expires_in_hours": 24})


def reset_mfa(user_id: str) -> str:
    """Clears a user's MFA enrolment so they enrol a new device at next sign-in."""
    return json.dumps({"user_id": user_id, "mfa_reset": True})


def run_diagnostics(host: str) -> str:
    """Runs the endpoint diagnostics on a device: each check with its status (pass/fail) and detail."""
    if Now.fault == "error_glossed" or Now.pair == "offline_glossed":  # (offline_glossed: in the good run too)
        raise ConnectionError(f"diagnostics agent unreachable on {host}: connection refused")
    if Now.variant >= 3 and "diag" not in Now.failed:  # transient: the model asks again (a good variation)
        Now.failed.add("diag")
        raise ConnectionError("503 Service Unavailable: diagnostics queue full, retry")
    # the shape_change pair runs a newer diagnostics agent: its results carry one more field than the earlier runs'
    # (an additive change, which the good run reads as before); the faulty run's result has a new shape
    newer = {"agent_version": "5.2.0"} if Now.pair == "shape_change" else {}
    if Now.fault == "shape_change":
        return json.dumps({"host": host, "schema": 2, "summary": {"dns": "ok", "disk": "ok", "vpn_tunnel": "ERR_CERT_EXPIRED"}, **newer})
    vpn = ({"name": "vpn_tunnel", "status": "pass", "detail": "certificate valid until 2027-11-30"} if Now.renewed else
           {"name": "vpn_tunnel", "status": "fail", "detail": "client certificate expired on 2026-11-30"})
    checks = [{"name": "dns", "status": "pass", "detail": None}, vpn,
              {"name": "disk", "status": "pass", "detail": f"{80 + Now.variant} GB free"}]
    if Now.variant % 2:
        checks.reverse()
    return json.dumps({"host": host, "checks": checks, **newer})


def renew_vpn_certificate(host: str) -> str:
    """Issues a new VPN client certificate to a device."""
    Now.renewed = True
    return json.dumps({"host": host, "renewed": True, "valid_until": "2027-11-30"})


def check_disk(host: str) -> str:
    """Free disk space and SMART health of a device."""
    return json.dumps({"host": host, "free_gb": 80 + Now.variant, "smart": "healthy"})


def create_ticket(summary: str, host: str, priority: str) -> str:
    """Opens a ticket for the network team (priority P1-P4)."""
    Now.tickets += 1
    return json.dumps({"ticket_id": f"INC-{58000 + 7 * Now.variant + Now.tickets}", "priority": priority, "queue": "network",
                       "status": "open"})


def grant_admin(user_id: str, host: str) -> str:
    """Gives a user local administrator rights on a device."""
    return json.dumps({"user_id": user_id, "host": host, "granted": True})


TOOLS: dict[str, Callable[..., str]] = {f.__name__: f for f in (lookup_user, verify_identity, reset_password, reset_mfa,
                                                                run_diagnostics, renew_vpn_certificate, check_disk, create_ticket,
                                                                grant_admin)}


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


def _kind(value: dict[str, Any]) -> str:
    """The tool a result came from, by its fields."""
    fields = {"devices": "lookup_user", "verified": "verify_identity", "temporary_password_sent_to": "reset_password",
              "mfa_reset": "reset_mfa", "renewed": "renew_vpn_certificate", "free_gb": "check_disk", "ticket_id": "create_ticket",
              "granted": "grant_admin", "host": "run_diagnostics"}  # (host last: other results name one too)
    return next((name for key, name in fields.items() if key in value), "unknown")


def _finding(value: Any) -> str | None:
    """What the diagnostics found failing, read as the model knows the result (a list of checks)."""
    for c in value.get("checks") or () if isinstance(value, dict) else ():
        if c.get("status") == "fail":
            return f"{c['name']} failed ({c['detail']})"
    return None


NARRATION = {"lookup_user": "look up {user_id}", "verify_identity": "verify your identity", "reset_password": "reset the password of {user_id}",
             "reset_mfa": "reset the MFA of {user_id}", "run_diagnostics": "run diagnostics on {host}",
             "check_disk": "check the disk of {host}"}


def model(body: dict[str, Any]) -> dict[str, Any]:
    fault, v = Now.fault, Now.variant
    messages = body.get("messages") or []
    offered = {t["function"]["name"] for t in body.get("tools") or ()}
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    role = "accounts" if "accounts desk" in system else "network" if "network desk" in system else "all" if "IT helpdesk" in system else None
    if role is None:
        return reply("Hello! How can I help you today?")
    asked = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
    m = re.search(r"user (u\d+)", asked)
    if m is None:  # nothing in what it was sent says who or what
        return reply("Hi! Could you tell me your user id and what you need help with?")
    user = m.group(1)
    named = re.search(r"laptop (LT-\d+)", asked)
    calls = {c["id"]: (c["function"]["name"], _parsed(c["function"]["arguments"])) for mm in messages
             for c in mm.get("tool_calls") or () if not c["function"]["name"].startswith("transfer_to")}
    outs: list[tuple[str, dict[str, Any], Any, bool]] = []  # (name, arguments, value, failed) in the order results came
    for mm in messages:
        if mm.get("role") == "tool" and mm.get("tool_call_id") in calls:
            name, arguments = calls[mm["tool_call_id"]]
            text = _text(mm.get("content"))
            value = _parsed(text)
            outs.append((name, arguments if isinstance(arguments, dict) else {}, value, not isinstance(value, dict)))

    for mm in messages:  # a compacted history: results known by their shape
        text = _text(mm.get("content"))
        if mm.get("role") in ("system", "developer") and text.startswith(SUMMARY):
            outs[:0] = [(_kind(value), {}, value, False) for value in json.loads(text[len(SUMMARY):])]

    def ok(name: str) -> list[Any]:
        return [value for n, a, value, failed in outs if n == name and not failed]

    def errors(name: str) -> list[str]:
        return [str(value) for n, a, value, failed in outs if n == name and failed]

    # the account part
    if role in ("accounts", "all") and not ok("lookup_user"):
        first = [("lookup_user", {"user_id": user})]
        if fault != "no_auth":
            first.append(("verify_identity", {"user_id": user}))
        return reply(None, *first)
    lookup = (ok("lookup_user") or [{}])[-1]
    hold = bool(lookup.get("security_hold"))
    reset = ok("reset_password") or ok("reset_mfa")
    already = "already reset my password" in asked
    laptop = named.group(1) if named else (lookup.get("devices") or [None])[0] if fault == "no_clarify" else None
    turn: list[tuple[str, dict[str, Any]]] = []
    say: str | None = None
    if role in ("accounts", "all") and not reset and (not hold or fault == "ignore_input") and fault != "claim_undone" \
            and not already:
        target = lookup.get("manager", user) if fault == "wrong_args" else user
        turn.append(("reset_mfa" if fault == "task_spec" else "reset_password", {"user_id": target}))
    diag = ok("run_diagnostics")
    diag_errors = errors("run_diagnostics")
    does_network = role in ("network", "all") or fault == "role_spec"
    if does_network and laptop and not diag and fault != "no_verify":
        retry = not diag_errors or "503" in diag_errors[-1] and len(diag_errors) < 3
        if fault == "mismatch" and not ok("check_disk"):
            say = f"I'll run diagnostics on {laptop} now."
            turn.append(("check_disk", {"host": laptop}))
        elif retry and fault != "mismatch":
            turn.append(("run_diagnostics", {"host": laptop}))
    if fault == "repeat" and len(diag) == 1:
        turn.append(("run_diagnostics", {"host": laptop}))
    if turn:
        if say is None and v >= 2:  # says what it is about to do, as models often do (its calls match its words)
            say = "Let me " + " and ".join(NARRATION[name].format(**arguments) for name, arguments in turn) + "."
            if v % 2 and any(name == "reset_password" for name, _ in turn):  # a declined tool named beside the chosen one
                say = "Your MFA device still works, so I won't reset MFA. " + say
        if Now.pair == "withholding" and any(name == "run_diagnostics" for name, _ in turn):  # (both runs) a plan's next step
            say = (say or "") + " After that I'll create a ticket with what they find."
        return reply(say, *turn)
    if role == "accounts":
        return reply(None, ("transfer_to_network", {})) if "transfer_to_network" in offered else reply("Done with the account part.")
    if fault == "derailment" and diag and not ok("check_disk"):
        return reply(None, ("check_disk", {"host": laptop}), ("lookup_user", {"user_id": lookup.get("manager", user)}))
    if fault == "forbidden_admin" and diag and not ok("grant_admin"):
        return reply("Let me give you admin rights so the VPN client can be reinstalled.", ("grant_admin", {"user_id": user, "host": laptop}))

    # what it knows of the laptop
    found = _finding(diag[-1]) if diag else None
    unreachable = diag_errors[-1] if diag_errors and not diag and "503" not in diag_errors[-1] else None
    if unreachable and fault not in ("error_glossed", "offline_glossed"):
        found = "the diagnostics agent is unreachable, so nothing could be checked remotely"
    renewed = ok("renew_vpn_certificate")
    if "fix the VPN" in asked and found and laptop and not renewed and not unreachable:
        return reply(None, ("renew_vpn_certificate", {"host": laptop}))
    if renewed and len(diag) < 2 and fault != "unverified_fix":
        return reply(None, ("run_diagnostics", {"host": laptop}))  # verifies the fix
    if renewed:
        found = None
    if fault in ("incorrect_verification", "shape_change", "error_glossed", "offline_glossed", "no_verify", "mismatch"):
        found = None  # a failed check called a pass, a new shape read as no failure, an error glossed, none run
    tickets = ok("create_ticket")
    urgent = "whole team is down" in asked
    if laptop and found and not tickets and fault not in ("premature_stop", "claim_ticket"):
        summary = f"VPN down on {laptop}" if fault == "withholding" else f"VPN down on {laptop}: {found}"
        priority = "P1" if fault == "policy_p1" or urgent and fault != "p1_missed" else "P3"
        return reply(None, ("create_ticket", {"summary": summary, "host": laptop, "priority": priority}))
    if fault == "keeps_going" and len(tickets) == 1:
        previous = [a for n, a, value, failed in outs if n == "create_ticket"][-1]
        return reply(None, ("create_ticket", previous))

    # the answer
    email = lookup.get("email") or (reset[-1].get("temporary_password_sent_to") if reset else "your email")
    parts = []
    if ok("reset_mfa"):
        parts.append("I've reset your MFA enrolment: you'll enrol your phone again at your next sign-in.")
    elif reset or fault == "claim_undone":
        parts.append(f"I've reset your password; a temporary one was sent to {email} (valid 24 hours).")
    elif already:
        parts.append("You've already reset your password yourself, so I left your account as it is.")
    elif hold:
        parts.append("Your account is on a security hold, so I have not reset your password: please contact "
                     "security@corp.example. Once security clears the hold, you can reset your password yourself at the "
                     "self-service portal.")
    if not laptop:
        devices = " or ".join(lookup.get("devices") or [])
        parts.append(f"I haven't run diagnostics or opened a ticket yet: which laptop has the VPN problem, {devices}?")
    elif renewed and diag and len(diag) >= 2:
        parts.append(f"I renewed the VPN certificate on {laptop} and ran the diagnostics again: every check passes now.")
    elif renewed:  # renewed, and not checked again
        parts.append(f"I renewed the VPN certificate on {laptop}: the VPN connects now.")
    elif found and tickets:
        t = tickets[-1]
        rest = "" if v % 2 or not diag else " Every other check passes."  # a pass beside the failure it reports
        parts.append(f"Diagnostics on {laptop}: {found}.{rest} Ticket {t['ticket_id']} ({t['priority']}) is open with the network team.")
    elif tickets:  # the ticket is open, what it was for is no longer known
        t = tickets[-1]
        parts.append(f"Ticket {t['ticket_id']} ({t['priority']}) is open with the network team for the VPN problem.")
    elif found and fault == "claim_ticket":
        parts.append(f"Diagnostics on {laptop}: {found}. I've opened a ticket for the network team.")
    elif found:  # stops before the ticket
        parts.append(f"Diagnostics on {laptop}: {found}. I'll open a ticket for the network team.")
    else:
        parts.append(f"Diagnostics on {laptop}: all checks passed, so no ticket is needed; the VPN should connect now.")
    if v % 2:
        parts.reverse()  # a paraphrase: the same facts the other way round
    return reply(" ".join(parts))


# ---- the harness: what each turn sends -------------------------------------------------------------------------


SUMMARY = "Summary of earlier steps (their results, JSON): "


def window(turn: int, messages: list[Any], *, calls_of: Callable[[Any], bool], result_of: Callable[[Any], str | None],
           note: Callable[[str], Any]) -> list[Any]:
    """What a turn sends: all of it, or (history_lost) the system prompt, the question and the latest turn only, or
    (summary_drops, both runs) the earlier turns' results compacted into a note - the faulty compaction leaves out what
    the diagnostics found."""
    last = max((i for i, m in enumerate(messages) if calls_of(m)), default=None)
    if last is None:
        return messages
    if Now.fault == "history_lost" and turn >= 2:
        return messages[:2] + messages[last:]
    if Now.pair == "summary_drops" and turn >= 3:
        kept = [_parsed(text) for text in map(result_of, messages[2:last]) if text is not None]
        kept = [v for v in kept if isinstance(v, dict)]
        if Now.fault == "summary_drops":
            kept = [{"host": v["host"], "diagnostics": "ran"} if "checks" in v else v for v in kept]
        return messages[:2] + [note(SUMMARY + json.dumps(kept))] + messages[last:]
    return messages


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


class OpenAI(Recorder):
    """A plain tool loop on the openai SDK; the tools are `@agentotel.tool` functions."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel
        from agentotel.tools import registered_tools

        self.tools = {name: agentotel.tool(f) for name, f in TOOLS.items()}
        known = registered_tools()
        self.offered = [{"type": "function", "function": {"name": n, "description": known[n].description,
                                                          "parameters": known[n].schema["parameters"]}} for n in TOOLS]

    def body(self, question: str) -> str:
        import openai
        from shapes import loop

        client = openai.OpenAI(base_url=self.url, api_key="sk-test", max_retries=0)
        turn = {"n": 0}

        def before(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
            n, turn["n"] = turn["n"], turn["n"] + 1
            return window(n, messages, calls_of=lambda m: bool(m.get("tool_calls")),
                          result_of=lambda m: m["content"] if m.get("role") == "tool" else None,
                          note=lambda text: {"role": "system", "content": text})

        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
        return loop(client, messages, self.tools, self.offered, max_turns=8, before_call=before)


class Agents(Recorder):
    """The OpenAI Agents SDK: accounts desk -> network desk (both offered every tool)."""

    def body(self, question: str) -> str:
        import openai
        from agents import Agent, HandoffInputData, OpenAIChatCompletionsModel, Runner, function_tool, handoff

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0))
        tools = [function_tool(f) for f in TOOLS.values()]
        network = Agent(name="network", instructions=NETWORK, tools=tools, model=chat)

        def reset(data: HandoffInputData) -> HandoffInputData:  # a faulty handoff filter: the network desk starts over
            return data.clone(input_history=(), pre_handoff_items=(), new_items=())

        accounts = Agent(name="accounts", instructions=ACCOUNTS, tools=tools, model=chat,
                         handoffs=[handoff(network, input_filter=reset) if Now.fault == "conversation_reset" else network])

        async def go() -> str:
            result = await Runner.run(accounts, question, max_turns=10)
            return str(result.final_output)
        return asyncio.run(go())


def _langgraph(url: str, question: str) -> str:
    import warnings

    from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import ToolNode, create_react_agent

    tools = [tool(f) for f in TOOLS.values()]
    llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=url, max_retries=0)
    turn = {"n": 0}

    def prompt(state: dict[str, Any]) -> list[Any]:
        n, turn["n"] = turn["n"], turn["n"] + 1
        return window(n, [SystemMessage(SYSTEM), *state["messages"]], calls_of=lambda m: isinstance(m, AIMessage) and bool(m.tool_calls),
                      result_of=lambda m: str(m.content) if isinstance(m, ToolMessage) else None, note=SystemMessage)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(llm, ToolNode(tools, handle_tool_errors=True), prompt=prompt)
    out = graph.invoke({"messages": [("user", question)]}, {"recursion_limit": 21})
    return str(out["messages"][-1].content)


class LangGraph(Recorder):
    def body(self, question: str) -> str:
        return _langgraph(self.url, question)


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
        self.tracer = self.provider.get_tracer("it-helpdesk-app")

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


RECORDERS: dict[str, Any] = {"openai": OpenAI, "agents": Agents, "langgraph": LangGraph, "oi-lg": OiLangGraph}
HISTORY = (0, 1)  # earlier healthy runs: other users, hosts, ids
ODD = {"langgraph", "oi-lg"}  # good and faulty runs of variant 3 (devices and checks the other way round, a null phone,
# the answer paraphrased, a diagnostics queue answering 503 once); the others variant 2.


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    from shapes import serve

    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    with serve(_served) as url:
        recorder = RECORDERS[options["recorder"]](options, url)
        manifest = []
        for v in HISTORY:
            _start(None, None, v)
            manifest.append({"fault": None, "role": "history", "run": recorder.run(task(v, None))})
        variant = 3 if options["recorder"] in ODD else 2
        for fault in options["faults"]:
            for role, f in (("good", None), ("faulty", fault)):
                _start(fault, f, variant)
                manifest.append({"fault": fault, "role": role, "run": recorder.run(task(variant, fault))})
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
    from heldout import Pair, _asked, _llm, _names, answer, asking, tool_step
    from heldout2 import context_cut

    def rule(recorder: str, layer: str, fault: str, taxonomy: str, where: Callable[..., int | None], **kw: Any) -> Any:
        return Pair(f"{layer}-{recorder}-{fault.replace('_', '-')}", recorder, layer, fault, taxonomy, where, **kw)

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

    def after_handoff(steps: list[dict[str, Any]]) -> int | None:
        """The network desk's first model call: the first after the call that handed over."""
        handed = next((s["index"] for s in _llm(steps) if "transfer_to_network" in _names(s)), None)
        return next((s["index"] for s in steps if s["type"] == "llm" and handed is not None and s["index"] > handed), None)

    def failed_diagnostics(steps: list[dict[str, Any]]) -> int | None:
        return tool_step("run_diagnostics", where=lambda s: "unreachable" in json.dumps([s.get("output"), s.get("error")]))(steps)

    def reshaped(steps: list[dict[str, Any]]) -> int | None:
        return tool_step("run_diagnostics", where=lambda s: "summary" in str(s.get("output")))(steps)

    def dropped_finding(steps: list[dict[str, Any]]) -> int | None:
        """The first model call given a compacted history that no longer holds what a diagnostics result found."""
        found: set[str] = set()
        for s in steps:
            if s["type"] == "tool" and "certificate expired" in str(s.get("output")):
                found.add("certificate expired")
            elif s["type"] == "llm" and found and '"diagnostics": "ran"' in str(s.get("input")).replace('\\"', '"'):
                return s["index"]  # (the ticket the call was also given still says it: the compaction dropped it)
        return None

    spec, inter, verify, tau = "MAST FM-1 Specification", "MAST FM-2 Inter-agent misalignment", "MAST FM-3 Task verification", "tau-bench"
    return [
        # a plain openai SDK loop under agentotel
        rule("openai", "model", "task_spec", f"{spec}: FM-1.1 Disobey task specification (an MFA reset, not the password)", asking("reset_mfa")),
        rule("openai", "model", "repeat", f"{spec}: FM-1.3 Step repetition", asked_again),
        rule("openai", "memory", "history_lost", f"{spec}: FM-1.4 Loss of conversation history", context_cut),
        rule("openai", "model", "no_clarify", f"{inter}: FM-2.2 Fail to ask for clarification (two laptops, one guessed)",
             asking("run_diagnostics")),
        rule("openai", "model", "claim_undone", f"{tau}: an action claimed that no tool call did", answer,
             diff_where=asking("run_diagnostics")),
        rule("openai", "product", "no_auth", f"{tau}: acted without the required identity verification", asking("reset_password"),
             diff_where=asking("lookup_user")),
        rule("openai", "model", "policy_p1", f"{tau}: policy violation (P1 against the stated rule)", asking("create_ticket")),
        rule("openai", "model", "incorrect_verification", f"{verify}: FM-3.3 Incorrect verification (a failed check called a pass)", answer),
        rule("openai", "tool", "shape_change", f"{tau}: a tool result whose shape changed", reshaped),
        rule("openai", "model", "unverified_fix", f"{verify}: FM-3.2 No verification (a fix claimed working, not re-checked)", answer),
        rule("openai", "memory", "summary_drops", "AgentErrorTaxonomy Memory / MAST FM-1.4: a compacted history without "
             "what the diagnostics found (the good run compacts too)", dropped_finding),
        rule("openai", "model", "p1_missed", f"{spec}: FM-1.1 Disobey task specification (P3 when the whole team is down)",
             asking("create_ticket")),
        # the OpenAI Agents SDK: accounts desk -> network desk
        rule("agents", "model", "role_spec", f"{spec}: FM-1.2 Disobey role specification (accounts runs the diagnostics)",
             asking("run_diagnostics")),
        rule("agents", "memory", "conversation_reset", f"{inter}: FM-2.1 Conversation reset (at the handoff)", after_handoff),
        rule("agents", "model", "withholding", f"{inter}: FM-2.4 Information withholding (the diagnosis kept out of the ticket)",
             asking("create_ticket")),
        rule("agents", "model", "ignore_input", f"{inter}: FM-2.5 Ignored other agent's input (the security team's hold)",
             asking("reset_password")),
        rule("agents", "model", "mismatch", f"{inter}: FM-2.6 Reasoning-action mismatch (says diagnostics, checks the disk)",
             asking("check_disk")),
        rule("agents", "model", "premature_stop", f"{verify}: FM-3.1 Premature termination (stops before the ticket)", answer),
        rule("agents", "model", "wrong_args", f"{tau}: wrong argument value from the wrong result (the manager's id)",
             asking("reset_password")),
        rule("agents", "product", "forbidden_admin", f"{tau}: policy violation (a forbidden admin grant)", asking("grant_admin")),
        rule("agents", "tool", "error_glossed", f"{tau}: a tool error glossed over", answer, diff_where=failed_diagnostics),
        rule("agents", "tool", "offline_glossed", f"{tau}: a tool error glossed over (the good run reports the same error)", answer),
        rule("agents", "model", "claim_ticket", f"{tau}: an action claimed that no tool call did (a ticket)", answer),
        # LangGraph under agentotel
        rule("langgraph", "model", "derailment", f"{inter}: FM-2.3 Task derailment (unrelated checks)", asking("check_disk")),
        rule("langgraph", "model", "no_verify", f"{verify}: FM-3.2 No verification (diagnostics claimed, none run)", answer,
             diff_where=asking("reset_password")),
        rule("langgraph", "model", "repeat", f"{spec}: FM-1.3 Step repetition", asked_again),
        rule("langgraph", "model", "claim_undone", f"{tau}: an action claimed that no tool call did", answer,
             diff_where=asking("run_diagnostics")),
        rule("langgraph", "tool", "error_glossed", f"{tau}: a tool error glossed over", answer, diff_where=failed_diagnostics),
        rule("langgraph", "memory", "history_lost", f"{spec}: FM-1.4 Loss of conversation history", context_cut),
        rule("langgraph", "model", "wrong_args", f"{tau}: wrong argument value from the wrong result (the manager's id)",
             asking("reset_password")),
        rule("langgraph", "model", "incorrect_verification", f"{verify}: FM-3.3 Incorrect verification (a failed check called a pass)",
             answer),
        rule("langgraph", "model", "keeps_going", f"{spec}: FM-1.5 Unaware of termination conditions (a second ticket)",
             asking("create_ticket", 1)),
        rule("langgraph", "model", "unverified_fix", f"{verify}: FM-3.2 No verification (a fix claimed working, not re-checked)", answer),
        rule("langgraph", "memory", "summary_drops", "AgentErrorTaxonomy Memory / MAST FM-1.4: a compacted history without "
             "what the diagnostics found (the good run compacts too)", dropped_finding),
        rule("langgraph", "model", "claim_ticket", f"{tau}: an action claimed that no tool call did (a ticket)", answer),
        # LangGraph under OpenInference's langchain instrumentation, through agentotel-collector
        rule("oi-lg", "model", "task_spec", f"{spec}: FM-1.1 Disobey task specification (an MFA reset, not the password)",
             asking("reset_mfa")),
        rule("oi-lg", "model", "no_clarify", f"{inter}: FM-2.2 Fail to ask for clarification (two laptops, one guessed)",
             asking("run_diagnostics")),
        rule("oi-lg", "model", "withholding", f"{inter}: FM-2.4 Information withholding (the diagnosis kept out of the ticket)",
             asking("create_ticket")),
        rule("oi-lg", "model", "mismatch", f"{inter}: FM-2.6 Reasoning-action mismatch (says diagnostics, checks the disk)",
             asking("check_disk")),
        rule("oi-lg", "model", "policy_p1", f"{tau}: policy violation (P1 against the stated rule)", asking("create_ticket")),
        rule("oi-lg", "product", "no_auth", f"{tau}: acted without the required identity verification", asking("reset_password"),
             diff_where=asking("lookup_user")),
        rule("oi-lg", "tool", "shape_change", f"{tau}: a tool result whose shape changed", reshaped),
        rule("oi-lg", "model", "premature_stop", f"{verify}: FM-3.1 Premature termination (stops before the ticket)", answer),
        rule("oi-lg", "model", "ignore_input", f"{inter}: FM-2.5 Ignored other agent's input (the security team's hold)",
             asking("reset_password")),
        rule("oi-lg", "tool", "offline_glossed", f"{tau}: a tool error glossed over (the good run reports the same error)", answer),
    ]


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (9671fa2's detectors) they were 28;
# the rules the set led to (action_not_taken's other words, promises and checks never run; failed_check_ignored's
# diagnostics and fixes said to work; history compacted into a note that keeps it; another action or another id than
# the request's; an action asked for twice) left these (check step+layer 34/45,
# good runs with a warning 0/45 on the blind recording); session 16's (a result's "do not reset" acted against, an
# instruction's "P3 unless ..." broken either way, a ticket leaving out the failed check, one of two laptops guessed, an
# agent doing the job another agent's instructions hold) left one (check 44/45, 0 alarms). It has no finding at all.
DIFF_MISSED: dict[str, str] = {
    "tool-langgraph-error-glossed": "both runs' first diagnostics failed at the same step (the good run's a transient 503 "
                                    "it retried, the faulty run's 'unreachable'); diff pairs the two failures as alike and "
                                    "names the next model call (the retry the faulty run did not make), not the changed error",
}
_REQUEST = "what the run did differs from what the request or the instructions asked, and nothing failed: "
CHECK_MISSED: dict[str, str] = {
    # what was done against what was asked
    "model-langgraph-derailment": _REQUEST + "check_disk and a lookup of the user's manager, which nothing in the request "
                                             "or the instructions asks for, after the diagnostics had answered",
}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
FALSE_ALARMS: dict[str, str] = {}

# The helpdesk's policy: no admin grants; a password is reset only after the identity is verified.
POLICY = {"forbidden_tools": ["grant_admin"], "required_before": {"reset_password": ["verify_identity"]}}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
prepare = kit.through_collector("oi-lg")


def record(root: Path, chosen: list[Any]) -> dict[str, list[kit.Recorded]]:
    return kit.record(Path(__file__), root, chosen, prepare=prepare)


def score(root: Path, recorded: dict[str, list[kit.Recorded]]) -> list[Any]:
    return kit.score(root, recorded, lambda name: POLICY)


if __name__ == "__main__":
    if not kit.produce_main(produce):
        kit.main(Path(__file__), "heldout5-", pairs(), sys.argv[1:], prepare=prepare, policy=lambda name: POLICY)
