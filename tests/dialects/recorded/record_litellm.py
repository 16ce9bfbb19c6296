"""Records litellm.jsonl beside this file: the spans LiteLLM's OpenTelemetry callback (litellm 1.110) writes for
producer.py's litellm flow, twice, each in the app's root span (the tool working, then failing and the model
answering past its error).

LiteLLM is not in the dev extra: litellm 1.110 requires boto3 >= 1.43.117, past what the project's aiobotocore
allows. Its code runs beside the project's packages all the same, so it is recorded once here:

    pip install --no-deps --target /tmp/litellm litellm==1.110.2 "importlib_metadata<9" lazy_importer zipp \
        tokenizers huggingface_hub fastuuid filelock fsspec tqdm h2 hpack hyperframe hf-xet
    python tests/dialects/recorded/record_litellm.py /tmp/litellm

Under a parent span LiteLLM writes each call's attributes onto that parent (the last call's win) unless
USE_OTEL_LITELLM_REQUEST_SPAN is set: with it, a litellm_request span a call, as here.
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


def main(litellm_dir: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        options = {"store": scratch, "instrumentations": [], "flow": "litellm", "failures": [False, True],
                   "root_span": "weather-job", "root_attributes": {"user.id": "bob", "session.id": "sess-7"},
                   "otlp_files": str(Path(scratch, "litellm"))}
        env = {**os.environ, "PYTHONPATH": f"{ROOT}:{litellm_dir}", "OTEL_BSP_SCHEDULE_DELAY": "600000",
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "USE_OTEL_LITELLM_REQUEST_SPAN": "true"}
        subprocess.run([sys.executable, str(HERE.parent / "producer.py"), json.dumps(options)], env=env, check=True)
        (HERE / "litellm.jsonl").write_text(Path(scratch, "litellm.jsonl").read_text())


if __name__ == "__main__":
    main(sys.argv[1])
