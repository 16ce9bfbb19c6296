"""Records llama-index.jsonl beside this file: the spans OpenInference's LlamaIndex instrumentation (4.6) emits for
producer.py's llama-index flow (llama-index-core 0.14: a retriever, then a FunctionAgent around a function tool),
twice, in the app's root span each (the tool working, then raising and the agent handing the model its error).

LlamaIndex is not in the dev extra: llama-index-llms-openai 0.8 requires openai < 3, which the project's tests
(openai 3.x) exclude. Its code runs against openai 3.x all the same, so it is recorded once here:

    pip install --no-deps --target /tmp/llama llama-index-core==0.14.25 llama-index-llms-openai==0.8.3 \
        openinference-instrumentation-llama-index==4.6.1 llama-index-workflows==2.26.1 \
        llama-index-instrumentation==0.6.0 banks dirtyjson filetype dataclasses-json marshmallow griffe griffecli \
        deprecated nest-asyncio tinytag "SQLAlchemy>=2" aiosqlite nltk joblib fsspec tqdm typing-inspect \
        mypy-extensions pillow
    python tests/dialects/recorded/record_llama_index.py /tmp/llama

The spans go out as the OpenTelemetry Collector's file exporter writes them (OTLP/JSON, one request a line).
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


def main(llama_dir: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        options = {"store": scratch, "instrumentations": ["openinference-llama-index"], "flow": "llama-index",
                   "retrieve": True, "failures": [False, True], "root_span": "weather-job",
                   "otlp_files": str(Path(scratch, "llama-index"))}
        env = {**os.environ, "PYTHONPATH": f"{ROOT}:{llama_dir}", "OTEL_BSP_SCHEDULE_DELAY": "600000"}
        subprocess.run([sys.executable, str(HERE.parent / "producer.py"), json.dumps(options)], env=env, check=True)
        (HERE / "llama-index.jsonl").write_text(Path(scratch, "llama-index.jsonl").read_text())


if __name__ == "__main__":
    main(sys.argv[1])
