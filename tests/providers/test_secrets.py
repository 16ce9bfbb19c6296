"""Secrets never reach a span: ≥ 60 realistic (fake, generated) credentials of the secret-scanning rule
families, each placed in a tool's arguments, a tool's result and a model call's messages; and ordinary
agent texts that look a little like them stay as they are.

The secrets are generated at a fixed seed in the shape their issuers use (no real credential lives in
the repository). A leak is the secret, or its last 12 characters, anywhere in a recorded attribute.
"""

from __future__ import annotations

import base64
import json
import random
import string
import time
import uuid

import openai
import pytest

import agentotel
from agentotel.content import redact_text
from tests.providers.conftest import Scripted

_rng = random.Random(20)
LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"


def pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64(n: int) -> str:
    return base64.b64encode(bytes(_rng.randrange(256) for _ in range(n))).decode()


def jwt() -> str:
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': pick(DIGITS, 8), 'iat': 1700000000})}.{pick(ALNUM + '-_', 43)}"


def pem(kind: str) -> str:
    body = "\n".join(b64(48) for _ in range(6))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


def aws_secret() -> str:
    while True:
        value = pick(ALNUM + "/+", 40)
        if any(c.isdigit() for c in value) and any(c.islower() for c in value) and any(c.isupper() for c in value):
            return value


# (family, the text an agent would see, the secret itself). Texts are prose or the form the credential
# is usually pasted in (a connection string, a URL, an env line), never a bare `token=` that the
# key=value rule alone would catch, unless that form is what the family looks like in the wild.
def _cases() -> list[tuple[str, str, str]]:
    c: list[tuple[str, str, str]] = []

    def add(family: str, template: str, secret: str) -> None:
        c.append((family, template.format(s=secret), secret))

    # AI providers
    add("openai", "I set the key to {s} in the notebook", "sk-proj-" + pick(ALNUM + "-_", 48))
    add("openai-legacy", "old key {s} still works?", "sk-" + pick(ALNUM, 48))
    add("anthropic", "Anthropic: {s}", "sk-ant-api03-" + pick(ALNUM + "-_", 93) + "AA")
    add("groq", "use {s} for the fast model", "gsk_" + pick(ALNUM, 52))
    add("replicate", "replicate said {s}", "r8_" + pick(ALNUM, 37))
    add("perplexity", "the search key is {s}", "pplx-" + pick(ALNUM, 48))
    add("xai", "grok via {s}", "xai-" + pick(ALNUM, 80))
    add("huggingface", "pull the weights with {s}", "hf_" + pick(ALNUM, 34))
    # cloud providers
    add("aws-id", "the access key id {s} belongs to ci", "AKIA" + pick(UPPER + DIGITS, 16))
    add("aws-secret-prose", "and the aws secret is {s} (rotate it)", aws_secret())
    add("aws-secret-env", "AWS_SECRET_ACCESS_KEY={s}", aws_secret())
    add("aws-secret-json", '{{"AccessKeyId": "ASIA' + pick(UPPER + DIGITS, 16) + '", "SecretAccessKey": "{s}"}}', aws_secret())
    add("azure-storage", "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={s};EndpointSuffix=core.windows.net", b64(64))
    add("azure-servicebus", "Endpoint=sb://orders.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={s}", b64(32))
    add("azure-sas", "download https://prodlogs.blob.core.windows.net/c/x.csv?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig={s}",
        pick(ALNUM, 40) + "%2B" + pick(ALNUM, 6) + "%3D")
    add("azure-ad", "client secret {s}", pick(ALNUM, 3) + "8Q~" + pick(ALNUM + "_.-", 34))
    add("gcp-api", "maps key {s}", "AIza" + pick(ALNUM + "_-", 35))
    add("gcp-oauth-secret", "oauth client secret {s}", "GOCSPX-" + pick(ALNUM + "_-", 28))
    add("gcp-access-token", "gcloud printed {s}", "ya29." + pick(ALNUM + "_-", 120))
    add("gcp-service-account", '{{"type": "service_account", "private_key": "{s}"}}', pem("PRIVATE KEY").replace("\n", "\\n"))
    add("alibaba", "aliyun id {s}", "LTAI" + pick(ALNUM, 20))
    add("digitalocean", "doctl auth init -t {s}", "dop_v1_" + pick(HEX, 64))
    add("digitalocean-oauth", "refresh with {s}", "doo_v1_" + pick(HEX, 64))
    add("heroku", "heroku auth token {s}", str(uuid.UUID(int=_rng.getrandbits(128))))
    add("heroku-new", "new heroku key {s}", "HRKU-" + pick(ALNUM + "_-", 60))
    add("shopify", "the store admin token is {s}", "shpat_" + pick(HEX, 32))
    add("shopify-secret", "app secret {s}", "shpss_" + pick(HEX, 32))
    add("databricks", "workspace pat {s}", "dapi" + pick(HEX, 32))
    add("vault", "VAULT says {s}", "hvs." + pick(ALNUM + "_-", 90))
    add("terraform", "tfc {s}", pick(ALNUM, 14) + ".atlasv1." + pick(ALNUM, 67))
    add("pulumi", "pulumi login with {s}", "pul-" + pick(HEX, 40))
    add("doppler", "doppler {s}", "dp.st.prd." + pick(ALNUM, 43))
    add("supabase", "supabase {s}", "sbp_" + pick(HEX, 40))
    add("grafana", "grafana sa {s}", "glsa_" + pick(ALNUM, 32) + "_" + pick(HEX, 8))
    add("newrelic", "NR key {s}", "NRAK-" + pick(UPPER + DIGITS, 27))
    add("sentry", "sentry auth {s}", "sntrys_" + b64(60).rstrip("="))
    # version control, CI, package registries
    add("github", "gh auth login --with-token {s}", "ghp_" + pick(ALNUM, 36))
    add("github-fine", "fine-grained {s}", "github_pat_" + pick(ALNUM, 22) + "_" + pick(ALNUM, 59))
    add("github-app", "installation token {s}", "ghs_" + pick(ALNUM, 36))
    add("gitlab", "clone with {s}", "glpat-" + pick(ALNUM + "_-", 20))
    add("gitlab-runner", "runner {s}", "glrt-" + pick(ALNUM + "_-", 20))
    add("bitbucket", "app password {s}", "ATBB" + pick(ALNUM, 32))
    add("npm", "//registry.npmjs.org/:_authToken={s}", "npm_" + pick(ALNUM, 36))
    add("npm-prose", "publish with {s}", "npm_" + pick(ALNUM, 36))
    add("pypi", "twine upload -p {s}", "pypi-AgEIcHlwaS5vcmc" + pick(ALNUM + "_-", 70))
    add("rubygems", "gem key {s}", "rubygems_" + pick(HEX, 48))
    add("nuget", "nuget push -k {s}", "oy2" + pick(LOWER + DIGITS, 43))
    add("dockerhub", "docker login -p {s}", "dckr_pat_" + pick(ALNUM + "_-", 27))
    add("postman", "postman {s}", "PMAK-" + pick(HEX, 24) + "-" + pick(HEX, 34))
    # chat, webhooks, bots
    add("slack-bot", "bot token {s}", "xoxb-" + pick(DIGITS, 12) + "-" + pick(DIGITS, 13) + "-" + pick(ALNUM, 24))
    add("slack-user", "user token {s}", "xoxp-" + pick(DIGITS, 12) + "-" + pick(DIGITS, 12) + "-" + pick(DIGITS, 13) + "-" + pick(HEX, 32))
    add("slack-webhook", "post the summary to {s}",
        "https://hooks.slack.com/services/T" + pick(UPPER + DIGITS, 8) + "/B" + pick(UPPER + DIGITS, 10) + "/" + pick(ALNUM, 24))
    add("discord-webhook", "alerts go to {s}", "https://discord.com/api/webhooks/" + pick(DIGITS, 18) + "/" + pick(ALNUM + "_-", 68))
    add("discord-bot", "the bot logs in with {s}", "M" + pick(ALNUM, 25) + "." + pick(ALNUM + "_-", 6) + "." + pick(ALNUM + "_-", 38))
    add("telegram-bot", "BotFather gave me {s}", pick(DIGITS, 10) + ":AA" + pick(ALNUM + "_-", 33))
    add("teams-webhook", "teams: {s}", "https://acme.webhook.office.com/webhookb2/" + str(uuid.UUID(int=_rng.getrandbits(128))) + "@" + str(uuid.UUID(int=_rng.getrandbits(128))) + "/IncomingWebhook/" + pick(HEX, 32))
    # e-mail and SMS
    add("sendgrid", "mail via {s}", "SG." + pick(ALNUM + "_-", 22) + "." + pick(ALNUM + "_-", 43))
    add("twilio", "twilio api key {s}", "SK" + pick(HEX, 32))
    add("mailgun", "mailgun {s}", "key-" + pick(HEX, 32))
    add("mailgun-new", "the sending key {s}", pick(HEX, 32) + "-" + pick(HEX, 8) + "-" + pick(HEX, 8))
    add("mailchimp", "audience sync uses {s}", pick(HEX, 32) + "-us" + str(_rng.randint(1, 21)))
    add("brevo", "brevo {s}", "xkeysib-" + pick(HEX, 64) + "-" + pick(ALNUM, 16))
    # payments
    add("stripe", "charge with {s}", "sk_live_" + pick(ALNUM, 99))
    add("stripe-restricted", "restricted {s}", "rk_live_" + pick(ALNUM, 99))
    add("stripe-webhook", "verify with {s}", "whsec_" + pick(ALNUM, 32))
    add("square", "square {s}", "sq0atp-" + pick(ALNUM + "_-", 22))
    add("braintree", "braintree {s}", "access_token$production$" + pick(LOWER + DIGITS, 16) + "$" + pick(HEX, 32))
    add("flutterwave", "flw {s}", "FLWSECK-" + pick(ALNUM, 32) + "-X")
    # SaaS
    add("linear", "linear {s}", "lin_api_" + pick(ALNUM, 40))
    add("notion", "notion {s}", "ntn_" + pick(DIGITS, 11) + pick(ALNUM, 35))
    add("airtable", "airtable {s}", "pat" + pick(ALNUM, 14) + "." + pick(HEX, 64))
    add("atlassian", "jira {s}", "ATATT3" + pick(ALNUM + "_-", 180))
    # private keys, JWTs, URLs with credentials, assignments
    add("rsa-key", "the deploy key:\n{s}", pem("RSA PRIVATE KEY"))
    add("openssh-key", "{s}", pem("OPENSSH PRIVATE KEY"))
    add("ec-key", "ec: {s}", pem("EC PRIVATE KEY"))
    add("pgp-key", "{s}", pem("PGP PRIVATE KEY BLOCK"))
    add("age", "age key {s}", "AGE-SECRET-KEY-1" + pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))
    add("jwt", "session {s}", jwt())
    add("bearer", "curl -H 'Authorization: Bearer {s}' https://api.example.com", pick(ALNUM, 40))
    add("postgres-url", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", pick(ALNUM, 20))
    add("redis-url", "redis://:{s}@cache:6379/0", pick(ALNUM, 24))
    add("https-url", "git clone https://deploy:{s}@git.example.com/repo.git", pick(ALNUM, 24))
    add("password-assign", "DB_PASSWORD={s}", pick(ALNUM + "!#%", 16))
    add("password-json", '{{"username": "svc", "password": "{s}"}}', pick(ALNUM, 18))
    add("client-secret", "client_secret: {s}", pick(ALNUM, 32))
    add("api-key-yaml", "  x-api-key: {s}", pick(HEX, 40))
    return c


CASES = _cases()

BENIGN = [
    '{"token_budget": 10000, "max_tokens": 512}',
    '{"max_tokens": 4096, "temperature": 0.2, "top_p": 1}',
    "Token usage: 1532 input, 211 output.",
    "The tokenizer splits this into 12 tokens.",
    "commit 3f2c9a1b7e4d5c6a8b9e0f1a2b3c4d5e6f7a8b9c on main",
    "request id 9b2f6c1e-3d4a-4b5c-8d9e-0f1a2b3c4d5e failed with 502",
    "See https://docs.python.org/3/library/http.server.html for details.",
    "GET /v1/models?limit=20&order=desc HTTP/1.1",
    "The authentication flow redirects to /login?next=/dashboard",
    "password_min_length: 12, password_require_digit: true",
    "auth_method=oauth2 scope=read:user",
    '{"secret_name": "prod/db", "rotation_days": 30}',
    "token_type=Bearer expires_in=3600",
    "Basic usage: call run() then flush().",
    "Bearer tokens are described in RFC 6750.",
    "SELECT count(*) FROM spans WHERE name = 'execute_tool'",
    "File \"/srv/app/agent.py\", line 42, in run_tool\n    result = tool(**args)",
    "ValueError: invalid literal for int() with base 10: 'abc'",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    "The cache key is user:42:profile.",
    "primary_key: order_id",
    "{\"key\": \"status\", \"value\": \"shipped\"}",
    "Tracking number 1Z999AA10123456784 is in transit.",
    "ISBN 978-3-16-148410-0",
    "The meeting is at 10:30 in room B-204.",
    "export PATH=/usr/local/bin:$PATH",
    "pip install agentotel==0.3.1",
    "docker run -p 8080:80 nginx:1.25",
    "Use the skeleton at sk-templates/basic.py as a start.",
    "Keyboard shortcuts: ctrl+k opens the palette.",
    "The task-5f3c0d8e2a914b6c8d7e1f2a3b4c5d6e finished.",
    "Author: Jane Doe <jane@example.com>",
    "I asked the user for the order number and they said A-10023.",
    "The function returned [1, 2, 3, 4, 5].",
    "Here is the summary of the document in three bullet points.",
    "curl https://api.example.com/v1/orders/10023",
    "uuid=6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
    "session_id: 6a7b8c9d",
    "The secret to good soup is patience.",
    "AWS region us-east-1, bucket my-logs-2024.",
    "aws s3 cp s3://my-logs-2024/2024/01/01/app.log .",
    "The Heroku dyno restarted at 04:12.",
    "Discord channel #general has 120 members.",
    "Telegram message id 123456 forwarded.",
    "base64 of 'hello world' is aGVsbG8gd29ybGQ=",
    "The model answered in 1.42 s (p95 2.10 s).",
    "price_per_token: 0.000002",
    "{\"auth\": {\"type\": \"oauth\", \"scopes\": [\"repo\"]}}",
    "Ticket JIRA-4521: token refresh fails after 3600 seconds.",
    "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 4,
    "The git hash abc123def456 was deployed at 2024-05-01T12:00:00Z.",
    "Coordinates: 52.5200, 13.4050",
]


def _attributes_text(spans) -> str:
    return "\n".join(str(value) for span in spans for value in (span.attributes or {}).values())


def _leaked(text: str, secret: str) -> bool:
    return secret in text or secret[-12:] in text


def test_the_corpus_is_big_enough():
    assert len(CASES) >= 60
    assert len({family for family, _t, _s in CASES}) == len(CASES)
    assert len(BENIGN) >= 50


def test_no_secret_reaches_a_tool_span(telemetry):
    @agentotel.tool
    def deploy(note: str) -> dict:
        return {"log": note}

    leaks = []
    for family, text, secret in CASES:
        before = len(telemetry.spans())
        deploy(f"please use this: {text}")  # arguments, and (echoed) the result
        recorded = _attributes_text(telemetry.spans()[before:])
        assert "[REDACTED]" in recorded, family
        if _leaked(recorded, secret):
            leaks.append(family)
    assert leaks == []


def test_no_secret_reaches_a_tool_result(telemetry):
    @agentotel.tool
    def read_config(name: str) -> list:
        return [{"file": name, "content": text} for text in texts]

    texts: list[str] = []
    leaks = []
    for family, text, secret in CASES:
        texts[:] = [text]
        before = len(telemetry.spans())
        read_config(family)
        if _leaked(_attributes_text(telemetry.spans()[before:]), secret):
            leaks.append(family)
    assert leaks == []


def test_no_secret_reaches_the_messages_of_a_model_call(telemetry, model_server):
    client = openai.OpenAI(api_key="test", base_url=model_server.url + "/v1")
    reply = {
        "id": "c", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }  # fmt: skip
    leaks = []
    for family, text, secret in CASES:
        model_server.script(Scripted(reply))
        before = len(telemetry.spans())
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
        recorded = _attributes_text(telemetry.spans()[before:])
        assert "gen_ai.input.messages" not in recorded  # (attribute values only)
        if _leaked(recorded, secret):
            leaks.append(family)
    assert leaks == []


def test_ordinary_texts_are_left_alone():
    redacted = [text for text in BENIGN if redact_text(text)[1]]
    assert len(redacted) <= 1, redacted


def test_the_token_budget_is_not_a_token():
    assert redact_text('{"token_budget": 10000}') == ('{"token_budget": 10000}', 0)
    assert redact_text("auth_token=abcdef123456")[1] == 1


@pytest.mark.parametrize("size", [2_000, 200_000])
def test_redaction_stays_fast_on_long_plain_text(size):
    text = ("The agent read the file, then called the search tool: 3 results. " * (size // 60))[:size]
    start = time.perf_counter()
    for _ in range(5):
        assert redact_text(text + str(_))[1] == 0
    assert (time.perf_counter() - start) / 5 < size * 2e-6  # well under 2 µs a character
