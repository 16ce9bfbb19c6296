"""A real S3 API on 127.0.0.1 for the object-storage tests: moto's server in a process of its own.

`python tests/s3_server.py` serves until killed and prints its port first. The `s3` fixture starts one
per test session and gives each test a fresh bucket, with the standard AWS variables pointing at it
(so agentotel, pyarrow and boto3 find it exactly as they would find AWS).

moto 5.2 names the CompleteMultipartUpload answer's root element `...Response` where S3 says `...Result`;
the AWS C++ SDK inside pyarrow then takes every multipart upload (files over ~5 MB) for a failure. The
server renames it, so large files go through the same multipart path as on AWS.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from typing import Iterator

import pytest


def _app():
    from moto.server import DomainDispatcherApplication, create_backend_app

    app = DomainDispatcherApplication(create_backend_app)

    def fixed(environ, start_response):
        answer = {}

        def capture(status, headers, exc_info=None):
            answer["status"], answer["headers"] = status, headers

        body = b"".join(app(environ, capture))
        headers = answer["headers"]
        if b"CompleteMultipartUploadResponse" in body:
            body = body.replace(b"CompleteMultipartUploadResponse", b"CompleteMultipartUploadResult")
            headers = [(k, str(len(body)) if k.lower() == "content-length" else v) for k, v in headers]
        start_response(answer["status"], headers)
        return [body]

    return fixed


def main() -> None:
    import logging

    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0, _app(), threaded=True)
    print(server.server_port, flush=True)
    server.serve_forever()


def aws_environment(port: int) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",  # never look for instance credentials
    }


@pytest.fixture(scope="session")
def s3_server() -> Iterator[int]:
    """The port of a moto S3 server process, for the whole session."""
    process = subprocess.Popen([sys.executable, __file__], stdout=subprocess.PIPE, text=True)
    try:
        port = int(process.stdout.readline())
        yield port
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def s3(s3_server: int, monkeypatch: pytest.MonkeyPatch, tmp_path) -> str:
    """`s3://<fresh bucket>/store`, with AWS_* variables (and a private cache folder) set for this test."""
    import boto3

    for name, value in aws_environment(s3_server).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from agentotel import _config

    monkeypatch.setattr(_config, "_current", None)  # settings an earlier test installed are not this test's
    bucket = f"agentotel-{uuid.uuid4().hex[:12]}"
    boto3.client("s3").create_bucket(Bucket=bucket)
    return f"s3://{bucket}/store"


if __name__ == "__main__":
    main()
