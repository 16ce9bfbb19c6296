"""Records the spans beside this file (<name>.jsonl) of producers that cannot be installed beside the project's
packages: each runs producer.py's flow for it in a process of its own, with the producer's packages from a folder
installed there with `pip install --no-deps --target DIR ...` (their code runs beside the project's packages; their
declared requirements exclude them), and the spans go out as the OpenTelemetry Collector's file exporter writes
them (OTLP/JSON, one request a line). Each flow runs twice unless said: the tool working, then failing and the
model answering past its error.

    python tests/dialects/recorded/record.py NAME DIR

openlit (openlit 1.45: openai < 3, anthropic < 1): its LangChain instrumentation around producer.py's LangChain flow,
in a root span each; DIR from `pip install --no-deps --target DIR openlit==1.45.0 schedule xmltodict`.

strands, strands-latest (strands-agents 1.62: openai < 3, mcp < 2.2): its agent through its OpenAI model provider, in
its default conventions and with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental; DIR from
`... strands-agents==1.62.0 aws-bedrock-token-generator watchdog opentelemetry-instrumentation-threading==0.66b1`.

litellm (litellm 1.110: boto3 >= 1.43.117, past aiobotocore's pin): its OpenTelemetry callback around two
litellm.completion calls, in the app's root span, USE_OTEL_LITELLM_REQUEST_SPAN set (as agentotel.instrument()
sets it); DIR from `... litellm==1.110.2 "importlib_metadata<9" lazy_importer zipp tokenizers huggingface_hub
fastuuid filelock fsspec tqdm h2 hpack hyperframe hf-xet`.

llama-index (llama-index-llms-openai 0.8: openai < 3): OpenInference's LlamaIndex instrumentation around a retriever
and a FunctionAgent, in the app's root span; DIR from `... llama-index-core==0.14.25 llama-index-llms-openai==0.8.3
openinference-instrumentation-llama-index==4.6.1 llama-index-workflows==2.26.1 llama-index-instrumentation==0.6.0
banks dirtyjson filetype dataclasses-json marshmallow griffe griffecli deprecated nest-asyncio tinytag "SQLAlchemy>=2"
aiosqlite nltk joblib fsspec tqdm typing-inspect mypy-extensions pillow`.

semantic-kernel (semantic-kernel 1.45: mcp < 2, and Azure's and WebRTC's packages): its ChatCompletionAgent with its
GenAI diagnostics on; DIR from `... semantic-kernel==1.45.0 defusedxml pybars4 PyMeta3 nest_asyncio aiortc av pyee
pylibsrtp "pyOpenSSL==25.1.0" aioice ifaddr dnspython azure-core azure-identity msal msal-extensions PyJWT`.

crewai (crewai 1.15: chromadb, lancedb, kubernetes' client and more): OpenInference's CrewAI and OpenAI
instrumentations around a crew of one agent and one task; DIR from `... crewai==1.15.30 crewai-core==1.15.30
openinference-instrumentation-crewai==1.1.21 appdirs jsonref portalocker json_repair chromadb overrides pybase64
aiofiles aiosqlite tomli json5`.

adk-latest, adk-v1 (google-adk 2.13: Google Cloud's client libraries, well over 100 MB): an LlmAgent (Gemini through
google-genai) and its InMemoryRunner, with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (the messages on
the spans; by default 2.x writes them as log records only) and with ADK's 1.x span schema
(ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1); DIR from `... google-adk==2.13.0 fastapi annotated_doc`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent.parent
TWICE = {"failures": [False, True]}
IN_A_ROOT = {"root_span": "weather-job", "root_attributes": {"user.id": "bob", "session.id": "sess-7"}}

# name -> producer.py's options, and the environment beside them
RECORDINGS: dict[str, tuple[dict, dict]] = {
    "openlit": ({"instrumentations": ["openlit-langchain"], "flow": "langchain", **IN_A_ROOT, **TWICE}, {}),
    "strands": ({"flow": "strands", **TWICE}, {}),
    "strands-latest": ({"flow": "strands", "semconv": "gen_ai_latest_experimental", **TWICE}, {}),
    "litellm": ({"flow": "litellm", **IN_A_ROOT, **TWICE},
                {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "USE_OTEL_LITELLM_REQUEST_SPAN": "true"}),
    "llama-index": ({"instrumentations": ["openinference-llama-index"], "flow": "llama-index", "retrieve": True,
                     "root_span": "weather-job", **TWICE}, {}),
    "semantic-kernel": ({"flow": "semantic-kernel", **TWICE}, {}),
    "crewai": ({"instrumentations": ["openinference-crewai", "openinference-openai"], "flow": "crewai", **TWICE},
               {"CREWAI_DISABLE_TELEMETRY": "true", "CREWAI_TRACING_ENABLED": "false"}),
    "adk-latest": ({"flow": "adk", "semconv": "gen_ai_latest_experimental", **TWICE}, {}),
    "adk-v1": ({"flow": "adk", **TWICE}, {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"}),
}
TARGETS = {"openlit": "openlit-langchain"}  # the file a recording is kept in, when not <name>.jsonl


def main(name: str, packages: str) -> None:
    options, env = RECORDINGS[name]
    with tempfile.TemporaryDirectory() as scratch:
        if name == "openlit":
            prices = Path(scratch, "prices.json")
            prices.write_text("{}")  # OpenLIT fetches its price list from the network otherwise
            env = {**env, "OPENLIT_PRICING_JSON": str(prices)}
        options = {"store": scratch, "instrumentations": [], **options, "otlp_files": str(Path(scratch, "spans"))}
        env = {**os.environ, **env, "PYTHONPATH": f"{ROOT}:{packages}", "OTEL_BSP_SCHEDULE_DELAY": "600000"}
        subprocess.run([sys.executable, str(HERE.parent / "producer.py"), json.dumps(options)], env=env, check=True)
        (HERE / f"{TARGETS.get(name, name)}.jsonl").write_text(Path(scratch, "spans.jsonl").read_text())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
