"""Cost: genai-prices offline, the user's price file first, and no cost at all for an unknown model."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentotel import _config
from agentotel.cost import cost_usd

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh_settings():
    _config.reset()
    yield
    _config.reset()


def test_known_models_are_priced_per_provider():
    # gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per million tokens.
    assert cost_usd("openai", "gpt-4o-mini", input_tokens=1000, output_tokens=100, cache_read_tokens=200) == pytest.approx(
        (800 * 0.15 + 200 * 0.075 + 100 * 0.6) / 1e6
    )
    # Dated snapshots resolve to their model.
    assert cost_usd("openai", "gpt-4o-mini-2024-07-18", input_tokens=1000, output_tokens=0) == pytest.approx(0.15e-3)
    # claude sonnet 4: $3 input, $0.30 cache read, $3.75 cache write, $15 output.
    assert cost_usd(
        "anthropic", "claude-sonnet-4-20250514", input_tokens=1300, output_tokens=10, cache_read_tokens=1000, cache_write_tokens=200
    ) == pytest.approx((100 * 3 + 1000 * 0.3 + 200 * 3.75 + 10 * 15) / 1e6)


def test_unknown_model_has_no_cost_and_logs_why(caplog):
    caplog.set_level(logging.DEBUG, logger="agentotel.cost")
    assert cost_usd("openai", "my-private-model-7", input_tokens=100, output_tokens=10) is None
    assert cost_usd("openai", None, input_tokens=100, output_tokens=10) is None
    assert "my-private-model-7" in caplog.text


def test_price_file_overrides_and_adds_models(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({
        "my-finetune": {"input": 2.0, "output": 8.0, "cache_read": 0.5},
        "openai/gpt-4o-mini": {"input": 1.0, "output": 1.0},
    }))  # fmt: skip
    _config.configure(_config.Settings.resolve(prices_file=str(prices)))
    assert cost_usd("openai", "my-finetune", input_tokens=1000, output_tokens=100, cache_read_tokens=400) == pytest.approx(
        (600 * 2 + 400 * 0.5 + 100 * 8) / 1e6
    )
    assert cost_usd("openai", "gpt-4o-mini", input_tokens=1000, output_tokens=1000) == pytest.approx(2000 / 1e6)
    assert cost_usd("azure.ai.openai", "gpt-4o-mini", input_tokens=1000, output_tokens=0) != pytest.approx(1000 / 1e6)


def test_prices_work_without_network(tmp_path):
    """genai-prices ships its data: pricing in a process where every socket connect fails."""
    script = textwrap.dedent(
        """
        import socket
        def refuse(*a, **k):
            raise OSError("no network")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from agentotel.cost import cost_usd
        print(cost_usd("openai", "gpt-4o", input_tokens=1000, output_tokens=1000))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert float(out.stdout.strip()) > 0, out.stderr


@pytest.mark.parametrize(
    "provider, model",
    [("openai", "gpt-4o-mini"), ("openai", "gpt-4-0613"), ("anthropic", "claude-sonnet-4-20250514"),
     ("openai", "text-embedding-3-small"), ("azure.ai.openai", "gpt-4o"), ("anthropic", "claude-opus-4-1")],
)  # fmt: skip
def test_fast_path_matches_the_library(provider, model):
    from genai_prices import Usage, calc_price

    ours = cost_usd(provider, model, input_tokens=3000, output_tokens=500, cache_read_tokens=1000, cache_write_tokens=200)
    usage = Usage(input_tokens=3000, output_tokens=500, cache_read_tokens=1000, cache_write_tokens=200)
    library = calc_price(usage, model, provider_id={"azure.ai.openai": "azure"}.get(provider, provider)).total_price
    assert ours == pytest.approx(float(library), rel=1e-9)
