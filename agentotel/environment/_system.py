"""Facts about the machine, the process and who started the run — read from the OS and `os.environ`.

The environment variables read here are the subject being recorded (CI facts, credential NAMES, an
image name), not agentotel settings; those are read in `_config` only.
"""

from __future__ import annotations

import functools
import getpass
import os
import platform
import re
import sys
from typing import Any, Mapping

from agentotel.environment._files import canonical_name

# Environment variables that name the image or sandbox a process runs in, when a platform sets one.
_IMAGE_VARS = ("CONTAINER_IMAGE", "IMAGE_DIGEST", "IMAGE_NAME", "DOCKER_IMAGE", "MODAL_IMAGE_ID")
_SANDBOX_VARS = ("E2B_SANDBOX_ID", "MODAL_TASK_ID", "CODESPACE_NAME", "CONTAINER_NAME", "DAYTONA_WS_ID")
_HEX_ID = re.compile(r"(?<![0-9a-f])([0-9a-f]{64}|[0-9a-f]{32})(?![0-9a-f])")


def _os_release() -> dict[str, str]:
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        out = {}
        for line in lines:
            key, sep, value = line.partition("=")
            if sep:
                out[key.strip()] = value.strip().strip('"')
        return out
    return {}


def _container_id() -> str | None:
    """A container id from /proc/self/cgroup (cgroup v1, or a named v2 path), else /proc/self/mountinfo."""
    for path in ("/proc/self/cgroup", "/proc/self/mountinfo"):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 20)
        except OSError:
            continue
        for line in text.splitlines():
            if path.endswith("mountinfo") and "/containers/" not in line and "/docker/" not in line:
                continue  # in mountinfo only container runtimes' own paths name the container
            m = _HEX_ID.search(line)
            if m:
                return m.group(1)[:12] if len(m.group(1)) == 64 else m.group(1)
    return None


@functools.cache
def machine() -> dict[str, Any]:
    """OS, kernel, architecture, Python and container facts: fixed for the life of the process."""
    uname = platform.uname()
    release = _os_release()
    os_id, os_version = release.get("ID"), release.get("VERSION_ID")
    if os_id:
        image = f"{os_id} {os_version}" if os_version else os_id
    elif uname.system == "Darwin":
        image = f"macos {platform.mac_ver()[0]}"
    elif uname.system == "Windows":
        image = f"windows {platform.version()}"
    else:
        image = uname.system.lower()
    facts: dict[str, Any] = {
        "os": {"name": uname.system, "kernel": uname.release, "arch": uname.machine, "image": image},
        "python": {
            "implementation": platform.python_implementation(),
            "version": platform.python_version(),
            "executable": sys.executable,
            "prefix": sys.prefix,
            "virtualenv": sys.prefix != sys.base_prefix,
        },
        "host": {"hostname": uname.node},
    }
    if os_id:
        facts["os"]["id"] = os_id
    if os_version:
        facts["os"]["version"] = os_version
    container = _container_id()
    if container:
        facts["host"]["container_id"] = container
    return facts


def image_and_sandbox(environ: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _IMAGE_VARS:
        if environ.get(name):
            out["image"] = environ[name]
            break
    for name in _SANDBOX_VARS:
        if environ.get(name):
            out["sandbox"] = environ[name]
            break
    if environ.get("KUBERNETES_SERVICE_HOST"):
        out["kubernetes"] = True
    return out


# --- credentials in scope: names only ----------------------------------------------------------------

_CREDENTIAL_WORDS = frozenset({
    "KEY", "APIKEY", "TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
    "CREDENTIALS", "PAT", "PRIVATEKEY", "AUTHTOKEN",
})  # fmt: skip
_WELL_KNOWN = frozenset({
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN", "GH_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "COHERE_API_KEY", "MISTRAL_API_KEY",
    "GROQ_API_KEY", "TOGETHER_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY",
    "DATABASE_URL", "SENTRY_DSN", "NPM_TOKEN", "PYPI_TOKEN", "TWINE_PASSWORD", "SLACK_BOT_TOKEN",
})  # fmt: skip


@functools.lru_cache(maxsize=4096)
def looks_like_credential(name: str) -> bool:
    if name in _WELL_KNOWN:
        return True
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name.upper()) if w]
    return any(w in _CREDENTIAL_WORDS for w in words)


def credentials(environ: Mapping[str, str], declared: tuple[str, ...]) -> dict[str, Any]:
    """The NAMES of credential-like variables set (non-empty), and the names the user declared."""
    found = sorted(n for n, v in environ.items() if v and looks_like_credential(n))
    out: dict[str, Any] = {"env": found}
    if declared:
        out["declared"] = sorted(set(declared))
    return out


# --- who started it -------------------------------------------------------------------------------------

# provider -> (detect var, {fact: var, ...}) for the CI services agents most often run in.
_CI = (
    ("github-actions", "GITHUB_ACTIONS", {"workflow": "GITHUB_WORKFLOW", "job": "GITHUB_JOB", "run": "GITHUB_RUN_ID",
                                          "actor": "GITHUB_ACTOR", "commit": "GITHUB_SHA", "ref": "GITHUB_REF",
                                          "repository": "GITHUB_REPOSITORY", "event": "GITHUB_EVENT_NAME"}),
    ("gitlab-ci", "GITLAB_CI", {"workflow": "CI_PIPELINE_ID", "job": "CI_JOB_NAME", "run": "CI_JOB_ID",
                                "actor": "GITLAB_USER_LOGIN", "commit": "CI_COMMIT_SHA", "ref": "CI_COMMIT_REF_NAME",
                                "repository": "CI_PROJECT_PATH", "event": "CI_PIPELINE_SOURCE"}),
    ("buildkite", "BUILDKITE", {"workflow": "BUILDKITE_PIPELINE_SLUG", "job": "BUILDKITE_LABEL",
                                "run": "BUILDKITE_BUILD_NUMBER", "actor": "BUILDKITE_BUILD_CREATOR",
                                "commit": "BUILDKITE_COMMIT", "ref": "BUILDKITE_BRANCH"}),
    ("circleci", "CIRCLECI", {"workflow": "CIRCLE_WORKFLOW_ID", "job": "CIRCLE_JOB", "run": "CIRCLE_BUILD_NUM",
                              "actor": "CIRCLE_USERNAME", "commit": "CIRCLE_SHA1", "ref": "CIRCLE_BRANCH"}),
    ("azure-pipelines", "TF_BUILD", {"workflow": "BUILD_DEFINITIONNAME", "job": "SYSTEM_JOBNAME",
                                     "run": "BUILD_BUILDID", "actor": "BUILD_REQUESTEDFOR",
                                     "commit": "BUILD_SOURCEVERSION", "ref": "BUILD_SOURCEBRANCH"}),
    ("jenkins", "JENKINS_URL", {"workflow": "JOB_NAME", "run": "BUILD_NUMBER", "actor": "BUILD_USER_ID",
                                "commit": "GIT_COMMIT", "ref": "GIT_BRANCH"}),
)  # fmt: skip


def ci(environ: Mapping[str, str]) -> dict[str, Any] | None:
    for provider, detect, facts in _CI:
        if environ.get(detect):
            out = {"provider": provider}
            out.update({fact: environ[var] for fact, var in facts.items() if environ.get(var)})
            return out
    if environ.get("CI", "").lower() in {"true", "1", "yes"}:
        return {"provider": "unknown"}
    return None


def os_user() -> str | None:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry in some containers
        return str(os.getuid()) if hasattr(os, "getuid") else None


# --- agent client and SDK versions -----------------------------------------------------------------------

SDKS = ("openai", "anthropic", "google-genai", "botocore")  # the client libraries providers/ patches


def client_versions(packages: Mapping[str, str]) -> dict[str, Any]:
    from agentotel import __version__

    out: dict[str, Any] = {"agentotel": __version__}
    sdks = {name: packages[canonical_name(name)] for name in SDKS if canonical_name(name) in packages}
    if sdks:
        out["sdks"] = sdks
    return out
