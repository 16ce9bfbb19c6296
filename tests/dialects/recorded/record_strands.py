"""Records strands.jsonl and strands-latest.jsonl beside this file: the spans the real Strands Agents (1.62) emits
for producer.py's strands flow, twice (the tool working, then raising and the model answering past its error), in
its default conventions and with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental.

Strands is not in the dev extra: strands-agents 1.62 requires openai < 3 and mcp < 2.2, which the project's tests
(openai 3.x, mcp 2.3) exclude. Its code runs against openai 3.x all the same, so it is recorded once here:

    pip install --no-deps --target /tmp/strands strands-agents==1.62.0 aws-bedrock-token-generator watchdog \
        opentelemetry-instrumentation-threading==0.66b1
    python tests/dialects/recorded/record_strands.py /tmp/strands

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


def main(strands_dir: str) -> None:
    for target, semconv in (("strands", None), ("strands-latest", "gen_ai_latest_experimental")):
        with tempfile.TemporaryDirectory() as scratch:
            options = {"store": scratch, "instrumentations": [], "flow": "strands", "failures": [False, True],
                       "otlp_files": str(Path(scratch, "strands")), "semconv": semconv}
            env = {**os.environ, "PYTHONPATH": f"{ROOT}:{strands_dir}", "OTEL_BSP_SCHEDULE_DELAY": "600000"}
            subprocess.run([sys.executable, str(HERE.parent / "producer.py"), json.dumps(options)], env=env, check=True)
            (HERE / f"{target}.jsonl").write_text(Path(scratch, "strands.jsonl").read_text())


if __name__ == "__main__":
    main(sys.argv[1])
