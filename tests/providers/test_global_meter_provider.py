"""Model-call metrics follow the global MeterProvider, also one set after the first call.

agentotel reads the metrics API's global provider directly (the API's getter consults os.environ on
every call while none is set); these run in a fresh interpreter because the global can be set once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
    import httpx2, openai
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider

    from agentotel.providers import instrument_providers
    from agentotel.semconv import METRIC_GEN_AI_CLIENT_OPERATION_DURATION
    from benchmarks.bench_providers import MESSAGES, _transport

    trace.set_tracer_provider(TracerProvider())
    instrument_providers()
    client = openai.OpenAI(api_key="k", http_client=httpx2.Client(transport=_transport()))
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # no provider yet: not counted
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    counts = [
        point.count
        for resource in reader.get_metrics_data().resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == METRIC_GEN_AI_CLIENT_OPERATION_DURATION
        for point in metric.data.data_points
    ]
    print(sum(counts))
"""


def _run(script: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTOTEL_"))}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_global_meter_provider_set_after_the_first_call_receives_the_next_calls():
    assert _run(_SCRIPT) == "2"
