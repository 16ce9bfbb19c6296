"""Damaged Parquet files: found by their page checksums, set aside, never read as if they were whole.

Every Parquet file the store writes carries a CRC-32 per page (`publish`). DuckDB does not check
them, and a flipped bit inside a compressed page can decode to other values without any error, so
checking is done here, with pyarrow: by compaction before it merges a file (a merge would launder the
damage into a file with good checksums), by `verify_store()` (`agentotel.store.verify_store`), and by
the query layer when a query over the store fails. A damaged file is moved to
`<dir>/damaged/spans/<partition>/` with one warning, so the rest of the store keeps answering; a
reader that may not move it leaves it out of its own queries.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pyarrow.parquet as pq

log = logging.getLogger("agentotel.store")

DAMAGED_DIR = "damaged"

_damaged: dict[str, str] = {}  # path -> reason, for files this process found damaged but could not move
_lock = threading.Lock()


def check_file(path: str | os.PathLike[str]) -> str | None:
    """Why the Parquet file is damaged (a failed page checksum, an unreadable page), or None when it is whole.

    Reads every page (the cost of reading the whole file once). Raises FileNotFoundError when it is gone.
    """
    try:
        parquet = pq.ParquetFile(path, page_checksum_verification=True)
        for group in range(parquet.num_row_groups):
            parquet.read_row_group(group)
    except FileNotFoundError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to read a page means the same: damaged
        lines = str(exc).strip().splitlines()
        return lines[0] if lines else type(exc).__name__
    return None


def known_damaged(path: str | os.PathLike[str]) -> str | None:
    """The reason a file was found damaged by this process (when it could not be moved aside), else None."""
    with _lock:
        return _damaged.get(str(path))


def quarantine(directory: str | os.PathLike[str], path: str | os.PathLike[str], reason: str) -> Path | None:
    """Move a damaged file out of `spans/` to `damaged/spans/<partition>/`, with one warning; never raises.

    Returns where it went, or None when it could not be moved (then this process leaves it out).
    """
    path = Path(path)
    target_dir = Path(directory) / DAMAGED_DIR / "spans" / path.parent.name
    target = target_dir / path.name
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    except FileNotFoundError:
        return None  # moved already (another reader, a compaction)
    except OSError as exc:
        with _lock:
            first = str(path) not in _damaged
            _damaged[str(path)] = reason
        if first:
            log.warning("agentotel: %s is damaged (%s) and could not be set aside (%s): left out of queries", path, reason, exc)
        return None
    log.warning("agentotel: %s is damaged (%s); moved to %s, the rest of the store answers as before", path, reason, target)
    return target


def verify_store(directory: str | os.PathLike[str]) -> dict[str, str]:
    """Check every page of every Parquet file of the store; set the damaged ones aside. {path: reason}."""
    from agentotel.store.writer import parquet_files

    found: dict[str, str] = {}
    for path in parquet_files(directory):
        try:
            reason = check_file(path)
        except FileNotFoundError:
            continue
        if reason is not None:
            found[path] = reason
            quarantine(directory, path, reason)
    return found
