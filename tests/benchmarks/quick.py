"""One benchmark area's quick run (`python -m benchmarks --quick AREA`), shared by the test_quick_<area>.py files.

Each area has a test file of its own so `--dist loadfile` spreads the quick runs over the workers (together
they were one ~100 s module fixture pinning one worker); test_quick.py checks every area has one.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = [ROOT / "benchmarks" / "RESULTS.md", ROOT / "benchmarks" / "results.json"]


def _fingerprint() -> dict[str, str | None]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in RESULTS}


def quick_section(area: str, **env: str) -> str:
    """Run AREA's benchmark in quick mode as a user would (with `env` added to the environment); return its section
    of the output once it exited 0 with no error row, printed a ratio (or n/a) and left RESULTS.md and results.json
    as they were."""
    before = _fingerprint()
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", area],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )
    assert _fingerprint() == before, "quick mode must not rewrite RESULTS.md or results.json"
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "ERROR" not in done.stdout
    assert done.stdout.startswith(f"benchmarks (quick): {area}\n"), done.stdout[:300]
    sections = dict(re.findall(r"^== (\S+)\n(.*?)(?=^== |\Z)", done.stdout, flags=re.M | re.S))
    assert list(sections) == [area], done.stdout[-3000:]
    body = sections[area]
    assert re.search(r"ratio (\d[\d.e+-]*×|n/a)", body), f"{area}: no ratio printed\n{body}"
    return body
