"""The content policy: what of a payload reaches a span — JSON-safe, redacted, and bounded.

Every capture in agentotel (tool arguments and results, messages, retrieval queries and documents,
run task and output) goes through one `Payload` per span:

    payload = Payload()
    payload.set(span, GEN_AI_TOOL_CALL_ARGUMENTS, arguments)   # nothing at all when capture is off
    payload.apply_markers(span)                                # agentotel.payload.redactions / .truncated

The order is fixed: a value is first made JSON-safe (any Python value, never an exception), then
secrets are redacted, then it is truncated to the per-value limit and what is left of the span's
budget, keeping valid JSON. Redaction happens before truncation so a cut can never leave the visible
half of a secret behind.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as _dt
import enum
import functools
import json
import math
import re
import sys
import uuid
from collections import deque
from decimal import Decimal
from pathlib import PurePath
from typing import Any, Callable, Mapping

from opentelemetry.trace import Span

from agentotel import _config
from agentotel._internal import internal_errors, report_internal_error
from agentotel.semconv import AGENTOTEL_PAYLOAD_REDACTIONS, AGENTOTEL_PAYLOAD_TRUNCATED

__all__ = ["Payload", "capture_enabled", "redact", "redact_text", "to_json_safe"]

REDACTED = "[REDACTED]"

# Structural bounds applied while converting, so that a huge or deep value costs little to record.
_MAX_DEPTH = 32
_MAX_ITEMS = 1000
# Strings are cut (before a word) to the value limit plus this margin before redaction, so the final cut (at or
# below the value limit) falls past any secret that straddled the early cut.
_PRECUT_MARGIN = 1024
# A capped walk keeps at most this many container members in all, and every string at least this long.
_MAX_NODES = 20_000
_MIN_STRING_CHARS = 64
# Python writes no int of more than 4,300 decimal digits (sys.set_int_max_str_digits): a bigger one is
# recorded as hex text, which has no such limit, instead of failing the whole payload.
_INT_BITS = 14_000
# Below this many bytes there is no room for a useful value; a marker string is recorded instead.
_MIN_ROOM = 16
_TRUNCATED_MARK = "…[truncated]"


def capture_enabled() -> bool:
    """True when payloads (arguments, results, messages, documents, task, output) may be recorded."""
    return _config.current().capture_content


# --- Redaction rules --------------------------------------------------------------------------------

# Credentials with a recognisable shape, wherever they appear in text: (hints, pattern). A token must
# not be glued onto a letter or digit before it ("task-<uuid>" is not an OpenAI key); "_", ":", "=",
# quotes and spaces all separate.
_SHAPES = [
    (("sk-",), r"(?<![A-Za-z0-9])sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),  # OpenAI, Anthropic (sk-ant-api03-)
    (("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
     r"(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),  # AWS access key ids
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}"),  # GitHub tokens
    (("github_pat_",), r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{22,}"),  # GitHub fine-grained tokens
    (("glpat-",), r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_\-]{20,}"),  # GitLab
    (("xox", "xapp-"), r"(?<![A-Za-z0-9])(?:xox[abposrec]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,})"),  # Slack
    (("aiza",), r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}"),  # Google API keys
    (("sk_", "rk_", "whsec_"), r"(?<![A-Za-z0-9])(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z]{20,})"),  # Stripe
    (("hf_",), r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}"),  # Hugging Face
    (("eyj",), r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"),  # JWT
    (("age-secret-key-",), r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    # The rule families of secret scanners (gitleaks, detect-secrets, GitHub's push protection): tokens
    # with a fixed prefix, one rule per issuer. Cloud and PaaS:
    (("gocspx-",), r"(?<![A-Za-z0-9])GOCSPX-[A-Za-z0-9_\-]{24,}"),  # Google OAuth client secret
    (("ya29.",), r"(?<![A-Za-z0-9])ya29\.[A-Za-z0-9_\-]{20,}"),  # Google OAuth access token
    (("q~",), r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}"),  # Azure AD client secret
    (("ltai",), r"(?<![A-Za-z0-9])LTAI[A-Za-z0-9]{12,24}\b"),  # Alibaba Cloud access key id
    (("_v1_",), r"(?<![A-Za-z0-9])do[opr]_v1_[a-f0-9]{64}"),  # DigitalOcean
    (("shp",), r"(?<![A-Za-z0-9])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),  # Shopify
    (("hrku-",), r"(?<![A-Za-z0-9])HRKU-[A-Za-z0-9_\-]{20,}"),  # Heroku (new format)
    (("dapi",), r"(?<![A-Za-z0-9])dapi[a-f0-9]{32}(?:-\d)?"),  # Databricks
    (("hvs.", "hvb.", "hvr."), r"(?<![A-Za-z0-9])hv[sbr]\.[A-Za-z0-9_\-]{24,}"),  # HashiCorp Vault
    (("atlasv1",), r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}"),  # Terraform Cloud
    (("pul-",), r"(?<![A-Za-z0-9])pul-[a-f0-9]{40}"),  # Pulumi
    (("dp.",), r"(?<![A-Za-z0-9])dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_\-]{2,35}\.)?[A-Za-z0-9]{40,}"),  # Doppler
    (("sbp_",), r"(?<![A-Za-z0-9])sbp_[a-f0-9]{40}"),  # Supabase
    (("fo1_", "fm1", "fm2_"), r"(?<![A-Za-z0-9])(?:fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/=_\-]{40,})"),  # Fly.io
    (("glc_", "glsa_"), r"(?<![A-Za-z0-9])(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"),  # Grafana
    (("nrak-", "nrii-"), r"(?<![A-Za-z0-9])NR(?:AK|II)-[A-Za-z0-9]{27,32}"),  # New Relic
    (("sntrys_", "sntryu_"), r"(?<![A-Za-z0-9])sntry[su]_[A-Za-z0-9+/=_]{40,}"),  # Sentry
    (("dt0c01.",), r"(?<![A-Za-z0-9])dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),  # Dynatrace
    # Version control, CI and package registries:
    (("atbb",), r"(?<![A-Za-z0-9])ATBB[A-Za-z0-9_=.\-]{32,}"),  # Bitbucket app password
    (("glptt-", "gldt-", "glrt-", "glsoat-", "glft-", "glcbt-", "gr1348941"),
     r"(?<![A-Za-z0-9])(?:gl(?:ptt|dt|rt|soat|ft|cbt)-[A-Za-z0-9_\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,})"),  # GitLab
    (("npm_",), r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}"),  # npm
    (("pypi-",), r"(?<![A-Za-z0-9])pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),  # PyPI upload token
    (("rubygems_",), r"(?<![A-Za-z0-9])rubygems_[a-f0-9]{48}"),  # RubyGems
    (("oy2",), r"(?<![A-Za-z0-9])oy2[a-z0-9]{43}"),  # NuGet
    (("dckr_pat_",), r"(?<![A-Za-z0-9])dckr_pat_[A-Za-z0-9_\-]{27,}"),  # Docker Hub
    (("pmak-",), r"(?<![A-Za-z0-9])PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),  # Postman
    # Chat, webhooks, e-mail and SMS:
    (("hooks.slack.com",), r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}"),  # Slack webhook
    (("discord",), r"discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]{40,}"),  # Discord webhook
    (("webhook.office.com",), r"webhook\.office\.com/webhookb2/[A-Za-z0-9@/_\-]{40,}"),  # Teams webhook
    (("sg.",), r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,64}"),  # SendGrid
    (("sk",), r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])"),  # Twilio API key
    (("key-",), r"(?<![A-Za-z0-9])key-[0-9a-f]{32}(?![A-Za-z0-9])"),  # Mailgun (legacy)
    (("-us",), r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])"),  # Mailchimp
    (("xkeysib-",), r"(?<![A-Za-z0-9])xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),  # Brevo (Sendinblue)
    # Payments:
    (("sq0atp-", "sq0csp-", "eaaa"), r"(?<![A-Za-z0-9])(?:sq0atp-[A-Za-z0-9_\-]{22}|sq0csp-[A-Za-z0-9_\-]{43}|EAAA[A-Za-z0-9_\-]{60})"),  # Square
    (("access_token$production$",), r"access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}"),  # Braintree / PayPal
    (("flwseck",), r"(?<![A-Za-z0-9])FLWSECK(?:_TEST)?-[A-Za-z0-9]{32}-X"),  # Flutterwave
    # Model and SaaS APIs:
    (("gsk_",), r"(?<![A-Za-z0-9])gsk_[A-Za-z0-9]{48,}"),  # Groq
    (("r8_",), r"(?<![A-Za-z0-9])r8_[A-Za-z0-9]{37}"),  # Replicate
    (("pplx-",), r"(?<![A-Za-z0-9])pplx-[A-Za-z0-9]{40,}"),  # Perplexity
    (("xai-",), r"(?<![A-Za-z0-9])xai-[A-Za-z0-9]{60,}"),  # xAI
    (("lin_api_",), r"(?<![A-Za-z0-9])lin_api_[A-Za-z0-9]{40}"),  # Linear
    (("ntn_", "secret_"), r"(?<![A-Za-z0-9])(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})(?![A-Za-z0-9])"),  # Notion
    (("atatt3",), r"(?<![A-Za-z0-9])ATATT3[A-Za-z0-9_=\-]{100,}"),  # Atlassian
    (("pat",), r"(?<![A-Za-z0-9])pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),  # Airtable
    (("sk.eyj",), r"(?<![A-Za-z0-9])sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),  # Mapbox secret token
    (("figd_",), r"(?<![A-Za-z0-9])figd_[A-Za-z0-9_\-]{38,}"),  # Figma
    (("pat-na1-", "pat-eu1-"), r"(?<![A-Za-z0-9])pat-(?:na|eu)1-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),  # HubSpot
    (("cfpat-",), r"(?<![A-Za-z0-9])CFPAT-[A-Za-z0-9_\-]{43}"),  # Contentful
    (("tfp_",), r"(?<![A-Za-z0-9])tfp_[A-Za-z0-9_\-.=]{56,}"),  # Typeform
    (("rdme_",), r"(?<![A-Za-z0-9])rdme_[a-z0-9]{70}"),  # ReadMe
    (("ops_eyj",), r"(?<![A-Za-z0-9])ops_eyJ[A-Za-z0-9+/=_\-]{100,}"),  # 1Password service account
    (("sl.",), r"(?<![A-Za-z0-9])sl\.[A-Za-z0-9_\-]{130,}"),  # Dropbox short-lived token
    (("aaaaaaaaaaaaaaaaaaaaa",), r"(?<![A-Za-z0-9])A{21}[A-Za-z0-9%]{80,}"),  # X (Twitter) app bearer token
    # Agent tooling: tracing, vector stores, search, sandboxes, more model APIs.
    (("lsv2_",), r"(?<![A-Za-z0-9])lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),  # LangSmith
    (("pcsk_",), r"(?<![A-Za-z0-9])pcsk_[A-Za-z0-9_]{40,}"),  # Pinecone
    (("tvly-",), r"(?<![A-Za-z0-9])tvly-(?:dev-|prod-)?[A-Za-z0-9]{32,}"),  # Tavily
    (("fc-",), r"(?<![A-Za-z0-9])fc-[a-f0-9]{32}(?![A-Za-z0-9])"),  # Firecrawl
    (("e2b_",), r"(?<![A-Za-z0-9])e2b_[a-f0-9]{40}"),  # E2B
    (("csk-",), r"(?<![A-Za-z0-9])csk-[a-z0-9]{40,}"),  # Cerebras
    (("sk_",), r"(?<![A-Za-z0-9])sk_[a-f0-9]{48}(?![A-Za-z0-9])"),  # ElevenLabs
    # CI, deployment and infrastructure:
    (("pscale_",), r"(?<![A-Za-z0-9])pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=\-]{32,}"),  # PlanetScale
    (("bkua_",), r"(?<![A-Za-z0-9])bkua_[a-f0-9]{40}"),  # Buildkite
    (("pnu_",), r"(?<![A-Za-z0-9])pnu_[A-Za-z0-9]{36}"),  # Prefect
    (("nfp_",), r"(?<![A-Za-z0-9])nfp_[A-Za-z0-9]{36,}"),  # Netlify
    (("rnd_",), r"(?<![A-Za-z0-9])rnd_[A-Za-z0-9]{32,}"),  # Render
    (("akcp", "cmvmdgtu"), r"(?<![A-Za-z0-9])(?:AKCp[A-Za-z0-9]{69}|cmVmdGtu[A-Za-z0-9]{56,})"),  # JFrog API key, reference token
    (("ico-",), r"(?<![A-Za-z0-9])ico-[A-Za-z0-9]{32}(?![A-Za-z0-9])"),  # Infracost
    (("sha256~",), r"(?<![A-Za-z0-9])sha256~[A-Za-z0-9_\-]{43}"),  # OpenShift
    (("aqvn", "y0_"), r"(?<![A-Za-z0-9])(?:AQVN[A-Za-z0-9_\-]{35,38}|y0_[A-Za-z0-9_\-]{55})"),  # Yandex
    # Payments and shipping:
    (("shippo_",), r"(?<![A-Za-z0-9])shippo_(?:live|test)_[a-f0-9]{40}"),  # Shippo
    (("ezak", "eztk"), r"(?<![A-Za-z0-9])EZ[AT]K[A-Za-z0-9]{54}"),  # EasyPost
    (("duffel_",), r"(?<![A-Za-z0-9])duffel_(?:test|live)_[A-Za-z0-9_=\-]{43}"),  # Duffel
    # GoCardless: "live_" is an ordinary word start, so the 40 characters must mix digits and both cases.
    (("live_",),
     r"(?<![A-Za-z0-9_])live_(?=[A-Za-z0-9_=\-]{0,39}[0-9])(?=[A-Za-z0-9_=\-]{0,39}[A-Z])(?=[A-Za-z0-9_=\-]{0,39}[a-z])[A-Za-z0-9_=\-]{40}(?![A-Za-z0-9_=\-])"),
]  # fmt: skip

# Tokens with no fixed prefix whose shape alone is distinctive (looked for in a text's long words only):
# Discord bot, Telegram bot, Mailgun (current format).
_BARE_TOKENS = re.compile(
    r"(?<![A-Za-z0-9_\-])[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])"
    r"|(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])"
    r"|(?<![A-Za-z0-9])[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9])"
)

# Key blocks that span spaces and lines, replaced whole: (hints, pattern).
_BLOCKS = [
    # PEM and PGP private keys, up to the END line, or to the end of the text when the value was cut.
    (("private key",),
     r"-----BEGIN[A-Z ]*PRIVATE KEY(?: BLOCK)?-----[^\"]*?(?:-----END[A-Z ]*PRIVATE KEY(?: BLOCK)?-----|$)"),
    (("putty-user-key-file",), r"PuTTY-User-Key-File-\d:[^\"]*?Private-MAC: *[0-9a-f]+"),
]  # fmt: skip

# Credentials recognised by what precedes them: (hints, pattern); the pattern's group 1 is replaced.
_CONTEXTS = [
    # Azure storage and Service Bus connection strings, and SAS URLs (sig= signs the whole grant).
    (("accountkey", "sharedaccesskey", "sharedaccesssignature"),
     r"(?i:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*([^;\s\"'&]{16,})"),
    (("sig=",), r"(?<![A-Za-z0-9])sig=([A-Za-z0-9%+/=_\-]{16,})"),
    # An AWS secret access key has no prefix: 40 characters near the words that name it.
    (("aws", "secret"),
     r"(?i:aws|secret)[^\n]{0,60}?(?<![A-Za-z0-9/+=])((?=[A-Za-z0-9/+]*[0-9])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[A-Z])[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
    # Heroku API keys and other issuers' UUID-shaped keys are told apart by the issuer's name close by.
    (("heroku",), r"(?i:heroku)[^\n]{0,40}?\b([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b"),
    # A password told in prose ("Your temporary password is Nw-7Tq4-kR2x"): a word holding letters and digits
    # ("your password is incorrect" holds none).
    (("pass",),  # (the key=value rule's hint: the hints found are the trie's matches)
     r"(?i:password|passcode|passphrase)\s+(?:is|was|will\s+be|reads|now\s+is)\s*:?\s*[\"'`]?"
     r"((?=[^\s\"'`]*[0-9])(?=[^\s\"'`]*[A-Za-z])[^\s\"'`,;]{6,}?)(?=[\"'`]?(?:[\s,;]|\.(?:\s|$)|$))"),
]  # fmt: skip

# An Authorization header with a scheme other than Bearer or Basic (`Token <key>`, Okta's `SSWS <key>`,
# a vendor's own): the credentials after the scheme, one word holding a digit ("authorization: granted
# automatically" is prose). Bearer and Basic have rules of their own below.
_AUTHORIZATION = re.compile(
    r"(?<![A-Za-z0-9])(?i:(?:proxy-)?authorization)\\?[\"']?\s*[:=]\s*\\?[\"']?(?!(?i:bearer|basic)\s)[A-Za-z][A-Za-z0-9._\-]*[ \t]+"
    r"((?=[^\s\"'\\,;]*[0-9])[^\s\"'\\,;]{8,})"
)

# The token ends where a key=value would go on ("Bearer expires_in=3600" is no token); padding '=' only.
_BEARER = re.compile(r"\b(?i:bearer)\s+([A-Za-z0-9._~+/\-]{8,}=*)(?![A-Za-z0-9._~+/=\-])")
# "Basic <base64>" is also ordinary English ("Basic usage"), so a match only counts when it decodes
# to user:password.
_BASIC = re.compile(r"\bBasic\s+([A-Za-z0-9+/]{6,}={0,2})")
# user:password@ in a URL or connection string (postgres://u:p@h, redis://:p@h, https://u:p@h).
_URL_CREDENTIALS = re.compile(r"://[^\s:/@\"'<>]*:([^\s@/\"'<>]+)@")

# Words that make a key name secret (as a whole word within the key: DB_PASSWORD, apiKey, x-api-key).
_SECRET_WORDS = (
    "password", "passwd", "pwd", "passphrase", "secret", "token", "api_key", "access_key", "private_key",
    "credential", "credentials", "authorization", "auth", "cookie", "session_key",
)  # fmt: skip
_SECRET_WORD_SET = frozenset(w.replace("_", "") for w in _SECRET_WORDS)


def _key_value_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    word = "|".join(sorted((re.escape(w).replace("_", "[_-]?") for w in words), key=len, reverse=True))
    # The word starts the key or a part of it (DB_PASSWORD, dbPassword) and does not run on into a
    # longer lower-case word (max_tokens is not a token). The suffix is one character class so that
    # a failed match costs linear time. Forms: key=value, key: value, "key": "value", 'key'='value'.
    # A value that is already a marker, or an auth scheme whose token the bearer/basic rules handle,
    # is left alone.
    return re.compile(
        rf"(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z]))(?i:{word})(?![a-z0-9])[A-Za-z0-9_.\-]*"
        rf"(\\?[\"']?)\s*[:=]\s*(?!\[REDACTED|(?i:bearer|basic)\s|[A-Za-z][A-Za-z0-9._\-]*[ \t]+\[REDACTED)"
        rf"(?:(\\?[\"'])((?:(?!\2).)*?)\2|([^\s\"'`,;&<>{{}}\[\]\\]+))"
    )


_KEY_VALUE = _key_value_pattern(_SECRET_WORDS)


def _subn(pattern: re.Pattern[str], replacement: Any, text: str) -> tuple[str, int]:
    """`pattern.subn` where `replacement(match)` may return None to leave a match as it is (not counted)."""
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        out = replacement(match)
        if out is None:
            return match.group(0)
        count += 1
        return out

    return pattern.sub(replace, text), count


def _replace_group(match: re.Match[str], group: int) -> str:
    whole, base = match.group(0), match.start(0)
    return whole[: match.start(group) - base] + REDACTED + whole[match.end(group) - base :]


def _key_value_replacement(match: re.Match[str]) -> str | None:
    group = 3 if match.group(3) is not None else 4
    value = match.group(group)
    if not value or REDACTED in value:  # empty, or already redacted by another rule
        return None
    return _replace_group(match, group)


def _builtin_key_value_replacement(match: re.Match[str]) -> str | None:
    """A built-in secret key's value, unless the key names something about the secret, not the secret
    itself (`token_budget`, `auth_method`, `password_min_length`: see `_describes_secret`)."""
    text, start = match.string, match.start(0)
    before = start
    while before > 0 and (text[before - 1].isalnum() or text[before - 1] in "_.-"):  # DB_ in DB_PASSWORD
        before -= 1
    if _describes_secret(text[before : match.start(1)]):
        return None
    value = match.group(3) if match.group(3) is not None else match.group(4)
    if value is not None and (value.lower() in _NOT_SECRET_VALUES or not value.strip("*•")):  # "password: ****" is masked already
        return None
    return _key_value_replacement(match)


def _basic_replacement(match: re.Match[str]) -> str | None:
    token = match.group(1)
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    if b":" not in decoded or not decoded.isascii():
        return None
    return _replace_group(match, 1)


_KEY_HINTS = ("pass", "pwd", "secret", "token", "key", "credential", "auth", "cookie")

# Every built-in rule, in the order they run, as (hints, pattern, replacement): a rule runs only when
# one of its hints (lower-case fragments) is in the text; a replacement returning None leaves that
# match alone. Bearer and basic run before key=value so "Authorization: Bearer x" keeps its scheme.
_RULES: list[tuple[frozenset[str], re.Pattern[str], Callable[[re.Match[str]], str | None]]] = [
    *((frozenset(hints), re.compile(pattern), lambda m: REDACTED) for hints, pattern in (*_SHAPES, *_BLOCKS)),
    *((frozenset(hints), re.compile(pattern), lambda m: _replace_group(m, 1)) for hints, pattern in _CONTEXTS),
    (frozenset({"authorization"}), _AUTHORIZATION, lambda m: None if REDACTED in m.group(1) else _replace_group(m, 1)),
    (frozenset({"bearer"}), _BEARER, lambda m: _replace_group(m, 1)),
    (frozenset({"basic"}), _BASIC, _basic_replacement),
    (frozenset({"://"}), _URL_CREDENTIALS, lambda m: _replace_group(m, 1)),
    (frozenset(_KEY_HINTS), _KEY_VALUE, _builtin_key_value_replacement),
]


def _trie_pattern(words: set[str]) -> str:
    """One regex matching any of `words`, shaped as a trie: Python's engine then tests a character per
    branch instead of trying every word at every position (about twice as fast as a flat alternation)."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


# One scan of the lower-cased text for every hint decides which rules run at all.
# A token shape has no space in it and is at least _MIN_TOKEN_CHARS long: its hints are looked for in the
# text's long words only (split() runs in C), the other rules' hints in the whole text. Two small tries
# cost less than one big one run over every character.
_TOKEN_HINT = re.compile(_trie_pattern({h for hints, _p in _SHAPES for h in hints}))
_TEXT_HINT = re.compile(_trie_pattern(
    {h for hints, _p in (*_BLOCKS, *_CONTEXTS) for h in hints} | {"authorization", "bearer", "basic", "://"} | set(_KEY_HINTS)
))
# Bounds of a policy's memory of clean texts (`_Policy.clean_texts`); the strings stay alive while
# remembered, so at most this many characters are kept from being freed.
_CLEAN_TEXTS = 16_384
_CLEAN_CHARS = 4 << 20


def _bounded_add(texts: set[str], chars: int, text: str) -> tuple[set[str], int]:
    """`texts` (holding `chars` characters) with `text` added within those bounds, and its characters after: a
    text over a sixteenth of them is not kept, and a full memory starts again (the newest texts are the ones
    a run sends again)."""
    size = len(text)
    if size > _CLEAN_CHARS // 16:
        return texts, chars
    total = chars + size
    if total > _CLEAN_CHARS or len(texts) >= _CLEAN_TEXTS:
        texts, total = set(), size
    texts.add(text)
    return texts, total

# No built-in rule matches fewer characters than this ("pwd=x").
_MIN_SECRET_CHARS = 5


# No built-in rule can match text that has no ':' or '=' (key=value, URLs), no whitespace-free run of
# at least this many characters (every token shape: the shortest is a Slack token, xoxb- and 10
# characters), no PEM dash line and no bearer / basic: plain prose then skips the regex scan entirely.
_MIN_TOKEN_CHARS = 15


# A run of that many non-space characters (re's \s and str.split() agree on what a space is).
_TOKEN_RUN = re.compile(rf"\S{{{_MIN_TOKEN_CHARS}}}")


def _may_match(text: str) -> str | None:
    """`text.lower()` when a built-in rule may match somewhere in `text`; None when none can.

    Every test is one of containment, so a text made by joining several with spaces passes whenever
    one of them does (what `_as_is` relies on).
    """
    lower = text.lower()
    if (
        ":" in text
        or "=" in text
        or "-----" in text
        or "bearer" in lower
        or "basic" in lower
        or "pass" in lower  # a password told in prose
        or (len(text) >= _MIN_TOKEN_CHARS and _TOKEN_RUN.search(text) is not None)
    ):
        return lower
    return None


def _redact_known(text: str) -> tuple[str, int]:
    """`text` with the built-in rules applied; the count of replacements."""
    if len(text) < _MIN_SECRET_CHARS:
        return text, 0
    lower = _may_match(text)
    if lower is None:
        return text, 0
    count = 0
    found = set(_TEXT_HINT.findall(lower))
    words = [w for w in text.split() if len(w) >= _MIN_TOKEN_CHARS] if len(text) >= _MIN_TOKEN_CHARS else None
    if words:
        joined = " ".join(words)
        found.update(_TOKEN_HINT.findall(joined.lower()))
        if _BARE_TOKENS.search(joined) is not None:
            text, count = _BARE_TOKENS.subn(REDACTED, text)
    if not found:
        return text, count
    for hints, pattern, replacement in _RULES:
        if hints & found:
            text, n = _subn(pattern, replacement, text)
            count += n
    return text, count


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)


# Words that, after a secret word, make a key describe the secret instead of holding it: a budget, a
# count, a type, a name, an expiry (`token_budget: 10000`, `auth_method`, `secret_name`, `token_url`).
_DESCRIBING_WORDS = frozenset((
    "budget", "budgets", "count", "counts", "limit", "limits", "max", "min", "type", "types", "kind", "length",
    "len", "size", "ttl", "expiry", "expires", "expiration", "expired", "lifetime", "age", "name", "names",
    "label", "url", "uri", "endpoint", "host", "path", "file", "dir", "env", "var", "header", "field",
    "prefix", "suffix", "format", "method", "methods", "mode", "provider", "version", "enabled", "required",
    "policy", "usage", "used", "remaining", "estimate", "estimated", "rate", "timeout", "window", "total",
    "index", "offset", "cost", "price", "number", "num", "scope", "scopes", "hint", "strategy", "scheme",
    "rotation", "rotated", "created", "updated", "status", "level", "ratio", "per", "require", "requires",
    # when a secret was set or changed (last_password_reset, password_changed_at): a date, not the secret
    "reset", "resets", "changed", "change", "changes", "set", "date", "time", "at", "on", "since", "history", "attempts",
    "failures", "strength",
))  # fmt: skip
# And before it: an amount of secrets (`max_tokens`, `price_per_token`), not a secret.
_AMOUNT_WORDS = frozenset(("max", "min", "price", "per", "cost", "count", "num", "total", "budget", "limit"))
# Values no secret is: a flag or a null (`password_required: true`).
_NOT_SECRET_VALUES = frozenset(("true", "false", "null", "none", "nil", "yes", "no"))


def _key_parts(key: str) -> list[str]:
    return [p for p in re.split(r"[_.\-\s]+", _camel_to_snake(key).lower()) if p]


def _describes_secret(key: str) -> bool:
    """Whether a word after the key's last secret word says the key is about a secret, not one."""
    parts = _key_parts(key.strip("\"'\\"))
    secret = [i for i, p in enumerate(parts) if p in _SECRET_WORD_SET or p.rstrip("s") in _SECRET_WORD_SET]
    last, first = (secret[-1], secret[0]) if secret else (-1, len(parts))
    return any(p in _DESCRIBING_WORDS for p in parts[last + 1 :]) or any(p in _AMOUNT_WORDS for p in parts[:first])


@functools.lru_cache(maxsize=4096)
def _default_secret_key(key: str) -> bool:
    parts = _key_parts(key)
    if any(p in _SECRET_WORD_SET for p in parts) or any(
        parts[i] + parts[i + 1] in _SECRET_WORD_SET for i in range(len(parts) - 1)
    ):
        return not _describes_secret(key)
    return False


class _Policy:
    """Settings compiled once: capture flag, limits and redaction rules (incl. the user's extras)."""

    def __init__(self, settings: _config.Settings) -> None:
        self.settings = settings
        self.capture = settings.capture_content
        self.max_value_bytes = max(0, settings.max_value_bytes)
        self.max_span_bytes = max(0, settings.max_span_payload_bytes)
        self.extra_patterns: list[re.Pattern[str]] = []
        for pattern in settings.redact_patterns:
            with internal_errors("content.redact_patterns"):
                self.extra_patterns.append(re.compile(pattern))
        extra_keys = tuple(k.strip() for k in settings.redact_keys if k.strip())
        self.extra_keys = frozenset(k.lower() for k in extra_keys)
        self.extra_key_value = _key_value_pattern(extra_keys) if extra_keys else None
        self.known_keys: dict[str, bool] = {}
        # The keys seen so far that are not secret (a subset of `known_keys`): a dict whose keys are all
        # in it passes `_as_is`'s key test in one C-level set operation.
        self.plain_keys: set[str] = set()
        # The common case: the built-in rules only (one call less per text, and `_as_is` can test
        # all of a value's texts at once).
        self.builtin_only = not self.extra_patterns and self.extra_key_value is None
        self._redact = _redact_known if self.builtin_only else self._redact_all
        # Texts known to need no redaction under this policy. An agent sends its whole conversation
        # again on every call, so most texts a call records were scanned on an earlier call: asking
        # the set costs a hash lookup (cached on the string object) instead of a regex scan of every
        # character. Bounded: starts over past _CLEAN_TEXTS entries or _CLEAN_CHARS characters.
        self.clean_texts: set[str] = set()
        self._clean_chars = 0
        # The JSON texts of values `_as_is` vouched for, for values a run sends again on every call
        # (system instructions, tool definitions: `Payload.encode(..., repeated=True)`). A value whose
        # text is here needs no walk: the same text means the same keys, strings and structure, all
        # of which passed under this policy (the set lives and dies with it). Bounded like clean_texts.
        self.clean_json: set[str] = set()
        self._clean_json_chars = 0
        # Encodings `_known_json` skips: a text over the value limit was encoded whole for nothing (the
        # walker cuts it first), so after one the next few values go straight to the walk.
        self.skip_known = 0
        # Whether the keys of `_text_json`'s shapes are all in `plain_keys` (once they are, they stay).
        self.shape_keys_plain = False
        # The JSON texts `Payload` gave a prompt or an instruction of one text part (`_one_text`'s keys):
        # the same string sent again (an agent's system prompt, nearly always) is known by a look-up of
        # the string itself, not encoded again (see `remember_one_text`).
        self.one_texts: dict[tuple[str, ...], str] = {}

    def secret_key(self, key: str) -> bool:
        if _default_secret_key(key):
            return True
        return bool(self.extra_keys) and key.lower() in self.extra_keys

    def remember_key(self, key: str) -> bool:
        """`secret_key(key)`, remembered in `known_keys` (a plain dict: cheaper to ask than a call)."""
        secret = self.secret_key(key)
        if len(self.known_keys) < 4096:
            self.known_keys[key] = secret
            if not secret:
                self.plain_keys.add(key)
        return secret

    def redact_text(self, text: str) -> tuple[str, int]:
        if text in self.clean_texts:
            return text, 0
        redacted, count = self._redact(text)
        if not count:
            self.remember_clean(text)
        return redacted, count

    def remember_clean(self, text: str) -> None:
        """Remember that `text` needs no redaction (see `clean_texts`)."""
        self.clean_texts, self._clean_chars = _bounded_add(self.clean_texts, self._clean_chars, text)

    def remember_json(self, text: str) -> None:
        """Remember that `text` is the JSON of a value `_as_is` returned as it is (see `clean_json`)."""
        self.clean_json, self._clean_json_chars = _bounded_add(self.clean_json, self._clean_json_chars, text)

    def remember_one_text(self, key: tuple[str, ...], text: str) -> None:
        """Remember `text` as what `Payload` gives the value of `_one_text` key `key` under this policy: its
        value passed `_as_is` whole (so its text is a function of the key and the policy alone)."""
        if len(text) > _CLEAN_CHARS // 16:
            return
        if len(self.one_texts) >= 256:  # prompts by the hundred (each call's own): start over
            self.one_texts = {}
        self.one_texts[key] = text

    def _redact_all(self, text: str) -> tuple[str, int]:
        text, count = _redact_known(text)
        if self.extra_key_value is not None:
            text, n = _subn(self.extra_key_value, _key_value_replacement, text)
            count += n
        for pattern in self.extra_patterns:
            text, n = pattern.subn(REDACTED, text)
            count += n
        return text, count


_policy_cache: _Policy | None = None


def _policy() -> _Policy:
    global _policy_cache
    settings = _config.current()
    policy = _policy_cache
    if policy is None or policy.settings is not settings:
        policy = _policy_cache = _Policy(settings)
    return policy


def redact_text(text: str) -> tuple[str, int]:
    """The text with every recognised secret replaced by [REDACTED], and how many were replaced."""
    return _policy().redact_text(text)


# --- JSON-safe conversion (with optional redaction) ---------------------------------------------------


def _qualname(obj: Any) -> str:
    t = type(obj)
    module = getattr(t, "__module__", "")
    name = getattr(t, "__qualname__", t.__name__)
    return name if module in ("builtins", "", None) else f"{module}.{name}"


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _safe_repr(value: Any) -> str:
    try:
        text = repr(value)
        if isinstance(text, str):
            # Memory addresses differ from run to run and would make every run's payload differ.
            return _ADDRESS.sub("", text) if " at 0x" in text else text
    except Exception:  # noqa: BLE001 - a user's __repr__ may raise anything
        pass
    return f"<unrepresentable {_qualname(value)}>"


class _Walker:
    """One conversion of a value to plain JSON types: bounded, cycle-safe, optionally redacting."""

    __slots__ = ("policy", "string_cap", "budget", "nodes", "redactions", "truncated", "_path")

    def __init__(self, policy: _Policy | None, string_cap: int | None) -> None:
        self.policy = policy  # None: convert only, no redaction
        # With a cap, strings share a budget of that many characters: once it is spent the rest are cut
        # short, so an enormous value costs little to redact and serialise (it is truncated anyway).
        self.string_cap = string_cap
        self.budget = string_cap if string_cap is not None else 0
        self.nodes = 0
        self.redactions = 0
        self.truncated = False
        self._path: set[int] = set()

    def text(self, value: str) -> str:
        cap = self.string_cap
        if cap is not None:
            limit = min(cap, max(self.budget, _MIN_STRING_CHARS))
            if len(value) > limit:
                value = _cut_before_word(value, limit)
                self.truncated = True
            self.budget -= len(value)
        if self.policy is not None:
            value, n = self.policy.redact_text(value)
            self.redactions += n
        return value

    def key(self, key: Any) -> str:
        if isinstance(key, str):
            return key
        if key is None or isinstance(key, (bool, int, float)):
            if isinstance(key, int) and key.bit_length() > _INT_BITS:
                return hex(key)
            return json.dumps(key) if not isinstance(key, float) or math.isfinite(key) else repr(key)
        if isinstance(key, enum.Enum):
            return str(key.value)
        return _safe_repr(key)

    def walk(self, value: Any, depth: int = 0) -> Any:
        t = type(value)
        if t is str:
            return self.text(value)
        if value is None or t is bool:
            return value
        if t is int:
            return value if value.bit_length() <= _INT_BITS else self.text(hex(value))
        if t is float:
            return value if math.isfinite(value) else repr(value)
        if t is dict or t is list or t is tuple:
            return self._container(value, depth)
        return self._other(value, depth)

    def _container(self, value: Any, depth: int) -> Any:
        if depth >= _MAX_DEPTH:
            self.truncated = True
            return "[max depth]"
        ident = id(value)
        if ident in self._path:
            return "[cycle]"
        self._path.add(ident)
        try:
            if isinstance(value, dict):
                return self._mapping(value.items(), len(value), depth)
            return self._sequence(value, len(value), depth)
        finally:
            self._path.discard(ident)

    def _mapping(self, items: Any, size: int, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        policy = self.policy
        for i, (k, v) in enumerate(items):
            if i >= _MAX_ITEMS or self._full():
                out["…"] = f"[{size - i} more keys]"
                self.truncated = True
                break
            key = self.key(k)
            if policy is not None and policy.secret_key(key) and _is_scalar_secret(v):
                out[key] = REDACTED
                self.redactions += 1
            else:
                out[key] = self.walk(v, depth + 1)
        return out

    def _sequence(self, items: Any, size: int, depth: int) -> list[Any]:
        out = []
        for i, v in enumerate(items):
            if i >= _MAX_ITEMS or self._full():
                out.append(f"[{size - i} more items]")
                self.truncated = True
                break
            out.append(self.walk(v, depth + 1))
        return out

    def _full(self) -> bool:
        """Whether this value already has as many members as any payload may (capped walks only)."""
        self.nodes += 1
        return self.string_cap is not None and self.nodes > _MAX_NODES

    def _other(self, value: Any, depth: int) -> Any:  # noqa: C901 - one flat dispatch reads best here
        try:
            if isinstance(value, str):
                return self.text(str.__str__(value))
            if isinstance(value, bool):
                return bool(value)
            if isinstance(value, enum.Enum):
                return self.walk(value.value, depth + 1) if depth < _MAX_DEPTH else str(value.name)
            if isinstance(value, int):
                return self.walk(int(value), depth)
            if isinstance(value, float):
                return self.walk(float(value), depth)
            if isinstance(value, (dict, list, tuple)):
                if isinstance(value, tuple) and hasattr(value, "_asdict"):  # namedtuple
                    return self._guarded(value, depth, lambda: value._asdict())
                return self._container(value, depth)
            if isinstance(value, (bytes, bytearray, memoryview)):
                return self._bytes(bytes(value[: self._bytes_cap()]), len(value))
            if isinstance(value, (set, frozenset, deque)):
                return self._guarded(value, depth, lambda: _ordered(value))
            if isinstance(value, _dt.datetime | _dt.date | _dt.time):
                return value.isoformat()
            if isinstance(value, _dt.timedelta):
                return value.total_seconds()
            if isinstance(value, (uuid.UUID, Decimal, PurePath, complex)):
                return self.text(str(value))
            numpy = sys.modules.get("numpy")
            if numpy is not None:
                if isinstance(value, numpy.generic):
                    return self.walk(value.item(), depth)
                if isinstance(value, numpy.ndarray):
                    items = value.ravel()[:_MAX_ITEMS].tolist() if value.size > _MAX_ITEMS else value.tolist()
                    return self._guarded(value, depth, lambda: items, size=max(value.size, len(items)))
            if isinstance(value, BaseException):
                return self.text(f"{_qualname(value)}: {_safe_str(value)}")
            t = type(value)
            if hasattr(t, "model_dump") and hasattr(t, "model_fields"):  # pydantic v2
                return self._guarded(value, depth, lambda: value.model_dump(mode="json"))
            if hasattr(t, "dict") and hasattr(t, "__fields__"):  # pydantic v1
                return self._guarded(value, depth, lambda: value.dict())
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                return self._guarded(
                    value, depth, lambda: {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
                )
            if isinstance(value, Mapping):
                return self._guarded(value, depth, lambda: dict(value.items()))
            if t.__repr__ is object.__repr__ and hasattr(value, "__dict__") and not isinstance(value, type):
                # A plain object: its public attributes say more than "<X object at 0x...>", and stay
                # stable between runs (an address would make every run differ).
                return self._guarded(
                    value,
                    depth,
                    lambda: {"__class__": _qualname(value)}
                    | {k: v for k, v in vars(value).items() if not k.startswith("_")},
                )
            if t.__repr__ is object.__repr__:
                return f"<{_qualname(value)}>"
        except Exception:  # noqa: BLE001 - whatever a user type does, conversion goes on
            pass
        return self.text(_safe_repr(value))

    def _guarded(self, value: Any, depth: int, convert: Any, size: int | None = None) -> Any:
        """Convert through a plain container built by `convert` (which may run user code)."""
        if depth >= _MAX_DEPTH:
            self.truncated = True
            return "[max depth]"
        ident = id(value)
        if ident in self._path:
            return "[cycle]"
        self._path.add(ident)
        try:
            plain = convert()
            if isinstance(plain, dict):
                return self._mapping(plain.items(), len(plain), depth)
            if isinstance(plain, (list, tuple)):
                if size is not None and size > len(plain):
                    out = self._sequence(plain, len(plain), depth)
                    out.append(f"[{size - len(plain)} more items]")
                    self.truncated = True
                    return out
                return self._sequence(plain, len(plain), depth)
            return self.walk(plain, depth + 1)
        except Exception:  # noqa: BLE001 - a failing model_dump / property falls back to repr
            return self.text(_safe_repr(value))
        finally:
            self._path.discard(ident)

    def _bytes_cap(self) -> int:
        return self.string_cap if self.string_cap is not None else sys.maxsize

    def _bytes(self, data: bytes, size: int) -> str:
        if size > len(data):
            self.truncated = True
        try:
            return self.text(data.decode("utf-8"))
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(data).decode("ascii")


def _as_is(value: Any, policy: _Policy, room: int, encoded: str | None = None) -> str | None:
    """The JSON text of `value` itself when `_Walker(policy, room + _PRECUT_MARGIN)` would return it
    unchanged (JSON-equal); None when it would not (or in any doubt): the walker's path then runs.

    Only plain JSON types qualify (exact dict, list, tuple, str, int, bool, None, finite float; str
    keys) within the walker's depth, item and node bounds, whose strings add up to at most `room`
    characters (so none is cut: see `_Walker.text`) and where no redaction rule and no secret key
    applies. Such a value (messages, most tool arguments) is serialised directly, without the
    walker's copy. Nothing is changed here and no user code runs: exact types only.

    The test and the encoding are one function, the containers walked in a loop over a stack, not
    a recursion: every payload of every model call comes here, and on that path (providers/_core.py)
    each Python call costs more than the loop's step. The order containers are visited in changes
    nothing: each test is per container, or on totals. `encoded`, when given, is `value`'s text
    already made (`_known_json`), returned instead of encoding it again.
    """
    t = type(value)
    if t is str:
        return _dumps(value) if len(value) <= room and not policy.redact_text(value)[1] else None
    if not (t is dict or t is list or t is tuple):
        plain = value is None or t is bool or t is int or (t is float and math.isfinite(value))
        return _dumps(value) if plain else None
    texts: list[str] = []
    plain_keys = policy.plain_keys
    stack = [(value, 0)]
    nodes = 0
    while stack:
        container, depth = stack.pop()
        size = len(container)
        nodes += size
        if depth >= _MAX_DEPTH or size > _MAX_ITEMS or nodes > _MAX_NODES:
            return None
        if type(container) is dict:
            # Keys already known to be plain text that is no secret (nearly always): one set operation.
            if not plain_keys.issuperset(container) and not _plain_keys(container, policy):
                return None
            container = container.values()
        for v in container:
            t = type(v)
            if t is str:
                texts.append(v)
            elif t is dict or t is list or t is tuple:
                stack.append((v, depth + 1))
            elif not (v is None or t is bool or t is int or (t is float and math.isfinite(v))):
                return None
    if sum(map(len, texts)) > room:
        return None
    # Texts seen clean before are skipped (the usual case: one C-level look, no list).
    if not policy.clean_texts.issuperset(texts) and not _fresh_clean(texts, policy):
        return None
    if encoded is not None:  # the caller's encoding of `value` (see `_known_json`)
        return encoded
    return "".join(_one_shot(value, 0)) if _one_shot is not None else _dumps(value)


def _fresh_clean(texts: list[str], policy: _Policy) -> bool:
    """Whether no redaction applies to any of `texts` (some not in `policy.clean_texts`); the clean
    ones are remembered there. One look at all the new ones when no built-in rule can match any of
    them, else the walker's own test, text by text."""
    clean = policy.clean_texts
    fresh = [text for text in texts if text not in clean]
    if policy.builtin_only and _may_match(" ".join(fresh)) is None:
        for text in fresh:
            policy.remember_clean(text)
        return True
    redact = policy.redact_text
    return not any(redact(text)[1] for text in fresh)


# The GenAI shapes `_text_json` knows, by their keys in order: a text part (or any part made of a type and a
# text: reasoning), an input message, an output message.
_PART_KEYS = ("type", "content")
_MESSAGE_KEYS = ("role", "parts")
_OUTPUT_KEYS = ("role", "parts", "finish_reason")
_SHAPE_KEYS = frozenset(_PART_KEYS + _OUTPUT_KEYS)
# At most this many texts in a value `_text_json` takes: its containers then hold at most 5.5 members a
# text (a part 2 keys for 2 texts, a message 3 keys and a list item for 1), within `_MAX_NODES`.
_MAX_SHAPE_TEXTS = 3000


def _text_json(value: Any, policy: _Policy, room: int) -> str | None:
    """`_as_is(value, policy, room)` for the GenAI shapes of text: a list of messages whose parts are
    all text (an output message, nearly always), a message, a list of text parts; None for any other
    value (the caller's general path then decides).

    The same tests `_as_is` makes (plain keys, plain strings, bounds, no redaction rule applying), by
    matching the shape instead of walking it: every model call records its output this way, and the
    walk costs several times the match. One function, its loops inline: it runs once a call, with its
    code cold (see `ModelCall`), where each Python call and each bytecode costs several times what it
    costs in a loop. The text is the encoder's, of `value` itself: the shape only vouches for it.
    """
    if not policy.shape_keys_plain:
        if _one_shot is None or not policy.plain_keys.issuperset(_SHAPE_KEYS):
            return None
        policy.shape_keys_plain = True  # for good: `plain_keys` only grows
    t = type(value)
    texts: Any = None
    if t is list and len(value) == 1:
        # One message of one part (a model's answer, nearly always): its four texts, straight.
        message = value[0]
        if type(message) is dict and tuple(message) == _OUTPUT_KEYS:
            role, parts, finish = message.values()
            if type(parts) is list and len(parts) == 1:
                part = parts[0]
                if type(part) is dict and tuple(part) == _PART_KEYS:
                    kind, content = part.values()
                    # Its tests made on the four values themselves (no list, no temporary sets: each C path
                    # this takes cold costs like a Python call); any doubt goes to the tests below.
                    if type(role) is str and type(kind) is str and type(content) is str and (finish is None or type(finish) is str):
                        clean = policy.clean_texts
                        if (
                            len(role) + len(kind) + len(content) + (0 if finish is None else len(finish)) <= room
                            and content in clean
                            and role in clean
                            and kind in clean
                            and (finish is None or finish in clean)
                        ):
                            # The encoder's text, written around the one text that varies: the C encoder's
                            # walk of the message costs ~10x encoding that string (1.98 vs 0.23 µs warm).
                            pieces = _OUTPUT_PIECES.get((role, kind, finish)) or _output_pieces(role, kind, finish)
                            return pieces[0] + _encode_string(content) + pieces[1]
                    texts = [role, kind, content] if finish is None else [role, finish, kind, content]
    if texts is None:
        if t is list:
            if len(value) > _MAX_ITEMS:
                return None
            # A list of messages, or of parts (one message's worth, with no role and no finish reason).
            messages = value if value and type(value[0]) is dict and "role" in value[0] else ({"role": "", "parts": value},)
        elif t is dict:
            messages = (value,)
        else:
            return None
        # The texts, their types tested at the end all at once: a part's values are taken as they are.
        texts = []
        add = texts.append
        extend = texts.extend
        for message in messages:
            if type(message) is not dict:
                return None
            keys = tuple(message)
            if keys == _OUTPUT_KEYS:
                role, parts, finish = message.values()
                if finish is not None:
                    add(finish)
            elif keys == _MESSAGE_KEYS:
                role, parts = message.values()
            else:
                return None
            if type(parts) is not list or len(parts) > _MAX_ITEMS:
                return None
            add(role)
            for part in parts:
                if type(part) is not dict or tuple(part) != _PART_KEYS:
                    return None
                extend(part.values())
    if not _STR_ONLY.issuperset(map(type, texts)) or len(texts) > _MAX_SHAPE_TEXTS or sum(map(len, texts)) > room:
        return None
    if not policy.clean_texts.issuperset(texts) and not _fresh_clean(texts, policy):
        return None
    return "".join(_one_shot(value, 0))


_STR_ONLY = frozenset((str,))

# (role, part type, finish reason) -> the JSON text of an output message of that one part, before its text
# and after it: what `_dumps` writes around the text (its key order is `_text_json`'s shape's).
_OUTPUT_PIECES: dict[tuple[str, str, str | None], tuple[str, str]] = {}


def _output_pieces(role: str, kind: str, finish: str | None) -> tuple[str, str]:
    text = _dumps([{"role": role, "parts": [{"type": kind, "content": ""}], "finish_reason": finish}])
    # The only `"content":""` in the text: a quote inside an encoded string is always escaped.
    cut = text.index('"content":""') + len('"content":')
    pieces = (text[:cut], text[cut + 2 :])
    if len(_OUTPUT_PIECES) < 256:  # roles, part types and finish reasons are few
        _OUTPUT_PIECES[(role, kind, finish)] = pieces
    return pieces


def _known_json(value: Any, policy: _Policy, room: int) -> tuple[str | None, bool]:
    """(`value`'s JSON text, whether `_as_is` vouched for that text before); (None, False) when it is no
    plain container or has no JSON text (the walker decides).

    Same text, same answer: `_as_is` decides from keys, strings, structure and the strings' total
    length, all written in the text (which is at least as long as its strings). Encoding first costs a
    C call; the walk it saves costs more whenever the value repeats, and is still taken when it does not.
    A text over `room` was made for nothing (the walker cuts the value before encoding it; encoding
    costs ~15 ms a megabyte), so the next `_SKIP_KNOWN` values are not encoded first.
    """
    if _one_shot is None or type(value) not in (list, dict, tuple):
        return None, False
    if policy.skip_known:
        policy.skip_known -= 1
        return None, False
    try:
        text = "".join(_one_shot(value, 0))
    except Exception:  # noqa: BLE001 - not plain JSON (an SDK object, a cycle): the walker's value
        return None, False
    if len(text) > room:
        policy.skip_known = _SKIP_KNOWN
        return text, False
    return text, text in policy.clean_json


_SKIP_KNOWN = 16


def _one_text(value: Any) -> tuple[str, ...] | None:
    """A key for a list of one text part, (type, text), or of one message of one text part, (role, type, text);
    None for any other value. What the GenAI shape of a plain-string prompt or instruction is made of, in the
    order its JSON text writes it: two values with one key have one text."""
    if type(value) is not list or len(value) != 1:
        return None
    item = value[0]
    if type(item) is not dict:
        return None
    keys = tuple(item)
    if keys == _PART_KEYS:
        kind, content = item.values()
        return (kind, content) if type(kind) is str and type(content) is str else None
    if keys != _MESSAGE_KEYS:
        return None
    role, parts = item.values()
    if type(role) is not str or type(parts) is not list or len(parts) != 1:
        return None
    part = parts[0]
    if type(part) is not dict or tuple(part) != _PART_KEYS:
        return None
    kind, content = part.values()
    return (role, kind, content) if type(kind) is str and type(content) is str else None


def _plain_keys(mapping: dict[Any, Any], policy: _Policy) -> bool:
    """Whether every key is a str and none is a secret key over a value the walker would hide."""
    known = policy.known_keys
    for k, v in mapping.items():
        if type(k) is not str:
            return False
        secret = known.get(k)
        if secret is None:
            secret = policy.remember_key(k)
        if secret and _is_scalar_secret(v):
            return False
    return True


def _cut_before_word(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, dropping the word the cut went through.

    The cut happens before redaction; a secret it cut through would no longer match its rule, and its
    visible half would stay. Dropping the last run of non-space characters (up to 512) removes it.
    """
    text = text[:limit]
    tail = text[-512:]
    last_space = max(tail.rfind(" "), tail.rfind("\n"), tail.rfind("\t"), tail.rfind("\r"))
    return text[: len(text) - len(tail) + last_space + 1] if last_space >= 0 else text[: len(text) - len(tail)]


def _safe_str(value: Any) -> str:
    try:
        return str(value)
    except Exception:  # noqa: BLE001
        return f"<unprintable {_qualname(value)}>"


def _ordered(value: Any) -> list[Any]:
    """Set members in a stable order, so equal sets serialise equally from run to run."""
    items = list(value)
    if isinstance(value, deque):
        return items
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=_safe_repr)


def _is_scalar_secret(value: Any) -> bool:
    """Under a secret key, text is hidden; numbers, flags and containers are kept (and walked)."""
    return isinstance(value, (str, bytes, bytearray)) or (
        value is not None and not isinstance(value, (int, float, bool, dict, list, tuple, set, frozenset))
    )


def to_json_safe(value: Any) -> Any:
    """`value` as plain JSON types (dict, list, str, int, float, bool, None). Never raises.

    Dataclasses, pydantic models, bytes, sets, datetimes, enums, numpy values and plain objects are
    converted; cycles become "[cycle]"; anything else becomes its repr (or a placeholder when even
    that fails). Containers are bounded to 1000 items and 32 levels.
    """
    try:
        return _Walker(None, None).walk(value)
    except Exception:  # noqa: BLE001 - e.g. RecursionError from a pathological object
        return f"<unserialisable {_qualname(value)}>"


def redact(value: Any) -> tuple[Any, int]:
    """`value` made JSON-safe with every secret (by shape, or under a secret key) replaced, and the count."""
    walker = _Walker(_policy(), None)
    try:
        return walker.walk(value), walker.redactions
    except Exception:  # noqa: BLE001
        return f"<unserialisable {_qualname(value)}>", 0


# --- Truncation ---------------------------------------------------------------------------------------


def _make_dumps() -> tuple[Callable[[Any], str], Any]:
    """One encoder for every payload (json.dumps with options builds a new encoder on each call), and
    the C encoder it calls (None where there is none): `"".join(one_shot(value, 0))` is `dumps(value)`.

    `JSONEncoder.encode` also builds its C encoder on each call; what it encodes here is always plain
    JSON without cycles (the walker's output, or a value `_as_is` vouched for), so one C encoder
    without the cycle check is built once. Where that C API differs, the plain encoder is used.
    """
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    try:
        from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]

        one_shot = c_make_encoder(None, None, encode_basestring, None, ":", ",", False, False, True)
        sample = {"a": [1, 2.5, -0.0, 1e300, True, None, "é\n\"\ud800", (3,)], "": {}}
        if c_make_encoder is None or "".join(one_shot(sample, 0)) != encode(sample):
            return encode, None

        def dumps(value: Any) -> str:
            return "".join(one_shot(value, 0))

        return dumps, one_shot
    except Exception:  # noqa: BLE001 - another Python's json internals: the public encoder
        return encode, None


_dumps, _one_shot = _make_dumps()
# How `_one_shot` writes a string (the function it was made with): `_text_json` writes one message's text with it.
_encode_string = json.encoder.encode_basestring


def _utf8_len(text: str) -> int:
    # Most payloads are ASCII: len() is then exact and far cheaper than encoding. A lone surrogate (bytes
    # decoded with surrogateescape: a tool's output) counts its 3 bytes, the size of the U+FFFD the store
    # puts in its place; strict UTF-8 would raise, and lose the value (or a model call's whole span).
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _shrink(value: Any, string_cap: int, item_cap: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= string_cap else value[:string_cap] + _TRUNCATED_MARK
    if isinstance(value, list):
        out = [_shrink(v, string_cap, item_cap) for v in value[:item_cap]]
        if len(value) > item_cap:
            out.append(f"[{len(value) - item_cap} more items]")
        return out
    if isinstance(value, dict):
        out_d = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= item_cap:
                out_d["…"] = f"[{len(value) - item_cap} more keys]"
                break
            out_d[k] = _shrink(v, string_cap, item_cap)
        return out_d
    return value


def _fit(value: Any, text: str, room: int) -> str:
    """JSON text of `value` in at most `room` UTF-8 bytes, cut where it keeps the structure valid."""
    string_cap = max(room // 2, 8)
    item_cap = _MAX_ITEMS
    for _ in range(40):
        candidate = _dumps(_shrink(value, string_cap, item_cap))
        if _utf8_len(candidate) <= room:
            return candidate
        if string_cap > 8:
            string_cap //= 2
        if item_cap > 1 and string_cap <= 64:
            item_cap //= 2
        elif string_cap <= 8 and item_cap <= 1:
            break
    # Too deep or too wide to shrink into place: keep the beginning of the text, as one JSON string.
    keep = max(room // 6 - len(_TRUNCATED_MARK), 0)
    while True:
        candidate = _dumps(text[:keep] + _TRUNCATED_MARK)
        if _utf8_len(candidate) <= room or keep == 0:
            return candidate if _utf8_len(candidate) <= room else '""'
        keep //= 2


# --- Payload ------------------------------------------------------------------------------------------


class Payload:
    """The payloads of one span: each value encoded within the per-value limit and the span's budget.

    `encode` returns JSON text (or None when capture is off); `redactions` and `truncated` accumulate
    over the span's values and `apply_markers` records them on the span.
    """

    __slots__ = ("redactions", "truncated", "_policy", "_budget")

    def __init__(self) -> None:
        # `_policy()`, its usual case inline (one Payload per model call, run cold: see `_text_json`); with no
        # settings installed yet, `_policy()` installs them.
        policy = _policy_cache
        if policy is None or policy.settings is not _config._current:
            policy = _policy()
        self._policy = policy
        self._budget = self._policy.max_span_bytes
        self.redactions = 0
        self.truncated = False

    @property
    def capture(self) -> bool:
        return self._policy.capture

    def encode(self, value: Any, *, content: bool = True, repeated: bool = False) -> str | None:
        """`value` as redacted, bounded JSON text; None when capture is off (nothing may be recorded).

        `content=False` marks a value that is not content (document ids and scores, say): it is still
        redacted and bounded, but recorded whether capture is on or off. `repeated=True` marks a value
        sent again and again as it is (a run's system instructions, its tool definitions): the JSON
        text of one seen before is recognised without walking it (`_Policy.clean_json`).
        """
        policy = self._policy
        if content and not policy.capture:
            return None
        # One function, not two: it runs on every model call, with its code cold (providers/_core.py).
        try:
            room = policy.max_value_bytes
            if self._budget < room:
                room = self._budget
            if room < _MIN_ROOM:
                self.truncated = True
                return '"[truncated]"' if self._budget >= 13 else '""'
            truncated = walked = False
            key = None
            try:
                if repeated:
                    key = _one_text(value)
                    if key is not None:
                        text = policy.one_texts.get(key)
                        # What the lines below give it whenever it is within `room` as it is (no cut).
                        if text is not None and len(text) * 4 <= room:
                            self._budget -= len(text)
                            return text
                    text, known = _known_json(value, policy, room)
                    if not known:
                        text = _as_is(value, policy, room, text)
                        if text is not None:
                            policy.remember_json(text)
                else:
                    # Text-only messages (an output, nearly always) matched by their shape, other plain
                    # values tested by `_as_is`: their text, without the walker's copy.
                    text = _text_json(value, policy, room)
                    if text is None:
                        text = _as_is(value, policy, room)
            except ValueError:  # an int past str()'s digit limit: the walker writes it as hex
                text = None
            if text is None:
                walked = True
                walker = _Walker(policy, room + _PRECUT_MARGIN)
                try:
                    safe = walker.walk(value)
                except RecursionError:
                    safe = f"<unserialisable {_qualname(value)}>"
                self.redactions += walker.redactions
                truncated = walker.truncated
                text = _dumps(safe)
            else:
                safe = value
            size = len(text)
            if size * 4 > room:  # possibly over: measure exactly (4 bytes is the most a character takes)
                size = _utf8_len(text)
                if size > room:
                    text = _fit(safe, text, room)
                    size = _utf8_len(text)
                    truncated = True
            if truncated:
                self.truncated = True
            elif key is not None and not walked:  # `_as_is`'s text, uncut: a function of the key
                policy.remember_one_text(key, text)
            self._budget -= size
            return text
        except Exception as exc:  # noqa: BLE001 - on the hot path: try/except is cheaper than a context manager
            report_internal_error("content.encode", exc)
            return None

    def encode_messages(self, messages: Any) -> str | None:
        """A model call's input messages as JSON text, each message within the per-value limit on its own.

        The store keeps each message of a conversation once (store/messages.py), so a long conversation
        costs no more than its messages: the limit bounds one message (a huge tool result), not the
        conversation, and the span's budget is left to the other payloads. The text is what `encode`
        gives the list whenever that cuts nothing.
        """
        policy = self._policy
        if not policy.capture:
            return None
        if type(messages) not in (list, tuple) or not messages:
            return self.encode(messages)
        room = policy.max_value_bytes
        # A prompt of one text seen before under this policy: its text (made below, from the same key).
        key = _one_text(messages)
        if key is not None:
            text = policy.one_texts.get(key)
            if text is not None:
                return text
        texts: list[str | None] = []  # each message's text as it is, None where `encode` must decide (below)
        if room >= _MIN_ROOM:
            # The whole fits one value, as it is (the usual case): the texts of its messages, joined.
            # A conversation is sent again on every call with one or two messages more, so each
            # message seen before is known by its text (`_known_json`) and only the new ones are
            # walked. (Every message as it is and the whole within the limit is exactly when the
            # list's own text passes; its JSON, keys and all, may still be over: then message by message.)
            try:
                whole = True
                for message in messages:
                    text, known = _known_json(message, policy, room)
                    if not known:
                        text = _as_is(message, policy, room, text)
                        if text is None:
                            whole = False
                        else:
                            policy.remember_json(text)
                    texts.append(text)
                if whole:
                    text = "[" + ",".join(texts) + "]"  # type: ignore[arg-type]
                    if len(text) * 4 <= room or _utf8_len(text) <= room:
                        if key is not None:
                            policy.remember_one_text(key, text)
                        return text
            except Exception:  # noqa: BLE001 - the message-by-message path below reports it
                pass
        # Message by message (a conversation past the limit, or with a secret in one message: every
        # later call of a long run). A message whose text was found above is what `encode` gives it, as
        # it is, when that fits the limit (`_as_is` passed it with this room, and encode cuts only a text
        # over it): only the others are walked, not every message of the conversation on every call.
        budget = self._budget
        try:
            parts = []
            for i, message in enumerate(messages):
                known = texts[i] if i < len(texts) else None
                if known is not None and (len(known) * 4 <= room or _utf8_len(known) <= room):
                    parts.append(known)
                    continue
                self._budget = room
                text = self.encode(message)
                parts.append("null" if text is None else text)
            return "[" + ",".join(parts) + "]"
        finally:
            self._budget = budget

    def set(self, span: Span, attribute: str, value: Any, *, content: bool = True) -> None:
        """Encode `value` and set it on `span` as `attribute`; nothing when capture is off."""
        encoded = self.encode(value, content=content)
        if encoded is not None:
            span.set_attribute(attribute, encoded)

    def apply_markers(self, span: Span) -> None:
        """Record on `span` how many secrets were redacted and whether anything was truncated."""
        if self.redactions:
            span.set_attribute(AGENTOTEL_PAYLOAD_REDACTIONS, self.redactions)
        if self.truncated:
            span.set_attribute(AGENTOTEL_PAYLOAD_TRUNCATED, True)
