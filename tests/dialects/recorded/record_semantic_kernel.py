"""Records semantic-kernel.jsonl beside this file: the spans Semantic Kernel (1.45) writes with its GenAI
diagnostics on (sensitive too) for producer.py's semantic-kernel flow: a ChatCompletionAgent (its OpenAI connector)
around a kernel function, twice (the function working, then raising and the kernel handing the model its error).

Semantic Kernel is not in the dev extra: semantic-kernel 1.45 requires mcp < 2, which the project's tests (mcp 2.3)
exclude, and pulls Azure's and WebRTC's packages. Its code runs beside the project's packages all the same, so it
is recorded once here (the loop installs what its OpenAI connector imports, one missing module at a time):

    pip install --no-deps --target /tmp/sk semantic-kernel==1.45.0 defusedxml pybars4 PyMeta3 nest_asyncio \
        aiortc av pyee pylibsrtp "pyOpenSSL==25.1.0" aioice ifaddr dnspython azure-core azure-identity msal \
        msal-extensions PyJWT
    python tests/dialects/recorded/record_semantic_kernel.py /tmp/sk

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


def main(sk_dir: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        options = {"store": scratch, "instrumentations": [], "flow": "semantic-kernel", "failures": [False, True],
                   "otlp_files": str(Path(scratch, "semantic-kernel"))}
        env = {**os.environ, "PYTHONPATH": f"{ROOT}:{sk_dir}", "OTEL_BSP_SCHEDULE_DELAY": "600000"}
        subprocess.run([sys.executable, str(HERE.parent / "producer.py"), json.dumps(options)], env=env, check=True)
        (HERE / "semantic-kernel.jsonl").write_text(Path(scratch, "semantic-kernel.jsonl").read_text())


if __name__ == "__main__":
    main(sys.argv[1])
