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
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import pyarrow as pa
import pyarrow.fs as pafs

log = logging.getLogger("agentotel.store")

# `Path("s3://b/p")` is `s3:/b/p`: a URI that went through a Path (a setting, a CLI argument) is still one.
_URI = re.compile(r"^(s3|gs|gcs|az|abfs|abfss)://?(.+)$")
SPANS = "spans"
LEASE_KEY = ".lease/compact.json"
REPLACED = ".replaced"  # marks of retired files in a bucket; the mirror's own retired files locally
_RETIRED_SUFFIX = ".retired"
REPLACED_GRACE_S = 60.0  # how long a file left the mirror stays readable for a query that listed it (compact.GRACE_S)
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
        if self.uri.startswith(("gs://", "gcs://")):  # Google's stream is one download
            with self.fs.open_input_stream(self.key(relative)) as source:
                return source.read()
        # S3's and Azure's input streams fetch an object a small chunk per request (a 68 MB file took 40 s
        # from moto, a 40 MB one 3.4 s from Azurite); a random-access file reads it in one ranged GET after
        # a HEAD (0.4 s, 0.7 s). (gcp-storage-emulator never answers pyarrow's random-access reads.)
        with self.fs.open_input_file(self.key(relative)) as source:
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
        filesystem, root = _filesystem(*uri.split("://", 1))
        found = _opened[uri] = Remote(uri, filesystem, root.rstrip("/"))
    return found


def _filesystem(scheme: str, rest: str) -> tuple[pafs.FileSystem, str]:
    """pyarrow's filesystem for a URI, set up from the provider's standard environment where pyarrow's
    URI parsing does not read it: Google's emulator variable, Azure's connection string or account."""
    if scheme == "s3":
        # Delayed open: a file smaller than one part goes up as a single PutObject instead of a
        # three-request multipart upload; both make the object visible only once complete.
        return pafs.FileSystem.from_uri(f"s3://{rest}?allow_delayed_open=true")
    if scheme in ("gs", "gcs") and os.environ.get("STORAGE_EMULATOR_HOST"):
        # What Google's client libraries read for an emulator (fake-gcs-server, gcp-storage-emulator).
        endpoint = os.environ["STORAGE_EMULATOR_HOST"]
        http, _, host = endpoint.rpartition("://")
        return pafs.GcsFileSystem(anonymous=True, endpoint_override=host.rstrip("/"), scheme=http or "http"), rest
    if scheme in ("az", "abfs", "abfss"):
        account = _azure_account()
        if account is not None:
            return pafs.AzureFileSystem(**account), rest
        scheme = "abfs"
    return pafs.FileSystem.from_uri(f"{scheme}://{rest}")


def _azure_account() -> dict[str, str] | None:
    """AzureFileSystem's account settings from `AZURE_STORAGE_CONNECTION_STRING` (Azurite's, or a real
    account's) or `AZURE_STORAGE_ACCOUNT` (+ `AZURE_STORAGE_KEY`; without it, Azure's default
    credentials); None when neither is set (pyarrow then reads the URI alone)."""
    text = os.environ.get("AZURE_STORAGE_CONNECTION_STRING")
    if text:
        fields = dict(part.split("=", 1) for part in text.split(";") if "=" in part)
        if fields.get("UseDevelopmentStorage") == "true":  # Azurite's well-known account
            fields = {"AccountName": "devstoreaccount1", "BlobEndpoint": "http://127.0.0.1:10000/devstoreaccount1",
                      "AccountKey": _AZURITE_KEY}
        settings = {"account_name": fields.get("AccountName", ""), "account_key": fields.get("AccountKey", "")}
        endpoint = fields.get("BlobEndpoint")
        if endpoint:
            http, _, host = endpoint.rpartition("://")
            authority = host.split("/", 1)[0]
            settings.update(blob_storage_authority=authority, dfs_storage_authority=authority,
                            blob_storage_scheme=http or "https", dfs_storage_scheme=http or "https")
        return {k: v for k, v in settings.items() if v}
    if os.environ.get("AZURE_STORAGE_ACCOUNT"):
        settings = {"account_name": os.environ["AZURE_STORAGE_ACCOUNT"], "account_key": os.environ.get("AZURE_STORAGE_KEY", "")}
        return {k: v for k, v in settings.items() if v}
    return None


# Azurite's published development account key (not a secret: the emulator's fixed default).
_AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


# -- readers: the local mirror ---------------------------------------------------------------------


def _stamp(info: pafs.FileInfo) -> tuple[int, int]:
    mtime = info.mtime_ns or 0
    return info.size or 0, mtime // 1_000_000_000  # object stores keep whole seconds


def _is_span_file(relative: str) -> bool:
    """`spans/date=.../<name>.parquet`: the store's files (another engine's markers, `_SUCCESS`, are not)."""
    parts = relative.split("/")
    return len(parts) == 3 and parts[1].startswith("date=") and parts[2].endswith(".parquet")


def retired(remote: Remote) -> dict[str, float]:
    """The span files a maintenance run replaced and will delete once its grace period is over, by their
    path relative to the store, with the time (epoch seconds) after which they may go."""
    found = {}
    for relative in remote.files(REPLACED):
        if relative.endswith(_RETIRED_SUFFIX):
            try:
                found[f"{SPANS}/{relative[len(REPLACED) + 1 : -len(_RETIRED_SUFFIX)]}"] = float(
                    json.loads(remote.read(relative)).get("delete_after", 0))
            except (FileNotFoundError, ValueError, AttributeError):
                continue
    return found


class Mirror:
    """This machine's copy of a remote store's Parquet files, fetched a date partition at a time.

    Made with one listing of the bucket; `fetch(dates)` downloads what those partitions lack (each file
    to a dot-named temp, then renamed: a concurrent reader of the mirror sees whole files). The listing
    also tidies the mirror: a file the bucket no longer has, or has retired (a compaction merged it),
    leaves `spans/` by a rename into the mirror's `.replaced/`, where an open `Traces` that listed it
    still finds it (see compact.py) for `REPLACED_GRACE_S`; a rewritten one (`forget`) is fetched again.
    """

    def __init__(self, location: str | os.PathLike[str]) -> None:
        self.remote = open_remote(location)
        self.root = local_root(self.remote.uri)
        # Retired files first: one listed there was merged into a file uploaded before, so the listing
        # of spans/ that follows has the merged file whenever it leaves the input out.
        gone = retired(self.remote)
        self._wanted = {relative: info for relative, info in self.remote.files(SPANS).items()
                        if _is_span_file(relative) and relative not in gone}
        spans = self.root / SPANS
        local = [p for p in spans.glob("date=*/*.parquet") if not p.name.startswith(".")] if spans.is_dir() else []
        for path in local:
            info = self._wanted.get(path.relative_to(self.root).as_posix())
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            if info is None:
                _retire_local(self.root, path)
            elif _stamp(info) != (st.st_size, st.st_mtime_ns // 1_000_000_000):
                path.unlink(missing_ok=True)  # rewritten (`forget`): fetched again
        _sweep_local(self.root)
        spans.mkdir(parents=True, exist_ok=True)

    @property
    def dates(self) -> list[str]:
        """The store's date partitions, oldest first (`YYYY-MM-DD`)."""
        return sorted({_date_of(relative) for relative in self._wanted})

    def missing(self) -> set[str]:
        """The dates with a file not (or no longer) in the mirror."""
        return {_date_of(relative) for relative in self._wanted if not (self.root / relative).is_file()}

    def fetch(self, dates: Iterable[str] | None = None) -> int:
        """Download what the mirror lacks of these date partitions (None: all); returns how many files."""
        chosen = None if dates is None else set(dates)
        todo = [(relative, info) for relative, info in sorted(self._wanted.items())
                if (chosen is None or _date_of(relative) in chosen) and not (self.root / relative).is_file()]
        if todo:
            with ThreadPoolExecutor(min(_DOWNLOAD_THREADS, len(todo))) as pool:
                return sum(pool.map(self._fetch_one, todo))
        return 0

    def _fetch_one(self, item: tuple[str, pafs.FileInfo]) -> bool:
        relative, info = item
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.parent / f".{target.name}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            data = self.remote.read(relative)
        except FileNotFoundError:  # its grace period ended since the listing (or `forget` removed it)
            return False
        temp.write_bytes(data)
        seconds = _stamp(info)[1]
        os.utime(temp, ns=(seconds * 1_000_000_000, seconds * 1_000_000_000))
        os.replace(temp, target)
        return True


def _date_of(relative: str) -> str:
    return relative.split("/")[1].removeprefix("date=")


def sync(location: str | os.PathLike[str]) -> Path:
    """Mirror every Parquet file of the remote store into `local_root(location)`; returns that folder."""
    mirror = Mirror(location)
    mirror.fetch()
    return mirror.root


def _retire_local(root: Path, path: Path) -> None:
    """Move a mirrored file out of `spans/` into the mirror's `.replaced/` (the rename sets its ctime)."""
    target = root / REPLACED / path.parent.name / path.name
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    except FileNotFoundError:
        pass


def _sweep_local(root: Path) -> None:
    now = time.time()
    for path in (root / REPLACED).glob("date=*/*.parquet"):
        with contextlib.suppress(FileNotFoundError):
            if now - path.stat().st_ctime >= REPLACED_GRACE_S:
                path.unlink()


# -- maintenance: one at a time, by a lease ---------------------------------------------------------


class LeaseHeld(RuntimeError):
    """Another process holds the store's maintenance lease (compaction, retention, erasure)."""


class LeaseLost(RuntimeError):
    """The maintenance lease could not be renewed (taken over, or the store did not answer in time): the
    run stopped before changing anything more in the store."""


class Lease:
    """A held maintenance lease, renewed in the background until released.

    A renewal rewrites the lease object with a later expiry, on S3 only if it is still the object this
    holder wrote (`If-Match` on its ETag). Once a renewal fails the lease counts as lost: `check()`, which
    maintenance calls before every change to the store, raises `LeaseLost`, and so it does when the last
    good renewal is too old, so a holder that stalls never writes after another may have taken over.
    """

    def __init__(self, remote: Remote, owner: str, seconds: float, client: Any, etag: str | None) -> None:
        self.remote, self.owner, self.seconds = remote, owner, seconds
        self._client, self._etag = client, etag
        self._valid_until = time.monotonic() + seconds  # counted from before the write: conservative
        self._lost: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew_loop, name="agentotel-lease", daemon=True)

    def __getitem__(self, name: str) -> Any:  # `held["owner"]`, as the lease once yielded a dict
        return getattr(self, name)

    def check(self) -> None:
        """Raise `LeaseLost` unless the lease is held for at least a third of its length more."""
        if self._lost is None and time.monotonic() > self._valid_until - self.seconds / 3:
            self._lost = "not renewed in time"
        if self._lost is not None:
            raise LeaseLost(f"{self.remote.uri}: maintenance lease lost ({self._lost}); the store was left as it was "
                            "before the change that would have come next")

    def renew(self) -> None:
        """Push the expiry `seconds` ahead; marks the lease lost (and raises LeaseLost) if that fails."""
        began = time.monotonic()
        body = _lease_body(self.owner, self.seconds)
        try:
            if self._client is not None:
                self._etag = _put_s3(self._client, self.remote, body, if_match=self._etag)
            else:
                current = _read_lease(self.remote)
                if current is None or current.get("owner") != self.owner:
                    raise LeaseHeld(f"taken by {current and current.get('owner')}")
                self.remote.put(LEASE_KEY, body)
        except Exception as exc:  # noqa: BLE001 - whatever the store answered, the lease can no longer be trusted
            self._lost = self._lost or f"renewal failed: {_one_line(exc)}"
            log.warning("%s: maintenance lease lost (%s); stopping before the next change", self.remote.uri, self._lost)
            self.check()
        self._valid_until = began + self.seconds

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            try:
                self.renew()
            except LeaseLost:
                return

    def _release(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._lost is not None:
            return
        with contextlib.suppress(Exception):  # still ours and unexpired: nobody can take it between the two calls
            current = _read_lease(self.remote)
            if current is not None and current.get("owner") == self.owner:
                self.remote.delete(LEASE_KEY)


def _lease_body(owner: str, seconds: float) -> bytes:
    return json.dumps({"owner": owner, "expires": time.time() + seconds}).encode()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


@contextlib.contextmanager
def lease(remote: Remote, *, seconds: float | None = None) -> Iterator[Lease]:
    """Hold the store's maintenance lease for the block: an object naming its owner and its expiry,
    renewed every third of `seconds` (default `LEASE_S`) while the block runs.

    On S3 it is taken by a conditional PUT (`If-None-Match: *`; an expired lease is taken over with
    `If-Match` on its ETag), which S3 performs atomically: two compactors can never both hold it. Other
    stores (and S3 without boto3) get a weaker lease: written, then read back after a pause; two
    compactors starting within that pause could both proceed (each then merges files the other may also
    merge: spans are duplicated, never lost, and the views and the next compaction collapse them).
    """
    seconds = LEASE_S if seconds is None else seconds
    owner = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    body = _lease_body(owner, seconds)
    client = _s3_client(remote)
    if client is not None:
        held = Lease(remote, owner, seconds, client, _take_s3(client, remote, body))
    else:
        current = _read_lease(remote)
        if current is not None and current.get("expires", 0) > time.time():
            raise LeaseHeld(f"{remote.uri}: maintenance lease held by {current.get('owner')} until {time.ctime(current['expires'])}")
        held = Lease(remote, owner, seconds, None, None)
        remote.put(LEASE_KEY, body)
        time.sleep(1.0)
        current = _read_lease(remote)
        if current is None or current.get("owner") != owner:
            raise LeaseHeld(f"{remote.uri}: maintenance lease taken by {current and current.get('owner')}")
    if seconds > 0:
        held._thread.start()
    try:
        yield held
    finally:
        held._release()


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


def _s3_key(remote: Remote) -> tuple[str, str]:
    bucket, _, prefix = remote.root.partition("/")
    return bucket, f"{prefix}/{LEASE_KEY}" if prefix else LEASE_KEY


def _status(exc: Any) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


def _put_s3(client: Any, remote: Remote, body: bytes, **condition: str | None) -> str:
    """One conditional PUT of the lease object (`if_none_match` / `if_match`); returns its new ETag."""
    bucket, key = _s3_key(remote)
    extra = {"IfNoneMatch": condition["if_none_match"]} if condition.get("if_none_match") else {"IfMatch": condition["if_match"]}
    return client.put_object(Bucket=bucket, Key=key, Body=body, **extra)["ETag"]


def _take_s3(client: Any, remote: Remote, body: bytes) -> str:
    from botocore.exceptions import ClientError

    where = f"{remote.uri}/{LEASE_KEY}"
    try:
        return _put_s3(client, remote, body, if_none_match="*")
    except ClientError as exc:
        if _status(exc) not in (409, 412):
            raise
    bucket, key = _s3_key(remote)
    try:
        held = client.get_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        raise LeaseHeld(f"{where}: lease changed hands while being read; try again") from exc
    current = json.loads(held["Body"].read() or b"{}")
    if current.get("expires", 0) > time.time():
        raise LeaseHeld(f"{where}: maintenance lease held by {current.get('owner')} "
                        f"until {time.ctime(current['expires'])}")
    try:  # expired: take it over, unless someone else did first
        return _put_s3(client, remote, body, if_match=held["ETag"])
    except ClientError as exc:
        if _status(exc) in (409, 412):
            raise LeaseHeld(f"{where}: another process took the expired lease first") from exc
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
def maintenance(location: str | os.PathLike[str], *, grace_s: float = 0.0) -> Iterator[Path]:
    """Under the store's lease, a local mirror to change (compact, retain, forget); on leaving the block
    its changes go to the bucket: new and rewritten files uploaded first, removed files deleted after,
    so a reader never finds a span in neither place. Files writers publish meanwhile are left alone.

    With `grace_s`, removed files stay in the bucket that long after the files replacing them are up, so
    a query that listed them before (another engine's, a mirror's download) can still read them: each is
    first marked retired (`.replaced/date=.../<name>.retired`, which agentotel's readers skip), then
    deleted with its mark once the grace is over, the lease still held. Marks a maintainer left behind
    (it died waiting) are cleared by the next run once their time is past. Before every change the lease
    is checked: a run whose lease could not be renewed stops (`LeaseLost`) with the store as it was.
    """
    remote = open_remote(location)
    with lease(remote) as held:
        _delete_retired(remote, held, retired(remote), time.time(), marked=True)
        root = sync(remote.uri)
        before = _snapshot(root)
        yield root
        after = _snapshot(root)
        for relative, stamp in sorted(after.items()):
            if before.get(relative) != stamp:
                held.check()
                remote.put(relative, (root / relative).read_bytes())
                # The mirror's copy takes the object's time, so the next sync keeps it instead of fetching it back.
                seconds = _stamp(remote.fs.get_file_info(remote.key(relative)))[1]
                os.utime(root / relative, ns=(seconds * 1_000_000_000, seconds * 1_000_000_000))
        removed = sorted(set(before) - set(after))
        if removed and grace_s > 0:
            until = time.time() + grace_s
            for relative in removed:
                held.check()
                remote.put(_retired_key(relative), json.dumps({"delete_after": until, "by": held.owner}).encode())
            while time.time() < until:
                held.check()
                time.sleep(min(1.0, max(0.0, until - time.time())))
        _delete_retired(remote, held, dict.fromkeys(removed, 0.0), time.time(), marked=grace_s > 0)


def _retired_key(relative: str) -> str:
    return f"{REPLACED}/{relative.removeprefix(SPANS + '/')}{_RETIRED_SUFFIX}"


def _delete_retired(remote: Remote, held: Lease, files: dict[str, float], now: float, *, marked: bool) -> None:
    """Delete the files whose grace is over, then their marks."""
    for relative, delete_after in sorted(files.items()):
        if delete_after <= now:
            held.check()
            remote.delete(relative)
            if marked:
                remote.delete(_retired_key(relative))
