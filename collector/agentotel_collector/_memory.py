"""Allocator settings for the collector's own process: keep freed memory for the next request.

Every request allocates and frees the same tens of megabytes (the body, its decompressed bytes, the
decoded spans). By default glibc serves blocks that big with a fresh mmap and unmaps them on free,
so the next request takes a page fault for every 4 KiB it touches again; on virtual machines a
fault costs microseconds (measured here: 3.4 µs, i.e. 20 µs per 24 KB span for each fresh copy). Keeping freed
memory costs nothing in the peak: the process holds what its busiest moment needed, which the
collector's limits (decoding slots, write queue, WAL size) already bound.

Arrow's buffers come from its own allocator (mimalloc), which by default gives freed pages back to the
system a few milliseconds after they are freed, inside a region it has asked to be backed by 2 MB huge
pages: the next request's buffers then fault a whole huge page in, the kernel zeroing 2 MB at a time.
Measured with perf in the collector on bench_collector's bodies: 9-10 % of its CPU was that zeroing.
With the pages kept (`MIMALLOC_PURGE_DELAY=-1`), interleaved A/B against the same tree at load 15-19:
CPU per 10,000 spans content off 1.08 -> 0.90 s, content on 3.61 -> 3.10 s (system time 0.88 -> 0.37 s).
mimalloc reads its options once, as pyarrow loads: `agentotel-collector` sets them before that
(`set_arrow_allocator_options`); a value the operator put in the environment wins.

Only `agentotel-collector`'s `main` calls these: an embedding program keeps its own allocator policy.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

log = logging.getLogger("agentotel_collector")

# glibc mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's maximum: a 12 MB request body comes from the heap, not a fresh mmap
_TRIM_THRESHOLD = 512 * 1024 * 1024


# mimalloc's options, as environment variables: keep freed pages for the next request instead of purging them.
ARROW_ALLOCATOR_OPTIONS = {"MIMALLOC_PURGE_DELAY": "-1"}


def set_arrow_allocator_options() -> None:
    """Set ARROW_ALLOCATOR_OPTIONS in this process's environment, unless set already (too late once pyarrow is loaded).

    Child processes inherit them: the `--workers`, the only processes the collector starts.
    """
    for name, value in ARROW_ALLOCATOR_OPTIONS.items():
        os.environ.setdefault(name, value)


def keep_freed_memory() -> None:
    """Best effort: glibc malloc keeps big blocks in its heap and stops trimming it. Never raises.

    Arrow's buffers stay with its own allocator (mimalloc, kept from purging by
    `set_arrow_allocator_options`): switching Arrow to jemalloc was measured slower here (its arenas return
    freed pages at once), and to glibc's allocator, slower with content on (content off 1.23 -> 1.09 s,
    content on 3.38 -> 3.72 s of CPU per 10,000 spans, interleaved A/B, load 10-13).
    """
    try:
        name = ctypes.util.find_library("c")
        libc = ctypes.CDLL(name) if name else None
        mallopt = getattr(libc, "mallopt", None)  # glibc only; musl and macOS have none
        if mallopt is not None:
            mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
            mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    except Exception as exc:  # noqa: BLE001 - a tuning, never a reason not to start
        log.debug("agentotel-collector: malloc left as it is: %r", exc)
