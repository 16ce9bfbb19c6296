"""Records openlit-langchain.jsonl beside this file: the spans the real OpenLIT emits for producer.py's LangChain
flow (twice, in a root span each: the tool working, then failing and the model answering past its error).

OpenLIT is not in the dev extra: openlit 1.45 requires openai < 3 and anthropic < 1, which the project's tests
(openai 3.x, anthropic 2.x) exclude. Its code runs against openai 3.x all the same, so it is recorded once here:

    pip install --no-deps --target /tmp/openlit openlit==1.45.0 schedule xmltodict
    python tests/dialects/recorded/record_openlit.py /tmp/openlit

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


def main(openlit_dir: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        prices = Path(scratch, "prices.json")
        prices.write_text("{}")  # OpenLIT fetches its price list from the network otherwise
        options = {"store": scratch, "instrumentations": ["openlit-langchain"], "flow": "langchain",
                   "root_span": "weather-job", "root_attributes": {"user.id": "bob", "session.id": "sess-7"},
                   "failures": [False, True], "otlp_files": str(Path(scratch, "openlit"))}
        env = {**os.environ, "PYTHONPATH": f"{ROOT}:{openlit_dir}", "OPENLIT_PRICING_JSON": str(prices),
               "OTEL_BSP_SCHEDULE_DELAY": "600000"}
        subprocess.run([sys.executable, str(HERE.parent / "producer.py"), json.dumps(options)], env=env, check=True)
        (HERE / "openlit-langchain.jsonl").write_text(Path(scratch, "openlit.jsonl").read_text())


if __name__ == "__main__":
    main(sys.argv[1])
