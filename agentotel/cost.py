"""What a model call cost in US dollars, from the genai-prices library or the user's price file.

Prices come from `genai-prices`, which ships its data with the package and works offline (agentotel
never asks it to fetch updates). A JSON file named by `Settings.prices_file`
(`AGENTOTEL_PRICES_FILE`) overrides it for private or fine-tuned models:

    {"my-finetune": {"input": 3.0, "output": 12.0, "cache_read": 0.3, "cache_write": 3.75},
     "openai/gpt-4o": {"input": 2.0, "output": 8.0}}

Prices are USD per million tokens; a key is a model name, or `provider/model` to pin one provider.
A model neither source knows gets no cost (None) and a debug log line: never a guess, never $0.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import datetime, timezone
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from agentotel import _config

log = logging.getLogger("agentotel.cost")

__all__ = ["cost_usd"]

# gen_ai.provider.name -> genai-prices provider id, where they differ.
_PRICE_PROVIDERS = {"azure.ai.openai": "azure", "aws.bedrock": "aws", "gcp.vertex_ai": "google", "gcp.gemini": "google"}

# (provider, model) -> (hour, `_library_prices(provider, model, hour)`): see cost_usd.
_prices_now: dict[tuple[str | None, str], tuple[int, Any]] = {}

_override_lock = threading.Lock()
_override_cache: tuple[Path | None, float | None, dict[str, dict[str, float]]] = (None, None, {})


def cost_usd(
    provider: str | None,
    model: str | None,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> float | None:
    """The call's cost in USD, or None when the model's price is unknown.

    `input_tokens` includes the cache reads and writes (the GenAI convention); they are priced at
    their own rates when the price source has them.
    """
    if not model:
        return None
    settings = _config._current  # `_config.current()`, its usual case inline (once per model call: see below)
    if (settings if settings is not None else _config.current()).prices_file is not None:
        override = _override_price(provider, model)
        if override is not None:
            return _price_from_override(override, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)
    # Once per model call, so the usual case (a model with flat token rates) takes few calls: see
    # providers/_core.ModelCall on what a function costs there.
    # `_library_prices` of this hour, remembered per (provider, model) in a plain dict: its cache's own C
    # path (key tuple, linked list) run cold costs more than a dict look-up (see providers/_core.ModelCall).
    hour = int(time.time() // 3600)
    known = _prices_now.get((provider, model))
    if known is not None and known[0] == hour:
        found = known[1]
    else:
        found = _library_prices(provider, model, hour)
        if len(_prices_now) >= 1024:  # models by the thousand: start over
            _prices_now.clear()
        _prices_now[(provider, model)] = (hour, found)
    if found is not None and found[1] is not None:
        if not cache_read_tokens and not cache_write_tokens and input_tokens >= 0:
            # No cache tokens (most calls): `_price_from_override`'s sum without its zero terms, the
            # same float (adding 0.0 changes nothing), from the rates read once (found[2]).
            flat = found[2]
            return (input_tokens * flat[0] + output_tokens * flat[1]) / 1_000_000
        return _price_from_override(found[1], input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)
    return _price_from_library(provider, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)


def _price_from_override(
    price: Mapping[str, float], input_tokens: int, output_tokens: int, cache_read: int, cache_write: int
) -> float:
    base_input = price.get("input", 0.0)
    uncached = max(input_tokens - cache_read - cache_write, 0)
    return (
        uncached * base_input
        + cache_read * price.get("cache_read", base_input)
        + cache_write * price.get("cache_write", base_input)
        + output_tokens * price.get("output", 0.0)
    ) / 1_000_000


def _price_from_library(
    provider: str | None, model: str, input_tokens: int, output_tokens: int, cache_read: int, cache_write: int
) -> float | None:
    found = _library_prices(provider, model, int(time.time() // 3600))
    if found is None:
        log.debug("agentotel: no price known for model %r (provider %r); no cost recorded", model, provider)
        return None
    prices, rates, _ = found
    if rates is not None:
        # The common case (flat per-token prices): plain arithmetic, far faster than the library's
        # general calculation, which computes the same sum in Decimal (tests check they agree).
        return _price_from_override(rates, input_tokens, output_tokens, cache_read, cache_write)
    try:
        usage_cls, _ = _genai_prices()  # type: ignore[misc]
        usage = usage_cls(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read or None,
            cache_write_tokens=cache_write or None,
        )
        return float(prices.calc_price(usage)["total_price"])
    except Exception as exc:  # noqa: BLE001 - a price-library bug must not cost the span
        log.debug("agentotel: genai-prices failed for %s/%s: %r", provider, model, exc)
        return None


_TOKEN_KEYS = {"input_mtok": "input", "output_mtok": "output", "cache_read_mtok": "cache_read", "cache_write_mtok": "cache_write"}


@lru_cache(maxsize=1024)
def _library_prices(
    provider: str | None, model: str, hour: int
) -> tuple[Any, dict[str, float] | None, tuple[float, float] | None] | None:
    """The model's prices now (cached per hour: prices have start dates), its flat rates if it has them,
    and those rates' (input, output) pair for a call without cache tokens."""
    found = _library_model(provider, model)
    if found is None:
        return None
    try:
        prices = found.get_prices(datetime.now(tz=timezone.utc))
    except Exception as exc:  # noqa: BLE001
        log.debug("agentotel: genai-prices failed for %s/%s: %r", provider, model, exc)
        return None
    rates = _flat_token_rates(prices)
    return prices, rates, None if rates is None else (rates.get("input", 0.0), rates.get("output", 0.0))


def _flat_token_rates(prices: Any) -> dict[str, float] | None:
    """USD per million tokens when the model's prices are flat token rates (else None: use the library)."""
    rates: dict[str, float] = {}
    for key, value in vars(prices).items():
        if value is None or key.startswith("_"):
            continue
        if key in _TOKEN_KEYS and isinstance(value, Decimal):
            rates[_TOKEN_KEYS[key]] = float(value)
        elif "mtok" in key and not key.startswith(("input_audio", "output_audio", "cache_audio")) or key == "requests_kcount":
            return None  # tiered prices, or a unit our usage cannot express: the library decides
    return rates if "input" in rates else None


@lru_cache(maxsize=1024)
def _library_model(provider: str | None, model: str) -> Any:
    """genai-prices' model entry for (provider, model): the call's provider first, then any that knows it."""
    if _genai_prices() is None:
        return None
    from genai_prices import data_snapshot

    snapshot = data_snapshot.get_snapshot()
    provider_id = _PRICE_PROVIDERS.get(provider or "", provider)
    for candidate in dict.fromkeys([provider_id, None]):
        try:
            return snapshot.find_provider_model(model, None, candidate, None)[1]
        except LookupError:
            continue
    return None


@lru_cache(maxsize=1)
def _genai_prices() -> tuple[Any, Any] | None:
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # pragma: no cover - a declared dependency, but never fatal
        log.debug("agentotel: genai-prices is not installed; costs come from the price file only")
        return None
    return Usage, calc_price


def _override_price(provider: str | None, model: str) -> Mapping[str, float] | None:
    prices = _override_prices()
    if not prices:
        return None
    return prices.get(f"{provider}/{model}") or prices.get(model)


def _override_prices() -> dict[str, dict[str, float]]:
    """The user's price file, re-read when its path or modification time changes."""
    global _override_cache
    path = _config.current().prices_file
    if path is None:
        return {}
    try:
        mtime = path.stat().st_mtime
    except OSError:
        log.debug("agentotel: prices file %s not readable", path)
        return {}
    with _override_lock:
        cached_path, cached_mtime, cached = _override_cache
        if cached_path == path and cached_mtime == mtime:
            return cached
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            prices = {
                str(name): {k: float(v) for k, v in entry.items() if isinstance(v, (int, float))}
                for name, entry in data.items()
                if isinstance(entry, dict)
            }
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("agentotel: ignoring prices file %s: %s", path, exc)
            prices = {}
        _override_cache = (path, mtime, prices)
        return prices
