"""Secrets never reach a span, on a second, independent set: credentials generated at another seed, in
other sentences and forms (CLI flags, YAML, JSON headers, connection URIs), including issuers the first
set (test_secrets.py) does not name (agent tooling such as LangSmith, Tavily, Pinecone; CI and
deployment; shipping), each placed in a tool's arguments, a tool's result and a model call's messages;
and ordinary agent texts other than the first set's (trace ids, hashes, ARNs, tool-call ids, the names
of token prefixes in prose) left alone.
"""

from __future__ import annotations

import base64
import random
import string
import uuid

import openai

import agentotel
from agentotel.content import redact_text
from tests.providers.conftest import Scripted

R = random.Random(977)  # not test_secrets.py's seed: other values of the same shapes
L, U, D = string.ascii_lowercase, string.ascii_uppercase, string.digits
A = L + U + D
H = "0123456789abcdef"


def p(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def b64(n: int) -> str:
    return base64.b64encode(bytes(R.randrange(256) for _ in range(n))).decode()


def b64u(n: int) -> str:
    return base64.urlsafe_b64encode(bytes(R.randrange(256) for _ in range(n))).decode().rstrip("=")


def awss() -> str:
    while True:
        value = p(A + "/+", 40)
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value):
            return value


# (family, the text an agent would see, the secret itself). Not here, and documented as not
# recognised: a password in prose ("the admin password is ..."), and a name joined to its value by a
# space only ("key_secret 1B5G...").
S: list[tuple[str, str, str]] = []


def add(family: str, template: str, secret: str) -> None:
    S.append((family, template.format(s=secret), secret))


add("aws-id-prose", "Found {s} hard-coded in deploy.sh line 12", "AKIA" + p(U + D, 16))
add("aws-temp-id", "temporary creds begin with {s}", "ASIA" + p(U + D, 16))
add("aws-secret-cli", "run: aws configure set aws_secret_access_key {s}", awss())
add("aws-secret-yaml", "aws:\n  secret_access_key: {s}\n", awss())
add("gh-classic", "git push with token {s} failed", "ghp_" + p(A, 36))
add("gh-finegrained", "new PAT: {s}", "github_pat_" + p(A, 22) + "_" + p(A, 59))
add("gh-oauth", "oauth gave {s}", "gho_" + p(A, 36))
add("gh-app", "installation token {s}", "ghs_" + p(A, 36))
add("gitlab-pat", "CI uses {s}", "glpat-" + p(A + "-_", 20))
add("gitlab-runner", "runner registered with {s}", "glrt-" + p(A + "-_", 20))
add("slack-bot", "bot token is {s}", f"xoxb-{p(D, 12)}-{p(D, 13)}-{p(A, 24)}")
add("slack-user", "my slack token {s}", f"xoxp-{p(D, 12)}-{p(D, 12)}-{p(D, 13)}-{p(H, 32)}")
add("slack-app", "socket mode token {s}", f"xapp-1-A{p(U + D, 10)}-{p(D, 13)}-{p(H, 64)}")
add("slack-webhook", "post alerts to {s}", f"https://hooks.slack.com/services/T{p(U + D, 10)}/B{p(U + D, 10)}/{p(A, 24)}")
add("discord-webhook", "webhook: {s}", f"https://discord.com/api/webhooks/{p(D, 18)}/{p(A + '-_', 68)}")
add("stripe-live", "charge with {s}", "sk_live_" + p(A, 99))
add("stripe-restricted", "restricted key {s}", "rk_live_" + p(A, 99))
add("stripe-webhook", "signing secret {s}", "whsec_" + p(A, 32))
add("openai-svc", "service account key {s}", "sk-svcacct-" + p(A + "-_", 120))
add("anthropic-admin", "admin key {s}", "sk-ant-admin01-" + p(A + "-_", 93) + "AA")
add("google-api", "firebase apiKey {s}", "AIza" + p(A + "-_", 35))
add("gcp-client-secret", "client secret was {s}", "GOCSPX-" + p(A + "-_", 28))
add("google-access", "Authorization header had {s}", "ya29.a0" + p(A + "-_", 150))
add("hf", "HF token {s}", "hf_" + p(A, 34))
add("groq", "key {s}", "gsk_" + p(A, 52))
add("npm", "//registry.npmjs.org/:_authToken={s}", "npm_" + p(A, 36))
add("pypi", "twine upload -p {s}", "pypi-AgEIcHlwaS5vcmc" + p(A + "-_", 70))
add("docker", "docker login -p {s}", "dckr_pat_" + p(A + "-_", 27))
add("twilio-key", "twilio api key {s}", "SK" + p(H, 32))
add("sendgrid", "mail via {s}", f"SG.{p(A + '-_', 22)}.{p(A + '-_', 43)}")
add("mailgun", "mailgun {s}", "key-" + p(H, 32))
add("mailchimp", "mailchimp api {s}", p(H, 32) + "-us21")
add("shopify", "store admin token {s}", "shpat_" + p(H, 32))
add("digitalocean", "doctl auth init -t {s}", "dop_v1_" + p(H, 64))
add("vault", "VAULT_TOKEN is {s}", "hvs." + p(A + "_-", 90))
add("terraform", "tf cloud token {s}", p(A, 14) + ".atlasv1." + p(A, 67))
add("databricks", "databricks token {s}", "dapi" + p(H, 32))
add("azure-conn", "conn: DefaultEndpointsProtocol=https;AccountName=lake01;AccountKey={s};EndpointSuffix=core.windows.net", b64(64))
add("azure-sas", "sas url https://lake01.blob.core.windows.net/raw/a.parquet?sp=racwdl&st=2025-01-01T00:00:00Z&se=2027-01-01T00:00:00Z&spr=https&sv=2022-11-02&sr=c&sig={s}",
    p(A, 43) + "%3D")
add("azure-ad", "AZURE_CLIENT_SECRET value {s}", p(A, 3) + "8Q~" + p(A + "_.-", 34))
add("telegram", "bot https://api.telegram.org/bot{s}/sendMessage", f"{p(D, 10)}:AA{p(A + '-_', 33)}")
add("discord-bot", "Discord bot token {s}", f"{base64.b64encode(p(D[1:], 1).encode() + p(D, 17).encode()).decode().rstrip('=')}.{p(A + '-_', 6)}.{p(A + '-_', 38)}")
add("jwt-header", "Authorization: Bearer {s}", ".".join([b64u(27), b64u(60), b64u(32)]).replace("-", "a"))
add("rsa-pem", "{s}", "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(b64(48) for _ in range(8)) + "\n-----END RSA PRIVATE KEY-----")
add("openssh", "id_ed25519:\n{s}", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(b64(52) for _ in range(5)) + "\n-----END OPENSSH PRIVATE KEY-----")
add("pg-url", "psql postgresql://reporter:{s}@10.0.3.7/analytics", p(A, 22))
add("mongo-url", "MONGO_URI=mongodb+srv://admin:{s}@cluster0.ab1cd.mongodb.net/prod", p(A, 18))
add("amqp-url", "broker amqps://worker:{s}@mq.internal:5671/vhost", p(A, 20))
add("linear", "linear key {s}", "lin_api_" + p(A, 40))
add("notion", "notion integration {s}", "ntn_" + p(D, 11) + p(A, 35))
add("atlassian", "jira api token {s}", "ATATT3xFfGF0" + p(A + "-_=", 180))
add("newrelic", "NR key {s}", "NRAK-" + p(U + D, 27))
add("grafana", "grafana sa token {s}", "glsa_" + p(A, 32) + "_" + p(H, 8))
add("doppler", "doppler {s}", "dp.pt." + p(A, 43))
add("supabase", "supabase access token {s}", "sbp_" + p(H, 40))
add("postman", "postman {s}", f"PMAK-{p(H, 24)}-{p(H, 34)}")
add("square", "square access token {s}", "EAAA" + p(A + "-_", 60))
add("brevo", "brevo {s}", f"xkeysib-{p(H, 64)}-{p(A, 16)}")
add("pulumi", "pulumi login with {s}", "pul-" + p(H, 40))
add("flyio", "fly deploy token {s}", "fo1_" + p(A + "_-", 43))
add("rubygems", "gem push key {s}", "rubygems_" + p(H, 48))
add("bitbucket", "bitbucket app password {s}", "ATBB" + p(A, 32))
add("alibaba", "aliyun AccessKey {s}", "LTAI" + p(A, 20))
add("age", "recipient secret {s}", "AGE-SECRET-KEY-1" + p("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))
add("cloudflare-env", "CLOUDFLARE_API_TOKEN={s}", p(A + "_-", 40))
add("datadog-env", "DD_API_KEY={s}", p(H, 32))
add("basic-auth", "Authorization: Basic {s}", base64.b64encode(f"svc:{p(A, 16)}".encode()).decode())
add("mapbox", "mapbox secret {s}", "sk.eyJ1Ijoi" + p(A, 40) + "." + p(A + "-_", 22))
add("planetscale", "pscale token {s}", "pscale_tkn_" + p(A + "_-", 43))
add("figma", "figma PAT {s}", "figd_" + p(A + "-_", 40))
add("hubspot", "hubspot private app {s}", "pat-na1-" + str(uuid.UUID(int=R.getrandbits(128))))
add("okta", "Authorization: SSWS {s}", "00" + p(A + "-_", 40))
add("sonarqube", "sonar.token={s}", "squ_" + p(H, 40))
add("jfrog", "artifactory key {s}", "AKCp" + p(A, 69))
add("buildkite", "buildkite token {s}", "bkua_" + p(H, 40))
add("prefect", "PREFECT_API_KEY {s}", "pnu_" + p(A, 36))
add("netlify", "netlify token {s}", "nfp_" + p(A, 36))
add("shippo", "shippo {s}", "shippo_live_" + p(H, 40))
add("easypost", "easypost {s}", "EZAK" + p(A, 54))
add("sentry-auth", "SENTRY_AUTH_TOKEN={s}", "sntrys_" + b64(80).rstrip("="))
add("dynatrace", "dt token {s}", f"dt0c01.{p(U + D, 24)}.{p(U + D, 64)}")
add("drf-token", "Authorization: Token {s}", p(H, 40))
add("okta-json", '{{"headers": {{"Authorization": "SSWS {s}"}}}}', "00" + p(A + "-_", 40))
add("langsmith", "LANGCHAIN_API_KEY {s}", f"lsv2_pt_{p(H, 32)}_{p(H, 10)}")
add("tavily", "search tool key {s}", "tvly-dev-" + p(A, 32))
add("pinecone", "pinecone {s}", "pcsk_" + p(A, 5) + "_" + p(A, 60))
add("elevenlabs", "voice key {s}", "sk_" + p(H, 48))
add("gocardless", "gocardless {s}", "live_" + p(A + "-_", 40))
add("render", "render api key {s}", "rnd_" + p(A, 32))
add("duffel", "flights via {s}", "duffel_live_" + p(A + "_-", 43))
add("firecrawl", "crawl with {s}", "fc-" + p(H, 32))
add("e2b", "sandbox key {s}", "e2b_" + p(H, 40))
add("cerebras", "CEREBRAS_API_KEY: {s}", "csk-" + p(L + D, 48))
add("1password", "OP_SERVICE_ACCOUNT_TOKEN {s}", "ops_eyJ" + p(A + "+/", 160))
add("dropbox", "dropbox short-lived {s}", "sl." + p(A + "_-", 138))
add("x-bearer", "twitter app bearer {s}", "A" * 21 + p(A + "%", 90))
add("contentful", "contentful {s}", "CFPAT-" + p(A + "_-", 43))
add("typeform", "typeform {s}", "tfp_" + p(A + "_-", 59))
add("readme", "readme key {s}", "rdme_" + p(L + D, 70))
add("infracost", "infracost {s}", "ico-" + p(A, 32))
add("openshift", "oc login --token={s}", "sha256~" + p(A + "_-", 43))
add("yandex", "yandex iam {s}", "y0_" + p(A + "_-", 55))

BENIGN = [
    "max_output_tokens: 2048", "tokens_per_minute=90000", '{"api_version": "2024-02-01"}',
    "The key insight is that retries hide the failure.", "A password reset link was sent to j***@example.com.",
    "Set OPENAI_API_KEY in your shell before running.", "sk-learn is sometimes used as a nickname for scikit-learn.",
    "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7",
    "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "md5 d41d8cd98f00b204e9800998ecf8427e", "sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "arn:aws:iam::123456789012:role/agent-role", "projects/my-proj/secrets/db-pass/versions/3",
    "pod deployment/agent-7d9f8c6b5-x2k4p restarted", "image sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    'WWW-Authenticate: Bearer realm="api", error="invalid_token"', "https://user@example.com/profile",
    "secret_santa_budget: 50", "key_points: [speed, cost]", "report_8f3a9c2e71b4.pdf was generated",
    "0x7f3a2c1b9e40 segfault at 0000000000000010", "Use the test card 4242 4242 4242 4242 in the sandbox.",
    '{"image": "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAIAQMAAAD+wSzIAAAABlBMVEX///+/v7+jQ3Y5AAAADklEQVQI12P4AIX8EAgALgAD/aNpbtEAAAAASUVORK5CYII="}',
    "order 10023 total $149.99 (tax $12.00)", "temperature=0.7 top_p=0.9 seed=42", "The API returned 429: rate limit reached for gpt-4o.",
    "Authorization failed: the token has expired.", "Please rotate the credentials every 90 days.",
    "def get_secret(name: str) -> str: ...", "KeyError: 'api_key'", "api_key=None", "password: ********",
    "token: <redacted>", "client_id: 1234567890-abc.apps.googleusercontent.com", "AccountName=lake01;EndpointSuffix=core.windows.net",
    "git checkout 7c9e6679a4b1d5f0e2c3b8a9d6f1e0c2b3a4d5e6", "The tool call id was call_9f8e7d6c5b4a3210fedcba98.",
    "msg_01XFDUDYJgAACzvnptvVoYEL is the Anthropic message id", "chatcmpl-9pQ3xYzAbCdEfGhIjKlMnOpQrStUv completed",
    "run id 01J8Z3K4M5N6P7Q8R9S0T1V2W3 (ULID)", "The user's name is Sam Key and they live on Token Street.",
    "lat=37.7749&lng=-122.4194&zoom=12", "https://example.com/search?q=api+key+rotation&page=2",
    "The sk_ prefix marks secret keys in Stripe's docs.", "ghp_ tokens are GitHub classic personal access tokens.",
    "xoxb- tokens belong to Slack bots.", "AKIA prefixes mark long-term AWS access keys.",
    "Environment: prod-eu-west-1, cluster blue, build 2024.11.3-rc2", "SELECT * FROM users WHERE password_hash IS NULL",
    "bcrypt cost factor 12", "The JWT header says alg=RS256 and kid=2024-q4.",
    "base64url of the digest: 47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
]


def _text(spans) -> str:
    return "\n".join(str(v) for s in spans for v in (s.attributes or {}).values())


def _leak(text: str, secret: str) -> bool:
    return secret in text or secret[-12:] in text


def test_the_set_is_big_enough():
    assert len(S) >= 60 and len({family for family, _t, _s in S}) == len(S)
    assert len(BENIGN) >= 50


def test_no_secret_reaches_a_tool_span(telemetry):
    @agentotel.tool
    def deploy(note: str) -> str:
        return "ok"

    leaks = []
    for f, text, secret in S:
        before = len(telemetry.spans())
        deploy(f"context: {text}")
        if _leak(_text(telemetry.spans()[before:]), secret):
            leaks.append(f)
    assert leaks == []


def test_no_secret_reaches_a_tool_result(telemetry):
    box: list[str] = []

    @agentotel.tool
    def read(name: str) -> dict:
        return {"path": name, "lines": [box[0]]}

    leaks = []
    for f, text, secret in S:
        box[:] = [text]
        before = len(telemetry.spans())
        read(f)
        if _leak(_text(telemetry.spans()[before:]), secret):
            leaks.append(f)
    assert leaks == []


def test_no_secret_reaches_the_messages_of_a_model_call(telemetry, model_server):
    client = openai.OpenAI(api_key="test", base_url=model_server.url + "/v1")
    leaks = []
    for f, text, secret in S:
        reply = {"id": "c", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": f"echo: {text}"}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        model_server.script(Scripted(reply))
        before = len(telemetry.spans())
        messages = [{"role": "system", "content": "you help"}, {"role": "user", "content": f"here: {text}"}]
        client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        if _leak(_text(telemetry.spans()[before:]), secret):
            leaks.append(f)
    assert leaks == []


def test_ordinary_texts_are_left_alone():
    redacted = [(text, redact_text(text)[0]) for text in BENIGN if redact_text(text)[1]]
    assert redacted == []  # the issue allows 1 in 50; none today
