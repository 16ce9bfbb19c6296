"""Side-by-side measurements of agentotel against its comparisons; `python -m benchmarks --help`.

Each `benchmarks/bench_<area>.py` defines `run(quick: bool) -> list[benchmarks.harness.Result]`.
The command discovers them, runs all or a named subset, prints ratios, and in full mode regenerates
`benchmarks/RESULTS.md` (the committed numbers). See `benchmarks/harness.py` for the contract.
"""
