"""Records crewai.jsonl beside this file: the spans OpenInference's CrewAI and OpenAI instrumentations emit for
producer.py's crewai flow (crewai 1.15: a crew of one agent and one task around a tool, CrewAI's OpenAI LLM), twice
(the tool working, then raising and CrewAI handing the model its error).

CrewAI is not in the dev extra: crewai 1.15 pulls chromadb, lancedb, kubernetes' client and more (hundreds of MB)
and moves click and httpx. Its code runs beside the project's packages, so it is recorded once here (the loop
installs what `import crewai` asks for, one missing module at a time):

    pip install --no-deps --target /tmp/crew crewai==1.15.30 crewai-core==1.15.30 \
        openinference-instrumentation-crewai==1.1.21 appdirs jsonref portalocker json_repair chromadb overrides \
        pybase64 aiofiles aiosqlite tomli json5
    python tests/dialects/recorded/record_crewai.py /tmp/crew

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


def main(crew_dir: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        options = {"store": scratch, "instrumentations": ["openinference-crewai", "openinference-openai"],
                   "flow": "crewai", "failures": [False, True], "otlp_files": str(Path(scratch, "crewai"))}
        env = {**os.environ, "PYTHONPATH": f"{ROOT}:{crew_dir}", "OTEL_BSP_SCHEDULE_DELAY": "600000",
               "CREWAI_DISABLE_TELEMETRY": "true", "CREWAI_TRACING_ENABLED": "false"}
        subprocess.run([sys.executable, str(HERE.parent / "producer.py"), json.dumps(options)], env=env, check=True)
        (HERE / "crewai.jsonl").write_text(Path(scratch, "crewai.jsonl").read_text())


if __name__ == "__main__":
    main(sys.argv[1])
