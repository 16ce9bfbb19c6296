"""A store on a read-only file system: `instrument()` warns once and the program runs on; the store still reads.

A real read-only mount (a bind mount with `ro`), not a permission bit: root ignores `chmod 555`, and
read-only media, snapshots and locked-down containers answer EROFS to everyone.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

import agentotel


@pytest.fixture
def read_only(tmp_path):
    """(source, mount): `mount` shows `source` read-only; skipped where bind mounts are not allowed."""
    source, mount = tmp_path / "source", tmp_path / "mount"
    source.mkdir()
    mount.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("needs the mount command for a read-only bind mount")
    made = subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("needs a read-only bind mount (root with CAP_SYS_ADMIN); the other unwritable-store "
                    "tests in test_instrument.py run everywhere")
    try:
        yield source, mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_read_only_store_is_one_warning_the_program_runs_on_and_the_store_still_reads(read_only, caplog):
    source, mount = read_only

    @agentotel.tool
    def lookup(order: str) -> str:
        return f"{order}: shipped"

    # Spans written before the folder became read-only (a snapshot, a copied store).
    agentotel.instrument(source / "store")
    with agentotel.run("before") as current:
        lookup("A-1")
        current.output = "done"
    assert agentotel.flush()
    agentotel.shutdown()

    for target in (mount / "store", mount / "new"):  # an existing store, and one that cannot be made
        with caplog.at_level("WARNING", logger="agentotel"):
            caplog.clear()
            agentotel.instrument(target)
        warnings = [r.getMessage() for r in caplog.records if "cannot write traces to" in r.getMessage()]
        assert len(warnings) == 1 and "Read-only file system" in warnings[0], warnings
        with agentotel.run("read-only") as current:
            assert lookup("A-2") == "A-2: shipped"  # the program's own work is untouched
            current.output = "still runs"
        assert agentotel.flush() is False  # nothing recorded was kept: flush says so
        agentotel.shutdown()

    traces = agentotel.open(mount / "store")  # reading needs no write
    assert traces.runs().project("name").fetchall() == [("before",)]
