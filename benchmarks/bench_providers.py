"""LLM client instrumentation overhead (openai chat completions on a mocked transport)

Per-call time added by instrumentation to `client.chat.completions.create`, content capture on, for a
plain call and a 30-chunk stream, on the same `httpx2.MockTransport` (no network, no server): agentotel,
a hand-written span with the same attributes (the floor a generic wrapper can aim at: every attribute
agentotel records on these calls, same values, messages JSON-encoded in the GenAI shape; without the
content policy's redaction and bounds), and the peers that install and run with openai 3.x. Every
configuration runs in its own process (the peers patch globally); inside it, uninstrumented and
instrumented batches alternate (the instrumentation switched on and off between them), and the
overhead is the median difference of back-to-back batches, then the median over rounds that rotate the
configurations' order. The hand-written span is timed inside agentotel's process, its batches
interleaved with agentotel's and the baseline's, so the ratio against it compares batches taken moments
apart. Times are CPU seconds of the measuring process (on a shared machine wall time mostly measures
the other processes), with the garbage collector's view of the long-lived objects frozen after warm-up.
Spans go through a SimpleSpanProcessor to an exporter that drops them, for every configuration.

Peers: `opentelemetry-instrumentation-openai-v2` (installed) imports `httpx`, which openai 3.x no
longer ships (it uses `httpx2`), and needs `opentelemetry-util-genai` 1.1b0 (the installed 1.3b0 lacks
`opentelemetry.util.genai.instruments`). It runs when `AGENTOTEL_BENCH_PEER_PATH` names a directory
holding those three packages, put first on its worker's path only; without it, its row says why.
To reproduce the committed row:

    pip install --no-deps --target /work/peers/genai-openai-v2 httpx==0.28.1 httpcore==1.0.9 opentelemetry-util-genai==1.1b0
    AGENTOTEL_BENCH_PEER_PATH=/work/peers/genai-openai-v2 python -m benchmarks providers

(`--no-deps`: httpx's own dependencies come from the main install, so nothing else is shadowed.)
OpenLLMetry's `uninstrument()` leaves its wrappers in place, so it is timed unpaired (see its notes).

`AGENTOTEL_BENCH_PROVIDERS` picks the rows to measure, a comma-separated subset of `openai`, `genai`
and `bedrock` (all by default): `AGENTOTEL_BENCH_PROVIDERS=genai,bedrock python -m benchmarks providers`
re-measures the google-genai and Bedrock rows only (a few minutes instead of ~36), and the rows not
re-measured are carried over from results.json, each noting the run it comes from.

Instructions, whatever the machine's load: `python -m benchmarks.bench_providers --instructions
[genai,bedrock] [n] [config,...]` runs each configuration's n warm calls of each kind under callgrind
(valgrind; the peers from AGENTOTEL_BENCH_PEERS as above), in a process of its own, and prints the
instructions each adds per call over the uninstrumented process's (PYTHONHASHSEED fixed, imports run
uninstrumented, only the calls counted: `--toggle-collect=_operator_call`). It writes no row: a
callgrind run is ~50x slower, and it counts work, not the cache misses a cold call pays. With
`AGENTOTEL_CALLGRIND_CACHE=1` callgrind also simulates the caches (~3x slower again) and each
configuration's estimated cycles per call (instructions + 10 per first-level miss + 100 per last-level
miss) are printed as well: what a call costs beyond its instruction count, still whatever the load.

What the google-genai plain call's overhead is made of: `python -m benchmarks.bench_providers --floor
[processes] [rounds]` times, in one process per round of arms as the rows do (order shuffled), agentotel,
agentotel with content capture off, a hand-written span with agentotel's attributes at the method
agentotel patches (`_genai_hand_written`), and OpenLLMetry's google-generativeai peer; it prints each
one's overhead and its ratio to the peer's. It writes no row.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import Result

ROOT = Path(__file__).resolve().parents[1]
PEERS = {
    "openinference": "openinference-instrumentation-openai",
    "openllmetry": "opentelemetry-instrumentation-openai (OpenLLMetry)",
    "openai-v2": "opentelemetry-instrumentation-openai-v2",
}
CHUNKS = 30
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Count to thirty."}]


# --- the worker (one configuration, one process) ----------------------------------------------------------


def _transport() -> Any:
    import httpx2

    completion = json.dumps({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "one two three"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23},
    }).encode()  # fmt: skip
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o-mini-2024-07-18"}
    events = [{**chunk, "choices": [{"index": 0, "delta": {"content": f"{i} "}, "finish_reason": None}]} for i in range(CHUNKS - 1)]
    events.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    events.append({**chunk, "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 30, "total_tokens": 50}})
    stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"

    def handler(request: Any) -> Any:
        if b'"stream":true' in request.content.replace(b" ", b""):
            return httpx2.Response(200, content=stream, headers={"content-type": "text/event-stream"})
        return httpx2.Response(200, content=completion, headers={"content-type": "application/json"})

    return httpx2.MockTransport(handler)


def _hand_written(client: Any, tracer: Any, content: bool = True) -> tuple[Any, Any]:
    """The same span, written by hand: what a user would write without a library.

    It records every attribute agentotel records on these calls, with the same values (messages in the
    GenAI JSON shape, compact like ours; usage; finish reasons; cost; on the stream also
    `gen_ai.request.stream` and the time to the first chunk), and makes its span current while the SDK
    call runs, as agentotel does (so an HTTP client span would nest under it). What it leaves out is
    what a library does beyond the attributes: the content policy (redaction, bounds), SDK objects read
    generically, the run context, metrics, and the end-exactly-once guarantees of the stream proxy.
    """
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    from agentotel import semconv as s
    from agentotel.cost import cost_usd

    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    start = {s.GEN_AI_OPERATION_NAME: "chat", s.GEN_AI_PROVIDER_NAME: "openai", s.GEN_AI_REQUEST_MODEL: "gpt-4o-mini",
             s.SERVER_ADDRESS: "api.openai.com", s.SERVER_PORT: 443}  # fmt: skip
    stream_start = {**start, s.GEN_AI_REQUEST_STREAM: True}

    def inputs(span: Any, kwargs: dict) -> None:
        if not content:
            return
        span.set_attribute(s.GEN_AI_INPUT_MESSAGES, dumps(
            [{"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]} for m in kwargs["messages"]]))  # fmt: skip

    def finish(span: Any, rid: str, model: str, reason: str, text: str, usage: Any) -> None:
        span.set_attribute(s.GEN_AI_RESPONSE_ID, rid)
        span.set_attribute(s.GEN_AI_RESPONSE_MODEL, model)
        span.set_attribute(s.GEN_AI_RESPONSE_FINISH_REASONS, [reason])
        span.set_attribute(s.GEN_AI_USAGE_INPUT_TOKENS, usage.prompt_tokens)
        span.set_attribute(s.GEN_AI_USAGE_OUTPUT_TOKENS, usage.completion_tokens)
        span.set_attribute(s.AGENTOTEL_COST_USD, cost_usd("openai", model, input_tokens=usage.prompt_tokens,
                                                          output_tokens=usage.completion_tokens))  # fmt: skip
        if content:
            span.set_attribute(s.GEN_AI_OUTPUT_MESSAGES, dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": reason}]))  # fmt: skip

    def plain(**kwargs: Any) -> Any:
        with tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT, attributes=start) as span:
            inputs(span, kwargs)
            result = client.chat.completions.create(**kwargs)
            choice = result.choices[0]
            finish(span, result.id, result.model, choice.finish_reason, choice.message.content, result.usage)
            return result

    def stream(**kwargs: Any) -> Any:
        started = time.monotonic()
        span = tracer.start_span("chat gpt-4o-mini", kind=SpanKind.CLIENT, attributes=stream_start)
        inputs(span, kwargs)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            chunks = client.chat.completions.create(**kwargs)
        finally:
            otel_context.detach(token)
        text, reason, usage, rid, model, first = [], None, None, None, None, None
        for chunk in chunks:
            if first is None:
                first = time.monotonic()
            rid, model = chunk.id, chunk.model
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                text.append(choice.delta.content or "")
                reason = choice.finish_reason or reason
            yield chunk
        finish(span, rid, model, reason, "".join(text), usage)
        span.set_attribute(s.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, first - started)
        span.end()

    return plain, stream


def _switch(config: str, tracer_provider: Any) -> Any:
    """A function turning the configuration's instrumentation on (True) or off (False)."""
    if config.startswith("agentotel"):
        from agentotel import _tracing
        from agentotel.providers import instrument_providers, uninstrument_providers

        _tracing.set_providers(tracer_provider)
        return lambda on: instrument_providers() if on else uninstrument_providers()
    if config == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor
    elif config == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    elif config == "openai-v2":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    else:
        return lambda on: None
    instrumentor = OpenAIInstrumentor()

    def switch(on: bool) -> None:
        if on != instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument(tracer_provider=tracer_provider) if on else instrumentor.uninstrument()

    return switch


def _counting_provider() -> tuple[Any, Any]:
    """The global TracerProvider of a worker process, made here: every span it ends is counted and dropped.
    (provider, counter): `counter.count` is how many spans ended so far (what tells a peer recorded anything)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        count = 0

        def export(self, spans: Any) -> SpanExportResult:
            Drop.count += len(spans)
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)
    return provider, Drop


def _worker(config: str, calls: int, batches: int, paired: bool = True) -> dict[str, Any]:
    """Paired batches: uninstrumented, then instrumented (order alternating), so drift cancels out."""
    import httpx2
    import openai
    tracer_provider, Drop = _counting_provider()
    client = openai.OpenAI(api_key="k", http_client=httpx2.Client(transport=_transport()))
    stream_options = {"include_usage": True}

    def plain() -> Any:
        return client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)

    def stream() -> Any:
        for _ in client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True, stream_options=stream_options):
            pass

    instrumented = {"plain": plain, "stream": stream}
    hand: dict[str, Any] = {}
    if config.startswith("agentotel"):
        # The hand-written span is measured in agentotel's process, its batches interleaved with
        # agentotel's and the baseline's: the ratio the target is about then compares batches taken
        # moments apart, not two processes run a minute apart on a busy machine.
        hand_plain, hand_stream = _hand_written(client, tracer_provider.get_tracer("bench"), content=not config.endswith("/off"))

        def hand_streamed() -> Any:
            for _ in hand_stream(model="gpt-4o-mini", messages=MESSAGES, stream=True, stream_options=stream_options):
                pass

        hand = {"plain": lambda: hand_plain(model="gpt-4o-mini", messages=MESSAGES), "stream": hand_streamed}
    switch = _switch(config, tracer_provider)

    def batch(fn: Any, n: int) -> float:
        # CPU time of this process: everything here is in-process (mocked transport), and on a shared
        # machine wall time mostly measures the other processes.
        start = time.process_time()
        for _ in range(n):
            fn()
        return (time.process_time() - start) / n

    # A streamed call takes ~4x a plain one: a quarter of the calls a batch, twice the batches.
    kinds = (("plain", plain, calls, batches), ("stream", stream, max(calls // 4, 2), 2 * batches))
    if not paired:
        # Instrumented once, never switched off: baseline batches first, then instrumented ones.
        for _, fn, _, _ in kinds:
            fn()
        gc.collect()
        gc.freeze()  # as in the paired case below
        base = {kind: [batch(fn, n) for _ in range(count)] for kind, fn, n, count in kinds}
        switch(True)
        for kind, _, _, _ in kinds:
            instrumented[kind]()
        inst = {kind: [batch(instrumented[kind], n) for _ in range(count)] for kind, _, n, count in kinds}
        return {kind: {"base": base[kind], "inst": inst[kind], "unpaired": True} for kind, _, _, _ in kinds}
    # Does switching off really switch off? (OpenLLMetry's uninstrument() leaves its wrappers on.)
    switch(True)
    plain()
    switch(False)
    before = Drop.count
    plain()
    if Drop.count != before:
        return {"leaky": True}
    out: dict[str, Any] = {}
    for kind, base_fn, _, _ in kinds:
        base_fn(), instrumented[kind]()  # warm up (imports, pydantic caches)
        if hand:
            hand[kind]()
    # Everything alive now (modules, SDK classes) is never garbage: frozen, full collections stop
    # rescanning it, so a rare long one no longer lands in whichever batch is running (the garbage the
    # calls themselves make is still collected, and timed, as usual).
    gc.collect()
    gc.freeze()
    for kind, base_fn, n, count in kinds:
        if hand:
            # Three arms a round (baseline, hand-written, agentotel), their order rotating.
            arms: list[tuple[str, Any, bool]] = [("base", base_fn, False), ("hand", hand[kind], False), ("inst", base_fn, True)]
            runs: dict[str, list[float]] = {"base": [], "hand": [], "inst": []}
            for b in range(count):
                for name, fn, on in arms[b % 3 :] + arms[: b % 3]:
                    switch(on)
                    runs[name].append(batch(fn, n))
            switch(False)
            out[kind] = {**runs, "unpaired": False}
            continue
        base, inst = [], []
        for b in range(count):
            for on in ((False, True) if b % 2 == 0 else (True, False)):
                switch(on)
                (inst if on else base).append(batch(instrumented[kind] if on else base_fn, n))
        switch(False)
        out[kind] = {"base": base, "inst": inst, "unpaired": False}
    return out


def _run_worker(config: str, calls: int, batches: int, paired: bool = True) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if config == "openai-v2" and os.environ.get("AGENTOTEL_BENCH_PEER_PATH"):
        env["PYTHONPATH"] = os.pathsep.join([os.environ["AGENTOTEL_BENCH_PEER_PATH"], env["PYTHONPATH"]])
    env.update({
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",  # genai-openai: content on, in spans
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "TRACELOOP_TRACE_CONTENT": "true",  # OpenLLMetry: content on
        "AGENTOTEL_CAPTURE_CONTENT": "false" if config.endswith("/off") else "true",
    })  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_providers", "--worker", config, str(calls), str(batches),
         "paired" if paired else "unpaired"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=900,
    )  # fmt: skip
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": last[:300]}
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- the benchmark --------------------------------------------------------------------------------------------


ROW_GROUPS = ("openai", "genai", "bedrock")


def selected_groups() -> tuple[str, ...]:
    """The row groups `AGENTOTEL_BENCH_PROVIDERS` names (all when it is unset or empty)."""
    raw = {name.strip() for name in os.environ.get("AGENTOTEL_BENCH_PROVIDERS", "").split(",") if name.strip()}
    unknown = raw - set(ROW_GROUPS)
    if unknown:
        raise ValueError(f"AGENTOTEL_BENCH_PROVIDERS: unknown row group(s) {sorted(unknown)}; choose from {ROW_GROUPS}")
    return tuple(g for g in ROW_GROUPS if g in raw) or ROW_GROUPS


def _group_of(benchmark: str) -> str:
    return "genai" if benchmark.startswith("google-genai") else "bedrock" if benchmark.startswith("Bedrock") else "openai"


def carried_rows(groups: tuple[str, ...], results_json: Path | None = None) -> list[Result]:
    """The stored rows of the groups not in `groups` (RESULTS.md holds one section per module), noting their run."""
    path = results_json or ROOT / "benchmarks" / "results.json"
    try:
        section = json.loads(path.read_text())["sections"]["providers"]
    except (OSError, ValueError, KeyError):
        return []
    rows = []
    for data in section.get("results", ()):
        row = Result.from_dict(data)
        if row.error or _group_of(row.benchmark) in groups:
            continue
        if "carried over from the run of" not in row.notes:  # a row carried twice keeps its first date
            row = dataclasses.replace(row, notes=(row.notes + "; " if row.notes else "") + f"carried over from the run of {section.get('date')}")
        rows.append(row)
    return rows


def run(quick: bool) -> list[Result]:
    groups = selected_groups()
    rows = (run_openai(quick) if "openai" in groups else []) + run_sdks(quick, tuple(g for g in groups if g != "openai"))
    rows += [] if quick else carried_rows(groups)
    order = {g: i for i, g in enumerate(ROW_GROUPS)}
    return sorted(rows, key=lambda row: order[_group_of(row.benchmark)])  # stable: each group's rows as made


def run_openai(quick: bool) -> list[Result]:
    """The openai rows: agentotel, the hand-written span and the peers, plain call and 30-chunk stream."""
    # Many short paired batches: the median of their differences is what stays stable on a shared machine.
    calls, batches, rounds = (10, 2, 1) if quick else (40, 31, 9)
    # agentotel (with the hand-written span in its process: the 1.5x target) runs every round (processes
    # differ by up to ±25% in both overheads, so nine); the peers, 2-5x slower, and the content-off rows
    # need fewer to be placed.
    peer_rounds = 3
    # The quick (smoke) run skips the peers: each costs a process start and their imports.
    # "/off": content capture off, to show what the content policy (redaction, bounds) costs.
    configs = ["agentotel"] + ([] if quick else [*PEERS, "agentotel/off"])
    overheads: dict[str, dict[str, list[float]]] = {c: {"plain": [], "stream": []} for c in ["agentotel", "hand-written", *PEERS, "agentotel/off", "hand-written/off"]}
    baselines: dict[str, list[float]] = {"plain": [], "stream": []}
    round_ratios: dict[str, list[float]] = {"plain": [], "stream": []}  # agentotel / hand-written, per process
    errors: dict[str, str] = {}
    unpaired: set[str] = set()
    for r in range(rounds):
        order = configs[r % len(configs) :] + configs[: r % len(configs)]
        for config in order:
            if config in errors or (r >= peer_rounds and config != "agentotel"):
                continue
            data = _run_worker(config, calls, batches)
            if data.get("leaky"):
                data = _run_worker(config, calls, batches, paired=False)
            if "error" in data:
                errors[config] = data["error"]
                continue
            for kind in ("plain", "stream"):
                # Paired batches (taken back to back): the median of their differences cancels drift.
                pairs = [i - b for b, i in zip(data[kind]["base"], data[kind]["inst"])]
                if data[kind].get("unpaired"):
                    unpaired.add(config)
                overheads[config][kind].append(statistics.median(pairs) * 1e6)
                baselines[kind].append(statistics.median(data[kind]["base"]) * 1e6)
                if "hand" in data[kind]:  # measured in agentotel's process (see _worker)
                    hand_pairs = [h - b for b, h in zip(data[kind]["base"], data[kind]["hand"])]
                    overheads[config.replace("agentotel", "hand-written")][kind].append(statistics.median(hand_pairs) * 1e6)
                    if config == "agentotel":
                        round_ratios[kind].append(statistics.median(pairs) / statistics.median(hand_pairs))

    def median(values: list[float]) -> float | None:
        return statistics.median(values) if values else None

    def spread(values: list[float]) -> float | None:
        """Interquartile range over the rounds, relative to their median."""
        if len(values) < 3 or statistics.median(values) <= 0:
            return None
        q1, _, q3 = statistics.quantiles(values, n=4)
        return (q3 - q1) / statistics.median(values)

    peer_path = os.environ.get("AGENTOTEL_BENCH_PEER_PATH")

    results = []
    for kind, label in (("plain", "plain call"), ("stream", f"{CHUNKS}-chunk stream")):
        ours = median(overheads["agentotel"][kind])
        hand = median(overheads["hand-written"][kind])
        base = median(baselines[kind])
        note = f"uninstrumented call: {base:.0f} µs" if base is not None else ""
        ratios = sorted(round_ratios[kind])
        ratio_note = (f"; the ratio within each round's process: median {statistics.median(ratios):.2f}, "
                      f"{ratios[0]:.2f}-{ratios[-1]:.2f} over {len(ratios)} rounds") if ratios else ""  # fmt: skip
        common = dict(benchmark=f"openai chat overhead, {label}", metric="µs added per call (instrumented − uninstrumented)",
                      unit="µs", ours=ours, corpus=f"httpx2.MockTransport, {calls} calls × {batches} batches (streams: {max(calls // 4, 2)} × {2 * batches}) × {rounds} rounds",
                      repeats=len(overheads["agentotel"][kind]) or None, ours_spread=spread(overheads["agentotel"][kind]))  # fmt: skip
        results.append(Result(**common, peer_name="hand-written span, same attributes", peer=hand,
                              peer_spread=spread(overheads["hand-written"][kind]),
                              target="< 1.5× the hand-written span's overhead",
                              met=(ours <= 1.5 * hand) if ours is not None and hand is not None else None,
                              notes=note + ratio_note + (f"; agentotel failed: {errors['agentotel']}" if "agentotel" in errors else "")))  # fmt: skip
        for peer, name in PEERS.items():
            value = median(overheads[peer][kind])
            if quick:
                note_peer = "not measured in the quick run"
            elif peer in errors:
                note_peer = f"does not run with openai 3.x here: {errors[peer]}"
                if peer == "openai-v2" and not peer_path:
                    note_peer += " (set AGENTOTEL_BENCH_PEER_PATH: see this section's text)"
            elif peer in unpaired:
                note_peer = note + "; its uninstrument() leaves its wrappers on, so its process times uninstrumented batches first, then instrumented ones (unpaired, noisier)"
            else:
                note_peer = note
            if peer == "openai-v2" and peer_path and peer not in errors and not quick:
                note_peer += "; run with httpx and opentelemetry-util-genai 1.1b0 from AGENTOTEL_BENCH_PEER_PATH"
            note_peer += f"; {len(overheads[peer][kind])} rounds" if overheads[peer][kind] else ""
            results.append(Result(**common, peer_name=name, peer=value, peer_spread=spread(overheads[peer][kind]),
                                  target="lowest overhead of all",
                                  met=(ours < value) if ours is not None and value is not None else None,
                                  notes=note_peer))  # fmt: skip
        off, hand_off = median(overheads["agentotel/off"][kind]), median(overheads["hand-written/off"][kind])
        if not quick:
            results.append(Result(**{**common, "metric": common["metric"] + ", content capture off", "ours": off,
                                     "repeats": len(overheads["agentotel/off"][kind]) or None,
                                     "ours_spread": spread(overheads["agentotel/off"][kind])},
                                  peer_name="hand-written span, no message attributes", peer=hand_off,
                                  notes="what the wrapper costs without the content policy (messages, redaction, bounds)"))  # fmt: skip
    return results


# --- google-genai and Bedrock, side by side with their peers ---------------------------------------------------
#
# Unlike the openai rows, each peer shares a process with agentotel and the uninstrumented call, the
# three arms interleaved slot by slot (see `run_sdks`), on an in-process transport: google-genai on an `httpx2.MockTransport`, botocore answered from its own `before-send` event (no
# socket; request signing and response parsing still run). The peers are installed each in its own
# directory (`pip install --no-deps --target`), so that none is visible to the others or to the rest
# of the environment (an installed instrumentor is loaded by every `opentelemetry-instrument` run):
#
#     for p in "otel-google-genai opentelemetry-instrumentation-google-genai==1.3b0 opentelemetry-util-genai==1.3b0" \
#              "oi-google-genai openinference-instrumentation-google-genai==1.4.14" \
#              "ollm-google-generativeai opentelemetry-instrumentation-google-generativeai==0.62.4" \
#              "otel-botocore opentelemetry-instrumentation-botocore==0.66b2 opentelemetry-propagator-aws-xray==1.0.2" \
#              "oi-bedrock openinference-instrumentation-bedrock==0.1.61 dacite==1.9.2" \
#              "ollm-bedrock opentelemetry-instrumentation-bedrock==0.62.4"; do
#         set -- $p; d=$1; shift; pip install --no-deps --target /work/peers/$d "$@"; done
#
# (opentelemetry-instrumentation-google-genai needs opentelemetry-util-genai >= 1.3b0, which the
# environment may not have: it comes with it.) `AGENTOTEL_BENCH_PEERS` names the parent directory
# (default /work/peers); a peer not found there gets a row saying so.

PEERS_DIR = Path(os.environ.get("AGENTOTEL_BENCH_PEERS", "/work/peers"))
SDK_PEERS = {
    "genai": {
        "otel-google-genai": ("opentelemetry-instrumentation-google-genai", "opentelemetry.instrumentation.google_genai", "GoogleGenAiSdkInstrumentor"),
        "oi-google-genai": ("openinference-instrumentation-google-genai", "openinference.instrumentation.google_genai", "GoogleGenAIInstrumentor"),
        "ollm-google-generativeai": ("opentelemetry-instrumentation-google-generativeai (OpenLLMetry)",
                                     "opentelemetry.instrumentation.google_generativeai", "GoogleGenerativeAiInstrumentor"),
    },
    "bedrock": {
        "otel-botocore": ("opentelemetry-instrumentation-botocore", "opentelemetry.instrumentation.botocore", "BotocoreInstrumentor"),
        "oi-bedrock": ("openinference-instrumentation-bedrock", "openinference.instrumentation.bedrock", "BedrockInstrumentor"),
        "ollm-bedrock": ("opentelemetry-instrumentation-bedrock (OpenLLMetry)", "opentelemetry.instrumentation.bedrock", "BedrockInstrumentor"),
    },
}  # fmt: skip
SDK_CALLS = {"genai": ("generate_content", "generate_content_stream"), "bedrock": ("converse", "converse_stream")}
# OpenLLMetry's google-generativeai wraps the public generate_content (one span per user call, not per
# request) and records a little less on this benchmark's call than agentotel: no system instruction (it
# reads `config.system_instruction` as an attribute, so a dict config's is missed), no server.*, no
# cost, the request model as the response model, and its span is not made current while the SDK runs
# (an HTTP client span would not nest under it); of a stream it records the last chunk's text as the
# output message. Input messages, tokens, finish reasons and id it records alike.
_OLLM_GENAI = ("records a little less here: no system instruction (a dict config's is missed), server.* or cost, "
               "and its span is not current during the SDK call")  # fmt: skip
# What a peer's row needs said about its figure (found by profiling it, or by reading what it records).
PEER_NOTES = {
    ("oi-bedrock", "stream"): "its stream proxy calls inspect.stack() on every event to learn the method's name "
    "(openinference.instrumentation.bedrock._proxy._call), which reads the source file of every frame: the time is "
    "its own, not the harness's (cProfile of one stream: 35 inspect.stack() calls, 80% of the instrumented time)",
    ("ollm-google-generativeai", "plain"): _OLLM_GENAI,
    ("ollm-google-generativeai", "stream"): _OLLM_GENAI + "; its output message is the last chunk's text only, not the whole answer",
}


def _event_stream(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    """AWS event-stream messages (string headers), as Bedrock's ConverseStream sends them."""
    import binascii
    import struct

    out = b""
    for kind, body in events:
        headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
        encoded = b"".join(struct.pack("!B", len(k)) + k.encode() + struct.pack("!BH", 7, len(v)) + v.encode() for k, v in headers.items())
        payload = json.dumps(body).encode()
        prelude = struct.pack("!II", 16 + len(encoded) + len(payload), len(encoded))
        message = prelude + struct.pack("!I", binascii.crc32(prelude)) + encoded + payload
        out += message + struct.pack("!I", binascii.crc32(message))
    return out


def _sdk_calls(sdk: str) -> tuple[Any, Any]:
    """(plain call, stream read to the end) of one SDK on an in-process transport, same answers as the openai rows."""
    words = [f"{i} " for i in range(CHUNKS)]
    if sdk == "genai":
        import httpx2
        from google import genai

        def answer(text: str, last: bool) -> dict[str, Any]:
            body: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}],
                                    "modelVersion": "gemini-2.0-flash-001", "responseId": "r-1"}  # fmt: skip
            if last:
                body["candidates"][0]["finishReason"] = "STOP"
                body["usageMetadata"] = {"promptTokenCount": 20, "candidatesTokenCount": CHUNKS, "totalTokenCount": 20 + CHUNKS}
            return body

        plain_body = json.dumps(answer("one two three", True)).encode()
        stream_body = "".join(f"data: {json.dumps(answer(w, i == CHUNKS - 1))}\r\n\r\n" for i, w in enumerate(words)).encode()

        def handler(request: Any) -> Any:
            if "streamGenerateContent" in str(request.url):
                return httpx2.Response(200, content=stream_body, headers={"content-type": "text/event-stream"})
            return httpx2.Response(200, content=plain_body, headers={"content-type": "application/json"})

        client = genai.Client(api_key="k", http_options={"client_args": {"transport": httpx2.MockTransport(handler)}})
        contents = "Count to thirty."
        config = {"system_instruction": "You are terse."}

        def plain() -> Any:
            return client.models.generate_content(model="gemini-2.0-flash", contents=contents, config=config)

        def stream() -> None:
            for _ in client.models.generate_content_stream(model="gemini-2.0-flash", contents=contents, config=config):
                pass

        plain.client = client  # type: ignore[attr-defined]  # kept alive: a collected Client closes its transport
        return plain, stream
    import io

    import boto3
    from botocore.awsrequest import AWSResponse

    usage = {"inputTokens": 20, "outputTokens": CHUNKS, "totalTokens": 20 + CHUNKS}
    converse = json.dumps({"output": {"message": {"role": "assistant", "content": [{"text": "one two three"}]}},
                           "stopReason": "end_turn", "usage": usage, "metrics": {"latencyMs": 1}}).encode()  # fmt: skip
    events = [("messageStart", {"role": "assistant"})]
    events += [("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": w}}) for w in words]
    events += [("contentBlockStop", {"contentBlockIndex": 0}), ("messageStop", {"stopReason": "end_turn"}),
               ("metadata", {"usage": usage, "metrics": {"latencyMs": 1}})]  # fmt: skip
    stream_body = _event_stream(events)

    class Raw(io.BytesIO):
        def stream(self, amt: int = 1024, decode_content: bool | None = None) -> Any:
            while chunk := self.read(amt):
                yield chunk

    def send(request: Any, **kwargs: Any) -> Any:
        if request.url.endswith("/converse-stream"):
            return AWSResponse(request.url, 200, {"content-type": "application/vnd.amazon.eventstream"}, Raw(stream_body))
        return AWSResponse(request.url, 200, {"content-type": "application/json"}, Raw(converse))

    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    client.meta.events.register("before-send.bedrock-runtime", send)
    messages = [{"role": "user", "content": [{"text": "Count to thirty."}]}]
    system = [{"text": "You are terse."}]

    def plain_call() -> Any:
        return client.converse(modelId="amazon.nova-micro-v1:0", messages=messages, system=system)

    def stream_call() -> None:
        for _ in client.converse_stream(modelId="amazon.nova-micro-v1:0", messages=messages, system=system)["stream"]:
            pass

    return plain_call, stream_call


def _sdk_switch(sdk: str, config: str, tracer_provider: Any) -> Any:
    if config == "agentotel":
        from agentotel import _tracing
        from agentotel.providers import instrument_providers, uninstrument_providers

        _tracing.set_providers(tracer_provider)
        return lambda on: instrument_providers() if on else uninstrument_providers()
    import importlib

    _, module, cls = SDK_PEERS[sdk][config]
    instrumentor = getattr(importlib.import_module(module), cls)()

    def switch(on: bool) -> None:
        # skip_dep_check: opentelemetry-instrumentation-google-genai declares google-genai < 3 and would
        # otherwise instrument nothing here.
        if on != instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument(tracer_provider=tracer_provider, skip_dep_check=True) if on else instrumentor.uninstrument()

    return switch


def _sdk_worker(sdk: str, peer: str | None, calls: int, rounds: int) -> dict[str, Any]:
    """Arms interleaved in one process: uninstrumented, agentotel and (when named) one peer, each alone on
    for one slot of a few calls, their order rotating every round; each arm's CPU time per call, per kind,
    round by round.

    Why one process for all arms: the same heap, hash seed, imports and CPU for each, and every round's
    slots taken moments apart, so the load of a shared machine (which moves a process's CPU time per
    call by tens of percent from one minute to the next) lands on all arms alike. The parent repeats this
    in fresh processes to sample what differs between processes (memory layout)."""
    tracer_provider, Drop = _counting_provider()
    base = _sdk_calls(sdk)  # a client made before any instrumentation
    configs = ["agentotel"] + ([peer] if peer else [])
    switches = {config: _sdk_switch(sdk, config, tracer_provider) for config in configs}

    def only(arm: str) -> None:
        # Every other instrumentation off first: a peer that restores "the original" when switched off
        # would otherwise take away a wrapper put on top of its own.
        for config, switch in switches.items():
            if config != arm:
                switch(False)
        if arm in switches:
            switches[arm](True)

    def spans_of(fn: Any) -> int:
        before = Drop.count
        fn()
        return Drop.count - before

    arms: dict[str, tuple[Any, Any]] = {"base": base}
    for config in configs:
        only(config)
        # Some peers wrap each client as it is made (botocore's ClientCreator): the client made while
        # they are on is then their arm's client.
        made_on = _sdk_calls(sdk)
        arms[config] = base if spans_of(base[0]) == 1 else made_on
    for arm, (plain, stream) in arms.items():
        only(arm)
        recorded = spans_of(plain) + spans_of(stream)
        if recorded != (0 if arm == "base" else 2):
            who = "the uninstrumented arm" if arm == "base" else arm
            return {"error": f"{who} records {recorded} spans for a call and a stream (switched on alone: 2 expected, "
                             "0 with every instrumentation off); its arms cannot be interleaved"}  # fmt: skip

    def slot(fn: Any, n: int) -> float:
        fn()  # untimed: the first call after a switch re-warms what patching the SDK's classes reset
        # CPU time of this thread: everything is in-process, and wall time on a shared machine mostly
        # measures the other processes (and a peer's background thread, if any, is not the call's cost).
        start = time.thread_time()
        for _ in range(n):
            fn()
        return (time.thread_time() - start) / n

    names = list(arms)
    for arm in names:  # warm up every arm (imports, pydantic caches, the price table)
        only(arm)
        for fn in arms[arm]:
            fn(), fn()
    # Everything alive now (modules, SDK classes) is never garbage: frozen, full collections stop
    # rescanning it (the garbage the calls make is still collected, and timed, as usual).
    gc.collect()
    gc.freeze()
    out: dict[str, Any] = {}
    # Short slots, many rounds: on a loaded machine a process's speed drifts over tens of milliseconds,
    # so arms compared a few milliseconds apart see the same machine (batches of 40 calls, ~60 ms each,
    # put the same code at 0.9-2.1x of a peer from one run to the next). A streamed call takes ~4x a
    # plain one: half the calls a slot.
    for index, kind, n in ((0, "plain", calls), (1, "stream", max(calls // 2, 1))):
        times: dict[str, list[float]] = {arm: [] for arm in names}
        for r in range(rounds if kind == "plain" else max(rounds // 2, 1)):
            for arm in names[r % len(names) :] + names[: r % len(names)]:
                only(arm)
                times[arm].append(slot(arms[arm][index], n))
        out[kind] = times
    only("base")
    return out


def _run_sdk_worker(sdk: str, peer: str | None, calls: int, rounds: int, worker: str = "--sdk-worker") -> dict[str, Any]:
    paths = [str(ROOT), os.environ.get("PYTHONPATH")]
    if peer:
        directory = PEERS_DIR / peer
        if not directory.is_dir():
            return {"error": f"not installed in {directory} (see this section's text)"}
        paths.insert(0, str(directory))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths)),
           "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY", "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
           "TRACELOOP_TRACE_CONTENT": "true", "AGENTOTEL_CAPTURE_CONTENT": "true"}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_providers", worker, sdk, peer or "-", str(calls), str(rounds)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=900,
    )  # fmt: skip
    if out.returncode != 0:
        return {"error": ((out.stderr.strip().splitlines() or ["failed"])[-1])[:300]}
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- What the google-genai plain call's overhead is made of (diagnostic: `--floor`, no row) -----------------


def _genai_hand_written(tracer_provider: Any) -> Any:
    """A switch putting a hand-written span where agentotel's patch sits (`Models._generate_content`).

    It records what agentotel records on this benchmark's plain call, with the same values (messages,
    instructions and output in the GenAI JSON shape, compact like ours; usage; finish reasons; cost;
    server.*) and makes its span current during the SDK call; it leaves out what a library does beyond
    the attributes (content policy, run context, metrics, errors, other shapes): the floor of a wrapper
    at that method.
    """
    import wrapt
    from google.genai import models
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    from agentotel import semconv as s
    from agentotel.cost import cost_usd

    tracer = tracer_provider.get_tracer("bench")
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    original = models.Models.__dict__["_generate_content"]

    def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        model = kwargs["model"]
        span = tracer.start_span(f"chat {model}", kind=SpanKind.CLIENT, attributes={
            s.GEN_AI_OPERATION_NAME: "chat", s.GEN_AI_PROVIDER_NAME: "gcp.gemini", s.GEN_AI_REQUEST_MODEL: model,
            s.SERVER_ADDRESS: "generativelanguage.googleapis.com", s.SERVER_PORT: 443})  # fmt: skip
        attributes = {s.GEN_AI_INPUT_MESSAGES: dumps([{"role": "user", "parts": [{"type": "text", "content": kwargs["contents"]}]}]),
                      s.GEN_AI_SYSTEM_INSTRUCTIONS: dumps([{"type": "text", "content": kwargs["config"].system_instruction}])}  # fmt: skip
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            result = wrapped(*args, **kwargs)
        finally:
            otel_context.detach(token)
        candidate, usage = result.candidates[0], result.usage_metadata
        reason = candidate.finish_reason.value.lower()
        attributes[s.GEN_AI_RESPONSE_ID] = result.response_id
        attributes[s.GEN_AI_RESPONSE_MODEL] = result.model_version
        attributes[s.GEN_AI_RESPONSE_FINISH_REASONS] = [reason]
        attributes[s.GEN_AI_USAGE_INPUT_TOKENS] = usage.prompt_token_count
        attributes[s.GEN_AI_USAGE_OUTPUT_TOKENS] = usage.candidates_token_count
        attributes[s.GEN_AI_OUTPUT_MESSAGES] = dumps([{"role": "assistant", "parts": [{"type": "text", "content": p.text} for p in candidate.content.parts],
                                                       "finish_reason": reason}])  # fmt: skip
        attributes[s.AGENTOTEL_COST_USD] = cost_usd("gcp.gemini", result.model_version, input_tokens=usage.prompt_token_count,
                                                    output_tokens=usage.candidates_token_count)  # fmt: skip
        span.set_attributes(attributes)
        span.end()
        return result

    patched = wrapt.FunctionWrapper(original, wrapper)

    def switch(on: bool) -> None:
        if on:
            models.Models._generate_content = patched
        elif models.Models.__dict__["_generate_content"] is patched:  # (never takes away another arm's patch)
            models.Models._generate_content = original

    return switch


def _floor_worker(peer: str | None, calls: int, rounds: int) -> dict[str, Any]:
    """google-genai plain calls, arms interleaved as in `_sdk_worker`: uninstrumented, agentotel, agentotel with
    content capture off, the hand-written span (`_genai_hand_written`) and (when named) the peer; each arm's CPU
    time per call, round by round."""
    from agentotel import _config

    tracer_provider, Drop = _counting_provider()
    plain = _sdk_calls("genai")[0]
    switches = {"agentotel": _sdk_switch("genai", "agentotel", tracer_provider), "hand-written": _genai_hand_written(tracer_provider)}
    if peer:
        switches[peer] = _sdk_switch("genai", peer, tracer_provider)
    arms = {"base": None, "agentotel": "agentotel", "agentotel, capture off": "agentotel", "hand-written": "hand-written"}
    if peer:
        arms[peer] = peer
    capture = {True: _config.Settings.resolve(capture_content=True), False: _config.Settings.resolve(capture_content=False)}

    def only(arm: str) -> None:
        for name, switch in switches.items():
            if name != arms[arm]:
                switch(False)
        if arms[arm] is not None:
            switches[arms[arm]](True)
        _config.configure(capture[arm != "agentotel, capture off"])

    def slot(n: int) -> float:
        plain()  # untimed, as in `_sdk_worker`
        start = time.thread_time()
        for _ in range(n):
            plain()
        return (time.thread_time() - start) / n

    names = list(arms)
    for arm in names:
        only(arm)
        before = Drop.count
        plain(), plain()
        if Drop.count - before != (0 if arm == "base" else 2):
            return {"error": f"{arm} records {Drop.count - before} spans for two calls"}
    gc.collect()
    gc.freeze()
    # The order shuffled every round, not rotated: an arm's slot runs faster after a slot of the same code
    # (agentotel after agentotel with capture off: ~15 µs less), so with a fixed cycle the arm placed
    # after its sibling would look cheaper than it is; shuffled, every arm follows every other alike.
    import random

    order = random.Random(0)
    times: dict[str, list[float]] = {arm: [] for arm in names}
    for _ in range(rounds):
        order.shuffle(names)
        for arm in names:
            only(arm)
            times[arm].append(slot(calls))
    only("base")
    return times


def floor(peer: str | None = "ollm-google-generativeai", processes: int = 3, rounds: int = 240) -> None:
    """Print, per process and pooled, each arm's overhead on the google-genai plain call (median of per-round
    differences, as the rows) and its ratio to the peer's: what agentotel's figure is made of (the hand-written
    span is the floor at the method agentotel patches; capture off drops every message payload)."""
    pooled: dict[str, list[float]] = {}
    for p in range(processes):
        data = _run_sdk_worker("genai", peer, 4, rounds, worker="--floor-worker")
        if "error" in data:
            print(f"process {p}: {data['error']}")
            return
        overheads = {arm: [(t - b) * 1e6 for b, t in zip(data["base"], data[arm])] for arm in data if arm != "base"}
        for arm, values in overheads.items():
            pooled.setdefault(arm, []).extend(values)
        medians = {arm: statistics.median(values) for arm, values in overheads.items()}
        reference = medians.get(peer) if peer else None
        print(f"process {p} (uninstrumented call {statistics.median(data['base']) * 1e6:.0f} µs): "
              + "; ".join(f"{arm} {m:.1f} µs" + (f" ({m / reference:.2f}x)" if reference else "") for arm, m in medians.items()), flush=True)  # fmt: skip
    medians = {arm: statistics.median(values) for arm, values in pooled.items()}
    reference = medians.get(peer) if peer else None
    print("pooled: " + "; ".join(f"{arm} {m:.1f} µs" + (f" ({m / reference:.2f}x)" if reference else "") for arm, m in medians.items()))


def _summary(values: list[float]) -> tuple[float, float, float, float]:
    """(median, first quartile, third quartile, minimum) of per-round overheads."""
    ordered = sorted(values)
    if len(ordered) < 2:
        return ordered[0], ordered[0], ordered[0], ordered[0]
    q1, median, q3 = statistics.quantiles(ordered, n=4)
    return statistics.median(ordered), q1, q3, ordered[0]


def _ratio_interval(mine: list[float], theirs: list[float], resamples: int = 400) -> tuple[float, float] | None:
    """A 95% interval of median(mine) / median(theirs), rounds resampled with replacement (a round's two
    overheads kept together: both arms ran in it, moments apart). The row's ± is the spread of single
    rounds (one slot of a few calls, minus the same round's uninstrumented slot); this is how far the
    ratio of the medians, which decides the row, would move on another sample of rounds like these."""
    if len(mine) != len(theirs) or len(mine) < 20:
        return None
    import random

    rng = random.Random(0)  # the same interval for the same rounds
    rounds = list(zip(mine, theirs))
    ratios = []
    for _ in range(resamples):
        sample = rng.choices(rounds, k=len(rounds))
        theirs_median = statistics.median(t for _, t in sample)
        if theirs_median > 0:
            ratios.append(statistics.median(m for m, _ in sample) / theirs_median)
    if len(ratios) < resamples // 2:
        return None
    ratios.sort()
    return ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]


def run_sdks(quick: bool, sdks: tuple[str, ...] = ("genai", "bedrock")) -> list[Result]:
    """google-genai and Bedrock rows: agentotel against each peer, plain call and 30-chunk stream.

    One process per peer holds three arms (uninstrumented, agentotel, the peer), interleaved batch by
    batch in rotating order (see `_sdk_worker`); an arm's overhead in a round is its batch minus the
    same round's uninstrumented batch. Each peer gets `processes` fresh processes (the peers' order
    rotating between them), and its row compares the median of those rounds' overheads with agentotel's
    from the same rounds: both taken in the same processes, moments apart.

    What a row's figures mean: the `±` next to each overhead is the interquartile range of single rounds
    (one slot of 4 calls minus the same round's uninstrumented slot, on a ~2.7 ms call: the difference
    of two noisy slots), relative to the median; it is not the uncertainty of the median. How far the
    ratio that decides the row could move is its 95% interval in the note (rounds resampled, both arms'
    overheads of a round kept together), and the ratio per process shows whether processes agree. The
    row measures CPU time per call with the arms switched on and off slot by slot (each slot after one
    untimed call). `--instructions` counts work in a process that never switches. The two disagree on
    the google-genai plain call against OpenLLMetry (session 13: instructions 0.89-0.93x over three
    runs, this row 1.06x with 1.06-1.08 per process; both before 9c6642f), and simulated caches do not
    explain it: with `AGENTOTEL_CALLGRIND_CACHE=1` agentotel adds 390.0k instructions and ~510k
    estimated cycles a call (11.4k first-level misses), OpenLLMetry 420.4k and ~553k (12.7k): 0.92x
    either way. Session 14 ruled out, on the plain call against OpenLLMetry (instructions 0.79x):
    switching (callgrind of this worker's own rotation, only one arm's timed calls collected: agentotel
    +338.8k a call switching, +344.3k never switched; OpenLLMetry +424.5k and +438.4k; and 30 untimed
    calls after each switch instead of one leave the time ratio where it was), the garbage collector
    (2.5 young collections per 1,000 calls for both arms, no older ones; the ratio with it off is the
    same), system calls and page faults (strace and getrusage: none per call for either arm), and the
    memory system as callgrind models it (with the machine's own L1 sizes and a last level the size of
    its 2 MB L2, both arms' calls miss it under 20 times: 0.80x estimated cycles). Time sampled with
    py-spy, each arm alone in its own process (never switched), the two run at once: 0.88x (both
    spend ~40 % of their time in the OTel SDK's span start and end). What is left is hardware callgrind
    does not model, and its branch model is no guide to it (mispredicted conditional branches a call,
    two runs: agentotel 7.3k and 6.1k, OpenLLMetry 6.8k and 7.0k). Note also that the instruction
    counts move by a few percent between runs (the garbage collector runs at different calls): compare
    configurations from one run.

    Session 19 (load 4-7, `--floor 4 400`, order shuffled): agentotel 1.04x OpenLLMetry (1.00-1.08 per
    process), the hand-written span with the same attributes 0.75x, agentotel with content capture off
    0.76x. Without its three payload encodings (input, instructions, output; arms in one process)
    agentotel drops by as much as with capture off (78.7 -> 61.2 µs; the output's alone ~10.6 µs,
    ~2-3 µs in a warm loop; `_dumps` of the same output instead of the policy's encoding: 91.1 against
    101.0 µs, none at all 87.1): what the row misses by is the content policy's encoding, run cold between
    two SDK phases, not the span, the request or response reading, the context or the patch (a patch
    calling straight through adds ~0 µs; not attaching the context changes nothing measurable). Writing
    the text shapes' JSON without the C encoder did not change it (71.0 vs 68.2 µs, same process).
    The rows' fixed rotation does not favour the peer: shuffled, the peer after agentotel costs 111 µs
    against 116 after the uninstrumented arm, agentotel after the peer 128 against 124 after it
    (2,400 rounds); an arm after a slot of its own code is ~15 µs cheaper, alike for both.

    Session 20: what the encoding costs is the Python it runs cold, not the JSON. Timed alone with an
    uninstrumented call before each (the SDK's work evicts ours, as in the rows), the three payload
    encodings cost 13-21 µs (runs at load 3-6) against ~4 µs for `_dumps` of the same values and
    8-10 µs for the hand-written span's json.dumps (json's own Python, which the SDK has just run, is
    warm); cold, each bytecode of ours costs ~25-40 ns and each Python call ~0.5-1 µs, and C paths the
    SDK does not use are as dear (the output checked on its text by regex and marshal instead of the
    shape walk: 25 µs against 9 in the same run). The
    text-shape match without its helper calls, with a straight path for one message of one part,
    runs 451 bytecodes a call in content.py instead of 534 (callgrind: 335.4k instructions a plain call
    against 345.9k) and ~2 µs less cold; --floor, new and old code alternately (3 x 300 rounds each,
    load 2-8): agentotel 1.00x and 1.04x OpenLLMetry, the old code 0.99x and 1.03x: within the noise,
    and the row stays at 1.04x (95% interval 1.00-1.08).

    Session 23: what a call costs run cold is the distinct code it enters, Python functions and C paths
    alike, more than its instructions. Timed alone right after an uninstrumented call (load ~7): the
    output's shape test 11.4 -> 6.9 µs once its four values were tested directly instead of through
    temporary sets (`map`, `issuperset`), request reading 17.5 -> 13.4 µs with the client's server.*
    remembered per base URL. Functions entered on a plain call: agentotel's own 33 -> 23, OTel's context
    API 6 -> 0 from ours (its runtime ContextVar's own get/set/reset); 119 -> 104 Python calls added in
    all, where OpenLLMetry adds 207 and costs about the same: its are the SDK's attribute setters, called
    8 times each and warm after the first, ours are nearly all entered once. Against the previous code
    in the same process (a renamed copy, arms shuffled, load 4-5): 0.92-0.96x its overhead. The row,
    three runs at load 2-4: 0.992x (95% interval 0.94-1.05), 1.04x (1.00-1.08) and the committed 1.04x
    (1.00-1.08, per process 0.95-1.09; the code before: 1.06x, 1.02-1.11, at load ~1.7): at the peer's
    level, not clearly below it. Capture off still saves ~12-17 µs (the input payloads, ~6 µs of it alone).

    Session 24 (load 4-10, the machine shared): variants against the previous code in one process (renamed
    copies of the package, arms shuffled, 6 x 250-300 rounds). An A/A pair of identical copies came out at
    1.008x, 1.019x and 1.054x in three runs: nothing under ~5 % is resolvable this way at that load. Not kept:
    the request's payloads encoded after the call with the output (content.py entered cold once, not twice):
    1.016x (95% interval 0.95-1.07), as session 19 found; a prompt and a system instruction of one text part
    matched by `_text_json`'s straight path like the output (one function, `_known_json`, no longer entered):
    1.053x (0.99-1.13) and +12k instructions a call (343.1k vs 331.0k: the match runs ~220 bytecodes more
    than `_known_json`'s C encode and set look-up of a repeated text); `_tracing.set_attributes`' per-value
    tests made as C set tests (582 -> 304 bytecodes a call; warm 2.29 vs 2.50 µs): 1.033x and 1.037x (C
    paths the SDK does not run cost cold as bytecodes do). Kept: the tracer, the metrics instruments and the
    capture flag asked inline (functions entered 24 -> 21; 1.078x and 1.013x depending on the arms' order:
    within that noise). Where the time is (stubs in one process, 400 rounds, load ~8; median of rounds / 10th
    percentile): capture off saves 14 / 12 µs of 85 / 68, the input and system encodings 3 / 8, making the
    span current during the SDK call (which OpenLLMetry does not) 3 / 3, the cost 4 / 1. The row, load 4-6:
    0.938x (95% interval 0.86-1.04, per process 0.88-0.96); main's run of the same content code 0.962x.

    Session 25 tested whether work off the timed thread or the garbage collector explains why 0.75x the
    peer's instructions (callgrind: +321.2k a plain call against OpenLLMetry's +430.9k) costs the same time.
    Neither does. No arm has a second Python thread (every arm runs through this worker's one
    SimpleSpanProcessor and dropping exporter: no Parquet, no export thread for anyone), and each arm's
    added thread CPU time, process CPU time and wall time agree within 1-3 % (load ~1: agentotel 103.9 /
    103.9 / 103.9 µs, the peer 99.9 / 99.9 / 100.7). No arm leaves cyclic garbage (DEBUG_SAVEALL, 100 calls:
    0 objects) or grows the heap; young collections run 1.5-4.2 per 1,000 calls for agentotel and 1.7-3.0
    for the peer (never switched, and in this worker), none older, ~20 µs each: 0.04-0.06 µs a call. What
    differs is time per added instruction: the uninstrumented call runs ~8.4M instructions in ~900 µs (~9.4
    a ns), the peer's added ones ~4.4 a ns, ours ~3.2 (cold code between two SDK phases, as sessions 20-23
    found). Switching the arms on and off slot by slot is not what puts us level either: with no switching
    at all (each instrumentation on for its whole process, the uninstrumented arm the same client through a
    subclass of `Models` holding the original methods), 13 process pairs at load 3-9 gave 0.99x (per pair
    0.77-1.14), the same script switching 1.07x (0.83-1.37): noise at that load. The row at load 1.4-2.5:
    1.04x (95% interval 1.02-1.08); `--floor 3 300` at load 5-6: 1.04x pooled, capture off 0.81x, the
    hand-written span 0.88x.

    Session 30: where a plain call's time goes, timed in place (perf_counter_ns between our parts, each timed
    call after an uninstrumented one as in the rows, median of 1,600 calls, load ~2): the OTel SDK's span start
    25 µs and end 9-11 µs (the same for OpenLLMetry's span: 25.4 / 11.1 against our 26.4 / 11.0, both timed
    around the SDK's own methods), reading the request and making the call 7, the input payloads 6.8 -> 4.2
    (a prompt and an instruction of one text sent again known by their text, `_Policy.one_texts`), reading the
    response 4, cost 3, the output payload 6.3 -> 4.5 (its text written around the one string that varies:
    the C encoder's walk of the message costs ~2 µs warm, the string's encoding 0.2), set_attributes 5; the
    call's context made with the span, `finish` in one function and the sync wrapper reading a plain response
    inline: 21 -> 17 of our functions entered a call. Callgrind: 337.9k -> 303.6k instructions and ~496k ->
    ~446k estimated cycles a call (OpenLLMetry 422.8k / ~581k). The SDK call itself also runs slower under an
    instrumentation: `Models._generate_content`'s own time, timed beneath every patch, is ~820 µs alone,
    +12 µs under OpenLLMetry and +16-23 µs under agentotel (our request reading and span start run right
    before it, where OpenLLMetry's run before the SDK's public method); not making the span current changes
    that within the noise (+11-15 µs either way). The row (load 3-4): 0.975x (95% interval 0.94-1.00) and
    0.976x (0.94-1.01), main's code the same hour 1.035x (1.00-1.07); `--floor 3 300`: 0.89x, capture off
    0.75x, the hand-written span 0.79x. The row's order of arms is not what keeps it at ~0.98: shuffled
    0.965x, the reverse rotation 0.976x, the rows' 0.994x (3 processes each, load ~2.7)."""
    calls, rounds, processes = (4, 3, 1) if quick else (4, 240, 3)
    results: list[Result] = []
    for sdk, label in (("genai", "google-genai generate_content"), ("bedrock", "Bedrock converse (botocore)")):
        if sdk not in sdks:
            continue
        peers: list[str | None] = [None] if quick else list(SDK_PEERS[sdk])
        # {peer: {arm: {kind: per-round overheads}}}; arm "agentotel" or the peer itself
        overheads: dict[str | None, dict[str, dict[str, list[float]]]] = {}
        ratios: dict[str | None, dict[str, list[float]]] = {}  # per process: agentotel's median / the peer's
        baselines: dict[str, list[float]] = {"plain": [], "stream": []}
        errors: dict[str | None, str] = {}
        for p in range(processes):
            for peer in peers[p % len(peers) :] + peers[: p % len(peers)]:
                if peer in errors:
                    continue
                data = _run_sdk_worker(sdk, peer, calls, rounds)
                if "error" in data:
                    errors[peer] = data["error"]
                    continue
                for kind in ("plain", "stream"):
                    times = data[kind]
                    baselines[kind] += times["base"]
                    for arm in [a for a in times if a != "base"]:
                        diffs = [(t - b) * 1e6 for b, t in zip(times["base"], times[arm])]
                        overheads.setdefault(peer, {}).setdefault(arm, {"plain": [], "stream": []})[kind] += diffs
                    if peer:
                        last = len(times["base"])  # this process's rounds
                        ratios.setdefault(peer, {"plain": [], "stream": []})[kind].append(
                            statistics.median(overheads[peer]["agentotel"][kind][-last:]) / statistics.median(overheads[peer][peer][kind][-last:]))  # fmt: skip
        if not overheads and not quick:  # no peer runs here: agentotel alone against the uninstrumented call
            for _ in range(processes):
                data = _run_sdk_worker(sdk, None, calls, rounds)
                if "error" in data:
                    errors[None] = data["error"]
                    break
                for kind in ("plain", "stream"):
                    baselines[kind] += data[kind]["base"]
                    overheads.setdefault(None, {}).setdefault("agentotel", {"plain": [], "stream": []})[kind] += [
                        (t - b) * 1e6 for b, t in zip(data[kind]["base"], data[kind]["agentotel"])]  # fmt: skip
        pooled = {kind: [v for by_arm in overheads.values() for v in by_arm.get("agentotel", {}).get(kind, [])] for kind in ("plain", "stream")}
        for kind, what in (("plain", "plain call"), ("stream", f"{CHUNKS}-chunk stream")):
            base = statistics.median(baselines[kind]) * 1e6 if baselines[kind] else None
            corpus = (f"in-process transport, arms interleaved in slots of {calls if kind == 'plain' else max(calls // 2, 1)} timed calls, "
                      f"{rounds if kind == 'plain' else max(rounds // 2, 1)} rounds × {processes} processes per peer")  # fmt: skip
            common = dict(benchmark=f"{label} overhead, {what}", metric="µs added per call (instrumented − uninstrumented)", unit="µs", corpus=corpus)
            for peer, (name, _, _) in SDK_PEERS[sdk].items():
                mine = overheads.get(peer, {}).get("agentotel", {}).get(kind) or pooled[kind]
                theirs = overheads.get(peer, {}).get(peer, {}).get(kind) or []
                ours = _summary(mine) if mine else None
                value = _summary(theirs) if theirs else None
                if "agentotel" in errors.get(peer, "") or (None in errors and not mine):
                    note = f"agentotel failed: {errors.get(peer) or errors.get(None)}"
                elif quick:
                    note = "not measured in the quick run"
                elif peer in errors:
                    note = f"does not run here: {errors[peer]}; agentotel's figure from the other peers' processes"
                else:
                    spread = ratios[peer][kind]
                    note = (f"uninstrumented call: {base:.0f} µs; {len(theirs)} rounds in {len(spread)} processes; "
                            f"agentotel median {ours[0]:.1f}, IQR {ours[1]:.1f}-{ours[2]:.1f}, min {ours[3]:.1f}; "
                            f"peer median {value[0]:.1f}, IQR {value[1]:.1f}-{value[2]:.1f}, min {value[3]:.1f}; "
                            f"ratio per process {min(spread):.2f}-{max(spread):.2f}")  # fmt: skip
                    interval = _ratio_interval(mine, theirs)
                    if interval is not None:
                        note += f"; ratio 95% interval {interval[0]:.2f}-{interval[1]:.2f} (rounds resampled)"
                    if (peer, kind) in PEER_NOTES:
                        note += "; " + PEER_NOTES[peer, kind]
                relative = (lambda s: (s[2] - s[1]) / s[0] if s and s[0] > 0 else None)  # noqa: E731
                results.append(Result(**common, ours=ours[0] if ours else None, ours_spread=relative(ours), repeats=len(mine) or None,
                                      peer_name=name, peer=value[0] if value else None, peer_spread=relative(value),
                                      target="lowest overhead of all", notes=note,
                                      met=(ours[0] < value[0]) if ours and value else None))  # fmt: skip
    return results


# --- Python function calls per instrumented call (deterministic, whatever the machine's load) -----------------


def _count_worker(sdk: str, config: str) -> dict[str, int]:
    """Python function calls (profile `call` events, generator resumptions included) an instrumentation adds
    to one plain call and one streamed call: instrumented minus uninstrumented, each counted warm."""
    tracer_provider, _counted = _counting_provider()
    base = _sdk_calls(sdk)
    switch = _sdk_switch(sdk, config, tracer_provider)
    switch(True)
    made_on = _sdk_calls(sdk)  # a peer that wraps clients as they are made instruments only this one

    events = ("call", "c_call") if os.environ.get("AGENTOTEL_COUNT_C_CALLS") else ("call",)

    def count(fn: Any) -> int:
        for _ in range(3):  # warm: imports, caches, the price table
            fn()
        calls = 0

        def profile(frame: Any, event: str, arg: Any) -> None:
            nonlocal calls
            if event in events:
                calls += 1

        sys.setprofile(profile)
        try:
            fn()
        finally:
            sys.setprofile(None)
        return calls

    out = {}
    for i, kind in enumerate(("plain", "stream")):
        instrumented = count(made_on[i])
        switch(False)
        out[kind] = instrumented - count(base[i])
        switch(True)
    return out


def count_calls(sdks: tuple[str, ...] = ("genai", "bedrock")) -> dict[str, dict[str, Any]]:
    """{"<sdk> <kind>": {config: calls added}} for agentotel and every installed peer, each in its own process."""
    table: dict[str, dict[str, Any]] = {}
    for sdk in sdks:
        for config in ["agentotel", *SDK_PEERS[sdk]]:
            paths = [str(ROOT), os.environ.get("PYTHONPATH")]
            if config != "agentotel":
                if not (PEERS_DIR / config).is_dir():
                    continue
                paths.insert(0, str(PEERS_DIR / config))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths)),
                   "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY", "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                   "TRACELOOP_TRACE_CONTENT": "true", "AGENTOTEL_CAPTURE_CONTENT": "true"}  # fmt: skip
            out = subprocess.run([sys.executable, "-m", "benchmarks.bench_providers", "--count-worker", sdk, config],
                                 capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)  # fmt: skip
            counts = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {}
            for kind in ("plain", "stream"):
                table.setdefault(f"{sdk} {kind}", {})[config] = counts.get(kind, (out.stderr.strip().splitlines() or ["failed"])[-1][:120])
    return table



# --- Instructions per instrumented call (callgrind: deterministic, whatever the machine's load) -----------------


def _instructions_worker(sdk: str, config: str, kind: str, n: int) -> None:
    """`n` warm calls of one kind with one configuration on ("base": none), inside `operator.call`: the only
    region callgrind collects when run with `--collect-atstart=no --toggle-collect=_operator_call`."""
    import operator

    tracer_provider, Drop = _counting_provider()
    if config != "base":
        _sdk_switch(sdk, config, tracer_provider)(True)
    fn = _sdk_calls(sdk)[0 if kind == "plain" else 1]  # made after switching on: a client-wrapping peer sees it
    # Warm: imports, pydantic caches, the price table, and CPython's own warm-up (a function is
    # specialised after 8 runs: counted here, that one-off cost would be spread over the n calls).
    for _ in range(20):
        fn()
    if (Drop.count == 0) != (config == "base"):
        raise RuntimeError(f"{config} recorded {Drop.count} spans in warm-up")
    gc.collect()
    gc.freeze()

    def calls() -> None:
        for _ in range(n):
            fn()

    if os.environ.get("AGENTOTEL_CALLGRIND_INSTR_OFF"):
        # Started with --instr-atstart=no (imports run ~10x faster uninstrumented): instrumentation on now.
        subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True, capture_output=True, timeout=120)
    operator.call(calls)
    print(json.dumps({"spans": Drop.count}))


def instructions(sdks: tuple[str, ...] = ("genai", "bedrock"), n: int = 40, kinds: tuple[str, ...] = ("plain", "stream"),
                 configs: tuple[str, ...] | None = None) -> dict[str, dict[str, float]]:
    """{"<sdk> <kind>": {config: instructions added per call}}: each configuration's `n` calls counted by
    callgrind in their own process, minus the uninstrumented process's, divided by `n`."""
    import re
    import tempfile

    # AGENTOTEL_CALLGRIND_CACHE=1: callgrind also simulates the caches, and the worker prints each
    # configuration's estimated cycles added per call (instructions + 10 per L1 miss + 100 per
    # last-level miss) next to the instructions: what a call costs beyond its instruction count.
    cache = bool(os.environ.get("AGENTOTEL_CALLGRIND_CACHE"))
    cycles: dict[str, dict[str, tuple[int, int, int]]] = {}
    table: dict[str, dict[str, float]] = {}
    for sdk in sdks:
        for kind in kinds:
            row = table[f"{sdk} {kind}"] = {}
            cycles[f"{sdk} {kind}"] = {}
            for config in ["base", "agentotel", *SDK_PEERS[sdk]]:
                if configs is not None and config not in configs and config != "base":
                    continue
                paths = [str(ROOT), os.environ.get("PYTHONPATH")]
                if config in SDK_PEERS[sdk]:
                    if not (PEERS_DIR / config).is_dir():
                        continue
                    paths.insert(0, str(PEERS_DIR / config))
                env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths)), "PYTHONHASHSEED": "0", "AGENTOTEL_CALLGRIND_INSTR_OFF": "1",
                       "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY", "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                       "TRACELOOP_TRACE_CONTENT": "true", "AGENTOTEL_CAPTURE_CONTENT": "true"}  # fmt: skip
                with tempfile.TemporaryDirectory() as tmp:
                    out_file = Path(tmp) / "callgrind.out"
                    out = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no", "--toggle-collect=_operator_call",
                                          *(["--cache-sim=yes"] if cache else []),
                                          f"--callgrind-out-file={out_file}", sys.executable, "-m", "benchmarks.bench_providers",
                                          "--instructions-worker", sdk, config, kind, str(n)],
                                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=1800)  # fmt: skip
                    text = out_file.read_text() if out_file.exists() else ""
                    found = re.search(r"^summary:\s*(\d+)", text, re.M)
                    if cache and found is not None:
                        # The estimate callgrind_annotate's docs give: an L1 miss ~10 cycles, a last-level miss ~100.
                        events = re.search(r"^events:\s*(.+)$", text, re.M).group(1).split()
                        counts = dict(zip(events, map(int, re.search(r"^summary:\s*(.+)$", text, re.M).group(1).split())))
                        l1 = counts.get("I1mr", 0) + counts.get("D1mr", 0) + counts.get("D1mw", 0)
                        ll = counts.get("ILmr", 0) + counts.get("DLmr", 0) + counts.get("DLmw", 0)
                        cycles[f"{sdk} {kind}"][config] = (counts["Ir"] + 10 * l1 + 100 * ll, l1, ll)
                    if out.returncode != 0 or found is None:
                        row[config] = float("nan")
                        print(f"{sdk} {kind} {config}: failed: {(out.stderr.strip().splitlines() or ['?'])[-1][:200]}", file=sys.stderr)
                        continue
                    if os.environ.get("AGENTOTEL_CALLGRIND_KEEP"):
                        keep = Path(os.environ["AGENTOTEL_CALLGRIND_KEEP"]) / f"callgrind.{sdk}.{kind}.{config}.out"
                        keep.parent.mkdir(parents=True, exist_ok=True)
                        keep.write_bytes(out_file.read_bytes())
                    row[config] = int(found.group(1)) / n
            base = row.pop("base", None)
            for config in row:
                row[config] = row[config] - base if base is not None else float("nan")
            estimated = cycles[f"{sdk} {kind}"]
            if "base" in estimated:
                zero = estimated.pop("base")
                for config, (cost, l1, ll) in estimated.items():
                    print(f"{sdk} {kind} {config}: estimated cycles added per call {(cost - zero[0]) / n:.0f} "
                          f"(L1 misses {(l1 - zero[1]) / n:.0f}, last-level {(ll - zero[2]) / n:.0f})", file=sys.stderr, flush=True)  # fmt: skip
    return table


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--count-worker":
        print(json.dumps(_count_worker(sys.argv[2], sys.argv[3])))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--instructions-worker":
        _instructions_worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--instructions":
        # --instructions [sdk,...] [n] [config,...]: callgrind instructions added per call (AGENTOTEL_CALLGRIND_KEEP=DIR keeps the profiles)
        picked = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else ("genai", "bedrock")
        configs = tuple(sys.argv[4].split(",")) if len(sys.argv) > 4 else None
        for row, counts in instructions(picked, int(sys.argv[3]) if len(sys.argv) > 3 else 40, configs=configs).items():
            print(row, json.dumps({k: round(v) if v == v else None for k, v in counts.items()}), flush=True)
    elif len(sys.argv) >= 2 and sys.argv[1] == "--floor-worker":
        print(json.dumps(_floor_worker(None if sys.argv[3] == "-" else sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--floor":
        # --floor [processes] [rounds]: the google-genai plain call's overhead, agentotel against its parts' floor
        floor(processes=int(sys.argv[2]) if len(sys.argv) > 2 else 3, rounds=int(sys.argv[3]) if len(sys.argv) > 3 else 240)
    elif len(sys.argv) >= 2 and sys.argv[1] == "--count":
        for row, counts in count_calls().items():
            print(row, json.dumps(counts))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--sdk-worker":
        try:
            peer = None if sys.argv[3] == "-" else sys.argv[3]
            print(json.dumps(_sdk_worker(sys.argv[2], peer, int(sys.argv[4]), int(sys.argv[5]))))
        except Exception as exc:  # the parent reports why this configuration could not run
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
            sys.exit(1)
    elif len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        try:
            paired = len(sys.argv) < 6 or sys.argv[5] == "paired"
            print(json.dumps(_worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), paired)))
        except Exception as exc:  # the parent reports why this configuration could not run
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
            sys.exit(1)
    else:
        for row in run(quick="--quick" in sys.argv):
            print(json.dumps(row.to_dict()))
