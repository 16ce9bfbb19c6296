"""The write-ahead log: framed Arrow IPC messages `<dir>/wal/<segment>.arrows`, one or two per live writer.

Each append (its batches' buffers zstd-compressed, as Arrow IPC messages) is one *frame*: a magic
number, its kind, its length and a CRC-32 of its contents, written with one `write()` and fsync'd
before `append()` returns. A frame is either wholly on disk and intact, or (the process died
mid-write, a disk flipped a bit) fails its check: readers skip it and find the next frame by its
magic number, so one damaged frame costs that frame's spans only, never the frames after it. A write
that fails part-way is cut off before the next one. Files written before framing (a plain Arrow IPC
stream) are still read, up to their first damaged batch. A live
writer holds an exclusive `flock` on its files; recovery folds only files whose lock it can take, i.e.
files of dead writers. Each file is one *segment*, named in the stream's schema metadata: the name of
the Parquet files its contents become. A writer appends to a new segment file while the previous one
is folded; a folded segment file is unlinked only after its Parquet files are durable, so a crash in
between is repaired by recovery, which skips what is already published (nothing is written twice).
"""

from __future__ import annotations

import fcntl
import logging
import os
import struct
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from agentotel.store.schema import SPAN_SCHEMA

log = logging.getLogger("agentotel.store")

WAL_DIR = "wal"
SUFFIX = ".arrows"
DAMAGED_DIR = "damaged"
SEGMENT_KEY = b"agentotel.segment"

_sync = getattr(os, "fdatasync", os.fsync)


def fsync_dir(path: Path) -> None:
    """Make a directory's entries (a new, renamed or removed file) durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: memoryview) -> None:
    while data:
        written = os.write(fd, data)
        data = data[written:]


def schema_message(segment: str) -> bytes:
    """The stream's first message: the span schema plus the segment id in its metadata."""
    metadata = dict(SPAN_SCHEMA.metadata or {})
    metadata[SEGMENT_KEY] = segment.encode()
    return SPAN_SCHEMA.with_metadata(metadata).serialize().to_pybytes()


# Span payloads (prompts, tool results) are mostly text: zstd makes a batch ~10x smaller for a few ms of
# CPU, which more than pays for itself in the write and fsync every export waits for. The columns' buffers are
# compressed side by side on Arrow's thread pool (without the GIL): an export waits for that compression
# (~12 us of CPU per span), and the other cores are idle between folds. The bytes written are the same.
_IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=1), use_threads=True)


_EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"  # the IPC stream's end marker

# Framing. A framed file starts with FILE_MAGIC (a plain IPC stream starts with 0xFFFFFFFF), then a
# schema frame, then one batches frame per append. Frame header: FRAME_MAGIC, kind, payload length,
# CRC-32 of (kind, length, payload).
FILE_MAGIC = b"AOWAL\x002\n"
FRAME_MAGIC = b"\xa6\x0e\x5a\xf7"
_FRAME = struct.Struct("<4sBII")
_SCHEMA_FRAME, _BATCHES_FRAME = 1, 2


def _frame_header(kind: int, payload: memoryview | bytes) -> bytes:
    crc = zlib.crc32(payload, zlib.crc32(struct.pack("<BI", kind, len(payload))))
    return _FRAME.pack(FRAME_MAGIC, kind, len(payload), crc)


def _frame_at(data: memoryview, pos: int) -> tuple[int, memoryview] | None:
    """The (kind, payload) of an intact frame at `pos`, else None."""
    if len(data) - pos < _FRAME.size:
        return None
    magic, kind, length, crc = _FRAME.unpack_from(data, pos)
    start = pos + _FRAME.size
    if magic != FRAME_MAGIC or kind not in (_SCHEMA_FRAME, _BATCHES_FRAME) or length > len(data) - start:
        return None
    payload = data[start : start + length]
    if zlib.crc32(payload, zlib.crc32(struct.pack("<BI", kind, length))) != crc:
        return None
    return kind, payload


def _stream(batches: list[pa.RecordBatch]) -> pa.Buffer:
    # An Arrow-native sink: writing into a Python file object would take the GIL back for every
    # buffer of every column, which a busy process (the collector converting the next requests)
    # hands over only every few milliseconds: measured 45 ms instead of 10 per 512-span batch.
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, SPAN_SCHEMA, options=_IPC_OPTIONS) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return sink.getvalue()


class _BatchEncoder:
    """IPC record-batch messages with compressed bodies (`RecordBatch.serialize()` cannot compress).

    Each call encodes a whole stream and keeps what lies between its schema message and its end
    marker: the batches' messages, to append to a stream whose schema is already written.
    """

    def __init__(self) -> None:
        empty = _stream([]).to_pybytes()
        if not empty.endswith(_EOS):  # never expected: the format is fixed by the IPC specification
            raise RuntimeError("unexpected Arrow IPC stream layout")
        self._prefix = empty[: -len(_EOS)]

    def encode(self, batches: list[pa.RecordBatch]) -> memoryview:
        data = memoryview(_stream(batches)).cast("B")  # pyarrow's view is of signed chars
        if data[: len(self._prefix)] != self._prefix or data[-len(_EOS) :] != _EOS:
            raise RuntimeError("unexpected Arrow IPC stream layout")
        return data[len(self._prefix) : -len(_EOS)]


class WalFile:
    """One WAL segment of a live writer: created locked with its header, appended to, unlinked once folded."""

    def __init__(self, directory: Path, segment: str) -> None:
        # Made under a dot name and renamed into view only once locked and headed: a recovering
        # process never sees it unlocked (it would take it for a dead writer's) or without a header.
        self.path = directory / f"{segment}{SUFFIX}"
        temp = directory / f".{segment}{SUFFIX}.new"
        self._fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            schema = schema_message(segment)
            header = FILE_MAGIC + _frame_header(_SCHEMA_FRAME, schema) + schema
            _write_all(self._fd, memoryview(header))
            _sync(self._fd)
            os.rename(temp, self.path)
            fsync_dir(directory)
        except BaseException:
            os.close(self._fd)
            temp.unlink(missing_ok=True)
            raise
        self.segment = segment
        self.size = len(header)
        self.started = time.monotonic()
        self._broken = 0  # the errno of a failed write that could not be cut off
        self._encoder = _BatchEncoder()

    def append(self, batches: list[pa.RecordBatch]) -> None:
        """Append batches with one write and one fsync; on disk when this returns. On failure the file is as it was."""
        if self._broken:
            raise OSError(self._broken, "the WAL could not be repaired after a failed write", str(self.path))
        data = self._encoder.encode(batches)
        data = memoryview(_frame_header(_BATCHES_FRAME, data) + data)  # one write: a frame is whole or cut off
        try:
            _write_all(self._fd, data)
            _sync(self._fd)
        except OSError as exc:
            # A partial batch would make every later batch unreadable: cut it off, or stop appending.
            try:
                os.ftruncate(self._fd, self.size)
            except OSError:
                self._broken = exc.errno or 1
            if exc.filename is None:
                exc.filename = str(self.path)
            raise
        self.size += len(data)

    def close(self, *, remove: bool) -> None:
        """Release the file; with `remove` (its contents are published) unlink it first, lock still held."""
        if self._fd < 0:
            return
        if remove:
            self.path.unlink(missing_ok=True)
            fsync_dir(self.path.parent)
        os.close(self._fd)
        self._fd = -1

    def abandon(self) -> None:
        """In a forked child: drop the inherited descriptor (the parent's keeps the lock)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def release_writer_id(directory: Path, writer_id: str, fd: int) -> None:
    """Remove the writer-id lock file (still holding it, so nobody takes it half-removed) and release it."""
    try:
        (directory / f".{writer_id}.lock").unlink(missing_ok=True)
    finally:
        os.close(fd)


def remove_stale_locks(directory: Path) -> None:
    """Delete the writer-id lock files and half-made segment files that crashed writers left behind."""
    for path in directory.glob(".*.lock"):
        fd = lock_orphan(path)
        if fd is not None:
            path.unlink(missing_ok=True)
            os.close(fd)
    now = time.time()
    for path in directory.glob(f".*{SUFFIX}.new"):
        # Unlocked for an instant after it is created, so only an old one is surely abandoned.
        try:
            if now - path.stat().st_mtime > 60:
                fd = lock_orphan(path)
                if fd is not None:
                    path.unlink(missing_ok=True)
                    os.close(fd)
        except FileNotFoundError:
            pass


def lock_writer_id(directory: Path, writer_id: str) -> int:
    """An fd holding `wal/.<writer_id>.lock`: one live writer per id. Raises OSError when it is taken."""
    path = directory / f".{writer_id}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise OSError(f"{path}: writer id {writer_id!r} is in use by another live writer (choose another writer_id)") from None
    return fd


@dataclass
class WalContents:
    """What a WAL file holds: its segment id, its complete batches, and whether its tail was damaged."""

    segment: str | None
    batches: list[pa.RecordBatch] = field(default_factory=list)
    damaged: str | None = None  # the reason, when some part of the file could not be read
    header_only: bool = True
    lost_frames: int = 0  # damaged frames skipped (framed files), each one append's batches

    @property
    def rows(self) -> int:
        return sum(b.num_rows for b in self.batches)


def read_file(path: Path) -> WalContents:
    """Every intact batch of a WAL file; a damaged frame or a truncated tail is reported, not raised."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return WalContents(segment=None)
    if not data:
        return WalContents(segment=None)
    if data.startswith(FILE_MAGIC):
        return _read_framed(memoryview(data), path)
    try:
        reader = pa.ipc.open_stream(pa.py_buffer(data))
    except (pa.ArrowInvalid, pa.ArrowException, OSError) as exc:
        return WalContents(segment=None, damaged=f"unreadable schema: {exc}")
    metadata = reader.schema.metadata or {}
    segment = metadata.get(SEGMENT_KEY, b"").decode() or None
    contents = WalContents(segment=segment)
    while True:
        try:
            batch = reader.read_next_batch()
            # A torn or corrupt write can still parse as a batch; one that is not valid Arrow must not
            # reach a Parquet writer or a query engine, so it counts as the damaged tail.
            batch.validate(full=True)
        except StopIteration:
            break
        except (pa.ArrowInvalid, pa.ArrowException, OSError, ValueError) as exc:
            contents.damaged = str(exc)
            break
        contents.header_only = False
        if batch.num_rows:
            # Batches are always written with SPAN_SCHEMA; drop the segment metadata for readers.
            contents.batches.append(batch.replace_schema_metadata(SPAN_SCHEMA.metadata))
    return contents


_STREAM_PREFIX: bytes | None = None


def _read_framed(data: memoryview, path: Path) -> WalContents:
    global _STREAM_PREFIX
    if _STREAM_PREFIX is None:
        _STREAM_PREFIX = _BatchEncoder()._prefix
    contents = WalContents(segment=None)
    problems: list[str] = []
    pos, end = len(FILE_MAGIC), len(data)
    payloads: list[memoryview] = []
    while pos < end:
        frame = _frame_at(data, pos)
        if frame is None:
            following = bytes(data[pos + 1 :]).find(FRAME_MAGIC)
            if following < 0:
                problems.append(f"a damaged or torn frame at byte {pos}, up to the end")
                break
            problems.append(f"a damaged frame at byte {pos}")
            contents.lost_frames += 1
            pos += 1 + following
            continue
        kind, payload = frame
        pos += _FRAME.size + len(payload)
        if kind == _SCHEMA_FRAME:
            try:
                schema = pa.ipc.read_schema(pa.py_buffer(payload))
                contents.segment = (schema.metadata or {}).get(SEGMENT_KEY, b"").decode() or None
            except (pa.ArrowException, OSError, ValueError) as exc:
                problems.append(f"unreadable schema: {exc}")
        else:
            payloads.append(payload)
    if contents.segment is None and problems:
        contents.segment = path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else None  # its file is named for it
    for payload in payloads:  # each frame is read on its own: a bad one cannot hide the others
        try:
            reader = pa.ipc.open_stream(pa.py_buffer(_STREAM_PREFIX + bytes(payload) + _EOS))
            for batch in reader:
                batch.validate(full=True)
                contents.header_only = False
                if batch.num_rows:
                    contents.batches.append(batch.replace_schema_metadata(SPAN_SCHEMA.metadata))
        except (pa.ArrowInvalid, pa.ArrowException, OSError, ValueError) as exc:
            problems.append(f"an unreadable frame: {exc}")
            contents.lost_frames += 1
    if problems:
        contents.damaged = "; ".join(problems)
    return contents


def wal_files(directory: Path) -> list[Path]:
    """The WAL files of a store, live and orphaned (damaged files set aside are not included)."""
    return segment_files(Path(directory) / WAL_DIR)


def segment_files(folder: Path) -> list[Path]:
    """The WAL files in a WAL folder (a store's `wal/`, or a remote store's local `--wal-dir`)."""
    try:
        return sorted(p for p in folder.iterdir() if p.name.endswith(SUFFIX) and not p.name.startswith("."))
    except FileNotFoundError:
        return []


def read_wal(directory: str | os.PathLike[str]) -> pa.Table:
    """Every complete batch in the store's WAL files, as one table of `SPAN_SCHEMA` (for queries).

    Takes no locks, so it can run next to live writers: a batch being written is simply not there yet.
    Read the WAL *before* listing Parquet files: a fold in between then shows a span twice (which the
    query side collapses) rather than not at all.
    """
    batches: list[pa.RecordBatch] = []
    for path in wal_files(Path(directory)):
        batches.extend(read_file(path).batches)
    return pa.Table.from_batches(batches, schema=SPAN_SCHEMA)


def set_aside(path: Path, reason: str) -> Path | None:
    """Move a damaged WAL file to `wal/damaged/`, with one warning; never raises."""
    target_dir = path.parent / DAMAGED_DIR
    target = target_dir / f"{path.name}.{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    try:
        target_dir.mkdir(exist_ok=True)
        os.replace(path, target)
        fsync_dir(path.parent)
    except OSError as exc:
        log.warning("agentotel: damaged WAL %s (%s) could not be set aside: %s", path, reason, exc)
        return None
    log.warning(
        "agentotel: WAL %s was damaged (%s); every intact batch was kept, the file was moved to %s",
        path,
        reason,
        target,
    )
    return target


def lock_orphan(path: Path) -> int | None:
    """An fd holding the lock of a dead writer's WAL file, or None when its writer is alive or it is gone."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # Another recoverer may have folded and unlinked it between our open and our lock.
        if os.fstat(fd).st_ino != os.stat(path).st_ino:
            raise FileNotFoundError(path)
    except (BlockingIOError, FileNotFoundError):
        os.close(fd)
        return None
    return fd
