"""Object storage: a store at `s3://bucket/prefix` (or `gs://…`, `az://…`), through pyarrow's filesystems.

The one seam between the store and object storage. Credentials, region and endpoint come from the
provider's standard environment (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL`, `AWS_REGION`, …; Google's and
Azure's own), as pyarrow reads them.

How each side uses it:
- Writers keep their WAL on local disk (`wal_dir`, default `local_root(uri)/wal`): the durability an
  fsync gives has no object-store equivalent per append. A fold uploads each Parquet file as one object
  (`Remote.put`): an object store's PUT, single or multipart, makes the object visible whole or not at
  all, so no reader ever sees a partial file, and no temp name or rename is needed. The name is the WAL
  segment's (deterministic), so a retried upload overwrites the same key instead of adding rows.
- Readers (`agentotel.open`, the CLI) mirror the store's Parquet files into `local_root(uri)/spans`
  (`sync`): published files are immutable, so a file is downloaded once and kept while the bucket has it
  with the same size and time; a file rewritten by `forget` is fetched again, one a compaction removed is
  dropped. Queries then run on local files with everything the local store has (validation, the roots
  index, DuckDB reading Parquet natively). The local WAL of writers on the same machine is read too.
- Maintenance (`compact`, `--retain`, `forget`) runs on that mirror while holding the store's lease
  (`lease`), then pushes what changed: new and rewritten files first, removals second (`Maintenance`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.fs as pafs

log = logging.getLogger("agentotel.store")

# `Path("s3://b/p")` is `s3:/b/p`: a URI that went through a Path (a setting, a CLI argument) is still one.
_URI = re.compile(r"^(s3|gs|gcs|az|abfs|abfss)://?(.+)$")
SPANS = "spans"
LEASE_KEY = ".lease/compact.json"
LEASE_S = 3600.0  # a compactor that died holding the lease blocks others this long at most
_DOWNLOAD_THREADS = 8


def remote_uri(location: str | os.PathLike[str] | None) -> str | None:
    """`scheme://bucket/prefix` when `location` names object storage, else None (a local folder)."""
    if location is None:
        return None
    match = _URI.match(os.fspath(location))
    if not match:
        return None
    return f"{match.group(1)}://{match.group(2).strip('/')}"


def is_remote(location: str | os.PathLike[str] | None) -> bool:
    return remote_uri(location) is not None


def cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentotel" / "stores"


def local_root(location: str | os.PathLike[str]) -> Path:
    """This machine's folder for a remote store: `wal/` (writers' logs) and `spans/` (readers' mirror)."""
    uri = remote_uri(location)
    if uri is None:
        raise ValueError(f"{location}: not an object-storage URI")
    scheme, rest = uri.split("://", 1)
    return cache_home() / scheme / re.sub(r"[^A-Za-z0-9_.=/-]", "_", rest)


@dataclass(frozen=True)
class Remote:
    """A store in object storage: its filesystem and root, and the few operations the store needs."""

    uri: str
    fs: pafs.FileSystem
    root: str  # "bucket/prefix", the filesystem's path of the store

    def key(self, relative: str) -> str:
        return f"{self.root}/{relative}"

    def put(self, relative: str, data: pa.Buffer | bytes) -> None:
        """Write one object; it becomes visible whole (an object store's PUT is atomic), replacing any
        object of that name."""
        with self.fs.open_output_stream(self.key(relative)) as sink:
            sink.write(data)

    def read(self, relative: str) -> bytes:
        with self.fs.open_input_stream(self.key(relative)) as source:
            return source.read()

    def exists(self, relative: str) -> bool:
        return self.fs.get_file_info(self.key(relative)).type == pafs.FileType.File

    def files(self, relative: str = SPANS) -> dict[str, pafs.FileInfo]:
        """The objects under `relative` (recursively), by their path relative to the store; temp-like
        dot names left out."""
        selector = pafs.FileSelector(self.key(relative), recursive=True, allow_not_found=True)
        found = {}
        for info in self.fs.get_file_info(selector):
            if info.type != pafs.FileType.File or info.base_name.startswith("."):
                continue
            found[info.path[len(self.root) + 1 :]] = info
        return found

    def delete(self, relative: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_file(self.key(relative))


_opened: dict[str, Remote] = {}


def open_remote(location: str | os.PathLike[str]) -> Remote:
    """The remote store at `location` (an object-storage URI); one filesystem per URI and process."""
    uri = remote_uri(location)
    if uri is None:
        raise ValueError(f"{location}: not an object-storage URI")
    found = _opened.get(uri)
    if found is None:
        scheme, rest = uri.split("://", 1)
        # Delayed open: a file smaller than one part goes up as a single PutObject instead of a
        # three-request multipart upload; both make the object visible only once complete.
        query = "?allow_delayed_open=true" if scheme == "s3" else ""
        filesystem, root = pafs.FileSystem.from_uri(f"{'abfs' if scheme == 'az' else scheme}://{rest}{query}")
        found = _opened[uri] = Remote(uri, filesystem, root.rstrip("/"))
    return found


# -- readers: the local mirror ---------------------------------------------------------------------


def _stamp(info: pafs.FileInfo) -> tuple[int, int]:
    mtime = info.mtime_ns or 0
    return info.size or 0, mtime // 1_000_000_000  # object stores keep whole seconds


def sync(location: str | os.PathLike[str]) -> Path:
    """Mirror the remote store's Parquet files into `local_root(location)`; returns that folder.

    Downloads what is new or changed (to a dot-named temp, then renamed: a concurrent reader of the
    mirror sees whole files), removes what the bucket no longer has.
    """
    remote = open_remote(location)
    root = local_root(remote.uri)
    # The store's files only (`spans/date=.../*.parquet`): another engine's markers (`_SUCCESS`) stay in the bucket.
    wanted = {relative: info for relative, info in remote.files(SPANS).items()
              if relative.endswith(".parquet") and relative.count("/") == 2 and relative.split("/")[1].startswith("date=")}
    local = {p.relative_to(root).as_posix(): p for p in (root / SPANS).glob("date=*/*.parquet")
             if not p.name.startswith(".")} if (root / SPANS).is_dir() else {}
    for relative, path in local.items():
        info = wanted.get(relative)
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        if info is None or _stamp(info) != (st.st_size, st.st_mtime_ns // 1_000_000_000):
            path.unlink(missing_ok=True)
    missing = [(relative, info) for relative, info in sorted(wanted.items())
               if not (root / relative).is_file()]

    def fetch(item: tuple[str, pafs.FileInfo]) -> None:
        relative, info = item
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.parent / f".{target.name}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            data = remote.read(relative)
        except FileNotFoundError:  # removed by a compaction since the listing: its merge is listed too
            return
        temp.write_bytes(data)
        size, seconds = _stamp(info)
        os.utime(temp, ns=(seconds * 1_000_000_000, seconds * 1_000_000_000))
        os.replace(temp, target)

    if missing:
        with ThreadPoolExecutor(min(_DOWNLOAD_THREADS, len(missing))) as pool:
            list(pool.map(fetch, missing))
    (root / SPANS).mkdir(parents=True, exist_ok=True)
    return root


# -- maintenance: one at a time, by a lease ---------------------------------------------------------


class LeaseHeld(RuntimeError):
    """Another process holds the store's maintenance lease (compaction, retention, erasure)."""


@contextlib.contextmanager
def lease(remote: Remote, *, seconds: float = LEASE_S) -> Iterator[dict[str, Any]]:
    """Hold the store's maintenance lease for the block: an object naming its owner and its expiry.

    On S3 it is taken by a conditional PUT (`If-None-Match: *`; an expired lease is taken over with
    `If-Match` on its ETag), which S3 performs atomically: two compactors can never both hold it. Other
    stores (and S3 without boto3) get a weaker lease: written, then read back after a pause; two
    compactors starting within that pause could both proceed (each then merges files the other may also
    merge: spans are duplicated, never lost, and the views and the next compaction collapse them).
    """
    owner = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    body = json.dumps({"owner": owner, "expires": time.time() + seconds}).encode()
    client = _s3_client(remote)
    if client is not None:
        bucket, _, prefix = remote.root.partition("/")
        key = f"{prefix}/{LEASE_KEY}" if prefix else LEASE_KEY
        _take_s3(client, bucket, key, body)
        try:
            yield {"owner": owner}
        finally:
            with contextlib.suppress(Exception):
                held = json.loads(client.get_object(Bucket=bucket, Key=key)["Body"].read())
                if held.get("owner") == owner:
                    client.delete_object(Bucket=bucket, Key=key)
        return
    current = _read_lease(remote)
    if current is not None and current.get("expires", 0) > time.time():
        raise LeaseHeld(f"{remote.uri}: maintenance lease held by {current.get('owner')} until {time.ctime(current['expires'])}")
    remote.put(LEASE_KEY, body)
    time.sleep(1.0)
    current = _read_lease(remote)
    if current is None or current.get("owner") != owner:
        raise LeaseHeld(f"{remote.uri}: maintenance lease taken by {current and current.get('owner')}")
    try:
        yield {"owner": owner}
    finally:
        current = _read_lease(remote)
        if current is not None and current.get("owner") == owner:
            remote.delete(LEASE_KEY)


def _read_lease(remote: Remote) -> dict[str, Any] | None:
    try:
        return json.loads(remote.read(LEASE_KEY))
    except (FileNotFoundError, ValueError):
        return None


def _s3_client(remote: Remote) -> Any:
    if not remote.uri.startswith("s3://"):
        return None
    try:
        import boto3  # the conditional PUT pyarrow's filesystem does not expose
    except ImportError:
        return None
    region = getattr(remote.fs, "region", None) or None
    return boto3.client("s3", region_name=region)


def _take_s3(client: Any, bucket: str, key: str, body: bytes) -> None:
    from botocore.exceptions import ClientError

    def status(exc: ClientError) -> int:
        return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))

    try:
        client.put_object(Bucket=bucket, Key=key, Body=body, IfNoneMatch="*")
        return
    except ClientError as exc:
        if status(exc) not in (409, 412):
            raise
    try:
        held = client.get_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        raise LeaseHeld(f"s3://{bucket}/{key}: lease changed hands while being read; try again") from exc
    current = json.loads(held["Body"].read() or b"{}")
    if current.get("expires", 0) > time.time():
        raise LeaseHeld(f"s3://{bucket}/{key}: maintenance lease held by {current.get('owner')} "
                        f"until {time.ctime(current['expires'])}")
    try:  # expired: take it over, unless someone else did first
        client.put_object(Bucket=bucket, Key=key, Body=body, IfMatch=held["ETag"])
    except ClientError as exc:
        if status(exc) in (409, 412):
            raise LeaseHeld(f"s3://{bucket}/{key}: another process took the expired lease first") from exc
        raise


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    spans = root / SPANS
    if not spans.is_dir():
        return {}
    found = {}
    for path in spans.glob("date=*/*.parquet"):
        if not path.name.startswith("."):
            st = path.stat()
            found[path.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns)
    return found


@contextlib.contextmanager
def maintenance(location: str | os.PathLike[str]) -> Iterator[Path]:
    """Under the store's lease, a local mirror to change (compact, retain, forget); on leaving the block
    its changes go to the bucket: new and rewritten files uploaded first, removed files deleted after,
    so a reader never finds a span in neither place. Files writers publish meanwhile are left alone."""
    remote = open_remote(location)
    with lease(remote):
        root = sync(remote.uri)
        before = _snapshot(root)
        yield root
        after = _snapshot(root)
        for relative, stamp in sorted(after.items()):
            if before.get(relative) != stamp:
                remote.put(relative, (root / relative).read_bytes())
                # The mirror's copy takes the object's time, so the next sync keeps it instead of fetching it back.
                seconds = _stamp(remote.fs.get_file_info(remote.key(relative)))[1]
                os.utime(root / relative, ns=(seconds * 1_000_000_000, seconds * 1_000_000_000))
        for relative in sorted(set(before) - set(after)):
            remote.delete(relative)
