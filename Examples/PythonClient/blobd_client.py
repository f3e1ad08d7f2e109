"""A client for blobd, written from docs/PROTOCOL.md alone.

Standard library only, Python 3.9 or newer. One :class:`BlobdClient` holds one keep-alive HTTP/1.1
connection over blobd's Unix socket; it is not thread-safe (give each thread its own client).
Event streams (:meth:`BlobdClient.watch`) use a connection of their own.

    >>> client = BlobdClient()                       # the default socket path
    >>> meta = client.put("notes", "today", b"hello", content_type="text/plain")
    >>> client.get("notes", "today")
    b'hello'
"""

from __future__ import annotations

import http.client
import io
import json
import os
import socket
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import (IO, Any, BinaryIO, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple,
                    Type, Union)
from urllib.parse import quote

__all__ = [
    "BlobdClient", "UnixHTTPConnection", "default_socket_path", "blob_path", "store_path",
    "Metadata", "ImageInfo", "Page", "StoreInfo", "StorePolicy", "StoreStatus", "VerifyProblem",
    "VerifyReport", "Blob", "Event", "PutEvent", "RemovedEvent", "ExpiredEvent", "EvictedEvent",
    "RemovedAllEvent", "GapEvent", "EventStream",
    "SSEParser", "JSONObject", "parse_metrics",
    "BlobdError", "BadRequest", "InvalidIdentifier", "InvalidStoreName", "InvalidMetadata",
    "InvalidQuery", "Forbidden", "NotFound", "MethodNotAllowed", "PreconditionFailed", "TooLarge",
    "NotAnImage", "RangeNotSatisfiable", "InvalidRecord", "ServerIOError", "Corrupt",
    "UnsupportedFormat", "InternalError", "StoreLocked", "InsufficientStorage", "InvalidPolicy",
    "ProtocolViolation",
]

#: Bodies at least this large (or of unknown size) are sent with ``Expect: 100-continue``, so a
#: refused upload costs no transfer.
EXPECT_CONTINUE_THRESHOLD = 1 << 20

_CHUNK = 1 << 16

#: A decoded JSON object of the protocol.
JSONObject = Dict[str, Any]


# --------------------------------------------------------------------------------------------
# Socket path and URL encoding
# --------------------------------------------------------------------------------------------

def default_socket_path() -> str:
    """The daemon's default socket: ``$XDG_RUNTIME_DIR/blobstore/blobd.sock``, else
    ``/tmp/blobstore-$UID/blobd.sock``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime:
        return os.path.join(runtime, "blobstore", "blobd.sock")
    return f"/tmp/blobstore-{os.getuid()}/blobd.sock"


def store_path(store: str) -> str:
    """``/v1/stores/{store}`` with the name percent-encoded."""
    return "/v1/stores/" + quote(store, safe="")


def blob_path(store: str, identifier: str) -> str:
    """``/v1/stores/{store}/blobs/{id}``: the identifier is the rest of the path, so its ``/`` stay
    as they are and every other reserved byte (space, ``?``, ``%``, ``#``, ...) is percent-encoded
    from its UTF-8 bytes. An empty identifier is refused here: ``…/blobs/`` is the store's whole
    collection to blobd, so a DELETE of it would remove every blob."""
    if not identifier:
        raise ValueError("a blob identifier cannot be empty")
    return store_path(store) + "/blobs/" + quote(identifier, safe="/")


def _query(params: Mapping[str, Optional[Union[str, int]]]) -> str:
    # Each value percent-encoded on its own: blobd reads `+` as a plus, so spaces must be `%20`.
    parts = [f"{quote(k, safe='')}={quote(str(v), safe='')}" for k, v in params.items()
             if v is not None]
    return ("?" + "&".join(parts)) if parts else ""


# --------------------------------------------------------------------------------------------
# Data types
# --------------------------------------------------------------------------------------------

def _rfc3339(date: datetime) -> str:
    """``date`` in UTC with milliseconds, as blobd writes dates (a naive datetime is UTC)."""
    if date.tzinfo is None:
        date = date.replace(tzinfo=timezone.utc)
    utc = date.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _parse_rfc3339(text: str) -> datetime:
    # `2026-11-22T22:28:28.076Z`; strptime's %z takes `Z` from Python 3.7 on.
    fmt = "%Y-%m-%dT%H:%M:%S.%f%z" if "." in text else "%Y-%m-%dT%H:%M:%S%z"
    return datetime.strptime(text, fmt)


@dataclass(frozen=True)
class ImageInfo:
    """What blobd recognised of an image: format (``png``, ``jpeg``, ...) and size in pixels."""
    format: str
    width: int
    height: int


@dataclass(frozen=True)
class Metadata:
    """One blob version, as PUT responses and list items describe it (or a HEAD's headers)."""
    identifier: str
    size: int
    content_type: str
    etag: str
    created: datetime
    modified: datetime
    metadata: Dict[str, str] = field(default_factory=dict)
    image: Optional[ImageInfo] = None
    expires: Optional[datetime] = None

    @classmethod
    def from_json(cls, obj: JSONObject) -> "Metadata":
        """Builds it from the protocol's metadata object."""
        image = obj.get("image")
        return cls(
            identifier=str(obj["identifier"]),
            size=int(obj["size"]),
            content_type=str(obj["contentType"]),
            etag=str(obj["etag"]),
            created=_parse_rfc3339(str(obj["created"])),
            modified=_parse_rfc3339(str(obj["modified"])),
            metadata={str(k): str(v) for k, v in dict(obj.get("metadata") or {}).items()},
            image=ImageInfo(str(image["format"]), int(image["width"]), int(image["height"]))
            if isinstance(image, dict) else None,
            expires=_parse_rfc3339(str(obj["expires"])) if obj.get("expires") is not None else None,
        )

    @classmethod
    def from_headers(cls, identifier: str, headers: http.client.HTTPMessage,
                     size: Optional[int] = None) -> "Metadata":
        """Builds it from a GET/HEAD response's headers. ``modified`` has only whole seconds there
        (``Last-Modified`` is an IMF-fixdate)."""
        meta: Dict[str, str] = {}
        for name, value in headers.items():
            if name.lower().startswith("blob-meta-"):
                meta[name[len("blob-meta-"):].lower()] = _header_text(value)
        image = None
        if headers.get("Blob-Image-Format"):
            image = ImageInfo(headers["Blob-Image-Format"], int(headers["Blob-Image-Width"]),
                              int(headers["Blob-Image-Height"]))
        return cls(
            identifier=identifier,
            size=int(headers["Content-Length"]) if size is None else size,
            content_type=headers.get("Content-Type", ""),
            etag=_unquote_etag(headers.get("ETag", "")),
            created=_parse_rfc3339(headers["Blob-Created"]),
            modified=parsedate_to_datetime(headers["Last-Modified"]).astimezone(timezone.utc),
            metadata=dict(sorted(meta.items())),
            image=image,
            expires=_parse_rfc3339(headers["Blob-Expires"]) if headers.get("Blob-Expires") else None,
        )


@dataclass(frozen=True)
class Blob:
    """A GET's outcome: ``status`` 200 or 206 with the content (or the range) and the version's
    metadata from the headers, or 304 (``not_modified``) with no data and no metadata: a 304
    carries only the ``etag``. ``content_range`` is set for 206."""
    status: int
    data: bytes
    etag: str
    metadata: Optional[Metadata]
    content_range: Optional[str] = None

    @property
    def not_modified(self) -> bool:
        """True for ``304 Not Modified``."""
        return self.status == 304


@dataclass(frozen=True)
class Page:
    """One page of a listing; ``next_cursor`` is None on the last page."""
    items: List[Metadata]
    next_cursor: Optional[str]


@dataclass(frozen=True)
class StoreInfo:
    """One store of ``GET /v1/stores``: its name, blob count and content bytes. A daemon that
    lists stores it has not opened leaves their totals out (None here) and may say whether it has
    the store ``open`` and which process holds it (``held_by``, e.g. ``pid 42``)."""
    name: str
    count: Optional[int]
    bytes: Optional[int]
    open: Optional[bool] = None
    held_by: Optional[str] = None
    policy: Optional["StorePolicy"] = None


@dataclass(frozen=True)
class StorePolicy:
    """A store's cache policy (``maxBytes``, ``maxCount``, ``defaultTTL`` in seconds); None: no
    limit."""
    max_bytes: Optional[int] = None
    max_count: Optional[int] = None
    default_ttl: Optional[float] = None

    @classmethod
    def from_json(cls, obj: JSONObject) -> "StorePolicy":
        """Builds it from the protocol's policy object."""
        ttl = obj.get("defaultTTL")
        return cls(int(obj["maxBytes"]) if obj.get("maxBytes") is not None else None,
                   int(obj["maxCount"]) if obj.get("maxCount") is not None else None,
                   float(ttl) if ttl is not None else None)


@dataclass(frozen=True)
class StoreStatus:
    """``GET /v1/stores/{store}``: a store's usage and policy."""
    name: str
    count: int
    bytes: int
    policy: StorePolicy

    @classmethod
    def from_json(cls, obj: JSONObject) -> "StoreStatus":
        """Builds it from the protocol's store object."""
        return cls(str(obj["name"]), int(obj["count"]), int(obj["bytes"]),
                   StorePolicy.from_json(obj["policy"]))


@dataclass(frozen=True)
class VerifyProblem:
    """A corrupt or orphaned file found by verify; ``identifier`` is None when the file does not
    say."""
    path: str
    reason: str
    identifier: Optional[str] = None


@dataclass(frozen=True)
class VerifyReport:
    """``GET /v1/stores/{store}/verify``."""
    healthy: int
    corrupt: List[VerifyProblem]
    orphaned: List[VerifyProblem]

    @property
    def ok(self) -> bool:
        """True when nothing is corrupt or orphaned."""
        return not self.corrupt and not self.orphaned


# Events --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    """A change event; subclasses hold the known kinds. ``id`` is the SSE id (an int for blobd)."""
    id: Optional[int]
    event: str
    data: str

    @property
    def json(self) -> JSONObject:
        """The ``data`` line parsed as JSON."""
        obj: JSONObject = json.loads(self.data)
        return obj


@dataclass(frozen=True)
class PutEvent(Event):
    """``event: put``: a new version of ``blob.identifier`` in ``store``."""
    store: str = ""
    blob: Optional[Metadata] = None
    date: Optional[datetime] = None


@dataclass(frozen=True)
class RemovedEvent(Event):
    """``event: removed``."""
    store: str = ""
    identifier: str = ""
    date: Optional[datetime] = None


@dataclass(frozen=True)
class ExpiredEvent(RemovedEvent):
    """``event: expired``: the blob reached its expiry and the store removed it."""


@dataclass(frozen=True)
class EvictedEvent(RemovedEvent):
    """``event: evicted``: the store evicted the blob to stay within its limits."""


@dataclass(frozen=True)
class RemovedAllEvent(Event):
    """``event: removed-all``."""
    store: str = ""
    date: Optional[datetime] = None


@dataclass(frozen=True)
class GapEvent(Event):
    """``event: gap``: events after ``last_event_id`` up to ``first_available_id - 1`` were lost;
    re-read (list) what you need."""
    last_event_id: int = 0
    first_available_id: int = 0


def _typed_event(id_: Optional[int], name: str, data: str) -> Event:
    try:
        obj = json.loads(data)
    except ValueError:
        return Event(id_, name, data)
    if not isinstance(obj, dict):
        return Event(id_, name, data)
    date = _parse_rfc3339(obj["date"]) if isinstance(obj.get("date"), str) else None
    if name == "put":
        return PutEvent(id_, name, data, store=obj.get("store", ""),
                        blob=Metadata.from_json(obj["blob"]), date=date)
    if name in ("removed", "expired", "evicted"):
        kind = {"removed": RemovedEvent, "expired": ExpiredEvent, "evicted": EvictedEvent}[name]
        return kind(id_, name, data, store=obj.get("store", ""),
                    identifier=obj.get("identifier", ""), date=date)
    if name == "removed-all":
        return RemovedAllEvent(id_, name, data, store=obj.get("store", ""), date=date)
    if name == "gap":
        return GapEvent(id_, name, data, last_event_id=int(obj["lastEventId"]),
                        first_available_id=int(obj["firstAvailableId"]))
    return Event(id_, name, data)


class SSEParser:
    """The Server-Sent Events line grammar (WHATWG): feed it bytes, get ``(id, event, data)``
    tuples. Comments (``:`` heartbeats) and ``retry`` are skipped."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: List[str] = []
        self._event = ""
        self._id: Optional[str] = None
        self.last_event_id: Optional[str] = None
        self.comments = 0

    def feed(self, chunk: bytes) -> Iterator[Tuple[Optional[str], str, str]]:
        """Parses what ``chunk`` completes."""
        self._buffer += chunk
        while True:
            cut = -1
            for i, byte in enumerate(self._buffer):
                if byte in (10, 13):
                    cut = i
                    break
            if cut < 0:
                return
            end = cut + 1
            if self._buffer[cut] == 13:
                if end == len(self._buffer):
                    return  # a CR at the end may be the first half of CRLF
                if self._buffer[end] == 10:
                    end += 1
            line = self._buffer[:cut].decode("utf-8", "replace")
            self._buffer = self._buffer[end:]
            dispatched = self._line(line)
            if dispatched is not None:
                yield dispatched

    def _line(self, line: str) -> Optional[Tuple[Optional[str], str, str]]:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            out = (self.last_event_id, self._event or "message", "\n".join(self._data))
            self._data, self._event = [], ""
            return out
        if line.startswith(":"):
            self.comments += 1
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self.last_event_id = value
        return None


class EventStream:
    """An iterator over ``/v1/events``, typed. ``last_event_id`` is the id of the last event
    yielded; with ``reconnect=True`` a closed stream is reopened with ``Last-Event-ID`` (after
    ``retry_delay`` seconds) instead of ending the iteration."""

    def __init__(self, client: "BlobdClient", store: Optional[str], last_event_id: Optional[int],
                 reconnect: bool, retry_delay: float, timeout: Optional[float]) -> None:
        self._client = client
        self._store = store
        self.last_event_id = last_event_id
        self._reconnect = reconnect
        self._retry_delay = retry_delay
        self._timeout = timeout
        self._conn: Optional[UnixHTTPConnection] = None
        self._response: Optional[http.client.HTTPResponse] = None
        self._sock: Optional[socket.socket] = None
        self._closed = False
        self.heartbeats = 0
        self._iter = self._events()

    def __iter__(self) -> "EventStream":
        return self

    def __next__(self) -> Event:
        return next(self._iter)

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection; the iteration ends."""
        self._closed = True
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)  # wakes a reader blocked on it
            except OSError:
                pass
            self._sock = None
        if self._response is not None:
            self._response.close()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def open(self) -> http.client.HTTPResponse:
        """Connects now (iteration connects on first use otherwise) and returns the response,
        whose head has been read. Raises :class:`BlobdError` for an error status."""
        self._conn = UnixHTTPConnection(self._client.socket_path, timeout=self._timeout)
        headers = {}
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = str(self.last_event_id)
        path = "/v1/events" + _query({"store": self._store})
        self._conn.request("GET", path, headers=headers)
        # http.client drops the connection's socket once it sees `Connection: close`; keep it to
        # be able to shut the stream down from close().
        self._sock = self._conn.sock
        response = self._conn.getresponse()
        if response.status != 200:
            body = response.read()
            self.close()
            raise _error_from(response.status, response.headers, body)
        self._response = response
        return response

    def _events(self) -> Iterator[Event]:
        while not self._closed:
            if self._response is None:
                try:
                    self.open()
                except OSError:
                    # Daemon down or restarting: keep trying when asked to reconnect.
                    if not self._reconnect or self._closed:
                        raise
                    time.sleep(self._retry_delay)
                    continue
            response = self._response
            assert response is not None
            parser = SSEParser()
            try:
                while True:
                    chunk = response.read1(_CHUNK)
                    if not chunk:
                        break
                    for id_text, name, data in parser.feed(chunk):
                        id_ = int(id_text) if id_text is not None and id_text.isdigit() else None
                        if id_ is not None:
                            self.last_event_id = id_
                        yield _typed_event(id_, name, data)
                    self.heartbeats = parser.comments
            except (OSError, http.client.HTTPException):
                if self._closed:
                    return
                if not self._reconnect:
                    raise
            finally:
                response.close()
                self._response = None
            if not self._reconnect:
                return
            self.close()
            self._closed = False
            time.sleep(self._retry_delay)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

class BlobdError(Exception):
    """An error response: HTTP ``status``, the stable ``code`` and the human ``message``."""

    status_hint: int = 0
    code_hint: str = ""

    def __init__(self, status: int, code: str, message: str,
                 headers: Optional[http.client.HTTPMessage] = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


class BadRequest(BlobdError):
    """``bad_request``: malformed HTTP or a bad header value (400, or 413/414/431/501/505 from the
    codec)."""
    code_hint = "bad_request"


class InvalidIdentifier(BlobdError):
    """400 ``invalid_identifier``."""
    code_hint = "invalid_identifier"


class InvalidStoreName(BlobdError):
    """400 ``invalid_store_name``."""
    code_hint = "invalid_store_name"


class InvalidMetadata(BlobdError):
    """400 ``invalid_metadata``."""
    code_hint = "invalid_metadata"


class InvalidQuery(BlobdError):
    """400 ``invalid_query``."""
    code_hint = "invalid_query"


class Forbidden(BlobdError):
    """403 ``forbidden``."""
    code_hint = "forbidden"


class NotFound(BlobdError):
    """404 ``not_found``."""
    code_hint = "not_found"


class MethodNotAllowed(BlobdError):
    """405 ``method_not_allowed``; :attr:`allow` lists the allowed methods."""
    code_hint = "method_not_allowed"

    @property
    def allow(self) -> List[str]:
        """The ``Allow`` header's methods."""
        value = self.headers.get("Allow", "") if self.headers is not None else ""
        return [m.strip() for m in value.split(",") if m.strip()]


class PreconditionFailed(BlobdError):
    """412 ``precondition_failed``; :attr:`current_etag` is the current version's, if any."""
    code_hint = "precondition_failed"

    @property
    def current_etag(self) -> Optional[str]:
        """The ``ETag`` header, unquoted, when the blob exists."""
        value = self.headers.get("ETag") if self.headers is not None else None
        return _unquote_etag(value) if value else None


class TooLarge(BlobdError):
    """413 ``too_large``."""
    code_hint = "too_large"


class NotAnImage(BlobdError):
    """415 ``not_an_image``."""
    code_hint = "not_an_image"


class RangeNotSatisfiable(BlobdError):
    """416 ``range_not_satisfiable``; :attr:`size` is the blob's size."""
    code_hint = "range_not_satisfiable"

    @property
    def size(self) -> Optional[int]:
        """From ``Content-Range: bytes */size``."""
        value = self.headers.get("Content-Range", "") if self.headers is not None else ""
        tail = value.rpartition("/")[2]
        return int(tail) if tail.isdigit() else None


class InvalidRecord(BlobdError):
    """422 ``invalid_record``."""
    code_hint = "invalid_record"


class ServerIOError(BlobdError):
    """500 ``io_error``: a system call failed in the daemon."""
    code_hint = "io_error"


class Corrupt(BlobdError):
    """500 ``corrupt``."""
    code_hint = "corrupt"


class UnsupportedFormat(BlobdError):
    """500 ``unsupported_format``."""
    code_hint = "unsupported_format"


class InternalError(BlobdError):
    """500 ``internal_error``."""
    code_hint = "internal_error"


class StoreLocked(BlobdError):
    """503 ``store_locked``."""
    code_hint = "store_locked"


class InsufficientStorage(BlobdError):
    """507 ``insufficient_storage``."""
    code_hint = "insufficient_storage"


class InvalidPolicy(BlobdError):
    """400 ``invalid_policy``: a store policy malformed or out of bounds."""
    code_hint = "invalid_policy"


class UnsupportedPolicy(BlobdError):
    """422 ``unsupported_policy``: a well-formed store policy the store's backend cannot keep."""
    code_hint = "unsupported_policy"


class BackendUnavailable(BlobdError):
    """503 ``backend_unavailable``: the store's backend (an S3 object store) could not be reached."""
    code_hint = "backend_unavailable"


class ProtocolViolation(BlobdError):
    """The daemon answered something PROTOCOL.md does not allow (code ``protocol``)."""
    code_hint = "protocol"


_BY_CODE: Dict[str, Type[BlobdError]] = {
    cls.code_hint: cls for cls in (
        BadRequest, InvalidIdentifier, InvalidStoreName, InvalidMetadata, InvalidQuery, Forbidden,
        NotFound, MethodNotAllowed, PreconditionFailed, TooLarge, NotAnImage, RangeNotSatisfiable,
        InvalidRecord, ServerIOError, Corrupt, UnsupportedFormat, InternalError, StoreLocked,
        InsufficientStorage, InvalidPolicy, UnsupportedPolicy, BackendUnavailable)
}

# Without a body (HEAD) only the status is known; these guess the code from it.
_BY_STATUS: Dict[int, Type[BlobdError]] = {
    400: BadRequest, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed,
    412: PreconditionFailed, 413: TooLarge, 414: BadRequest, 415: NotAnImage,
    416: RangeNotSatisfiable, 422: InvalidRecord, 431: BadRequest, 500: InternalError,
    501: BadRequest, 503: StoreLocked, 505: BadRequest, 507: InsufficientStorage,
}


def _error_from(status: int, headers: http.client.HTTPMessage, body: bytes) -> BlobdError:
    code, message = "", ""
    try:
        obj = json.loads(body.decode("utf-8"))
        code = str(obj["error"]["code"])
        message = str(obj["error"]["message"])
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace") or http.client.responses.get(status, "")
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or BlobdError
    return cls(status, code or cls.code_hint, message, headers)


# --------------------------------------------------------------------------------------------
# Connection
# --------------------------------------------------------------------------------------------

class UnixHTTPConnection(http.client.HTTPConnection):
    """``http.client.HTTPConnection`` over an ``AF_UNIX`` socket (keep-alive, reconnects on use
    after a close like its parent). The Host header is ``blobd``; blobd ignores it."""

    def __init__(self, socket_path: str, timeout: Optional[float] = None) -> None:
        super().__init__("blobd", timeout=timeout)
        self.socket_path = socket_path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if self.timeout is not None:
                sock.settimeout(self.timeout)
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def _unquote_etag(value: str) -> str:
    value = value.strip()
    if value.startswith("W/"):
        value = value[2:]
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _header_text(value: str) -> str:
    # http.client decodes header bytes as Latin-1; metadata values are sent as UTF-8.
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


Body = Union[bytes, bytearray, memoryview, BinaryIO, IO[bytes], "os.PathLike[str]"]
RangeSpec = Union[str, Tuple[Optional[int], Optional[int]]]


def _range_header(spec: RangeSpec) -> str:
    if isinstance(spec, str):
        return spec
    first, last = spec
    if first is None and last is None:
        raise ValueError("a range needs a start or a suffix length")
    if first is None:
        return f"bytes=-{last}"
    return f"bytes={first}-" + ("" if last is None else str(last))


class BlobdClient:
    """A blobd client over one keep-alive connection (not thread-safe).

    ``socket_path`` defaults to :func:`default_socket_path`. ``timeout`` is the socket timeout in
    seconds (None: wait for ever)."""

    def __init__(self, socket_path: Optional[str] = None, timeout: Optional[float] = 60.0) -> None:
        self.socket_path = socket_path or default_socket_path()
        self.timeout = timeout
        self._conn = UnixHTTPConnection(self.socket_path, timeout=timeout)

    def close(self) -> None:
        """Closes the connection (the next call reconnects)."""
        self._conn.close()

    def __enter__(self) -> "BlobdClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Requests ---------------------------------------------------------------------------------

    def _send(self, method: str, path: str, headers: Mapping[str, Union[str, bytes]],
              body: Optional[bytes] = None) -> http.client.HTTPResponse:
        # A keep-alive connection the daemon closed in between (restart, shutdown) fails on first
        # use; idempotent requests are retried once on a fresh connection.
        reused = self._conn.sock is not None
        try:
            return self._attempt(method, path, headers, body)
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            self._conn.close()
            if not reused or method not in ("GET", "HEAD", "DELETE"):
                raise
            return self._attempt(method, path, headers, body)

    def _attempt(self, method: str, path: str, headers: Mapping[str, Union[str, bytes]],
                 body: Optional[bytes]) -> http.client.HTTPResponse:
        try:
            self._conn.putrequest(method, path, skip_accept_encoding=True)
            for name, value in headers.items():
                self._conn.putheader(name, value)
            if body is not None or method in ("PUT", "POST"):
                self._conn.putheader("Content-Length", str(len(body or b"")))
            self._conn.endheaders(body)
        except (BrokenPipeError, ConnectionResetError) as error:
            # The daemon may have answered and stopped reading (a refused upload): its answer can
            # still be read. If there is none, the send's error stands.
            try:
                return self._conn.getresponse()
            except (OSError, http.client.HTTPException):
                self._conn.close()
                raise error from None
        except BaseException:
            # A half-sent request (a bad header, a failed send) leaves the connection unusable.
            self._conn.close()
            raise
        return self._conn.getresponse()

    def _request(self, method: str, path: str,
                 headers: Optional[Mapping[str, Union[str, bytes]]] = None,
                 ok: Tuple[int, ...] = (200,)) -> Tuple[http.client.HTTPResponse, bytes]:
        response = self._send(method, path, headers or {})
        body = response.read()
        if response.status not in ok:
            raise _error_from(response.status, response.headers, body)
        return response, body

    def _json(self, path: str) -> JSONObject:
        _, body = self._request("GET", path)
        obj: JSONObject = json.loads(body)
        return obj

    # Blobs ------------------------------------------------------------------------------------

    def put(self, store: str, identifier: str, data: Body, content_type: Optional[str] = None,
            metadata: Optional[Mapping[str, str]] = None, validate: Optional[str] = None,
            if_match: Optional[str] = None, if_none_match: bool = False,
            expect_continue: Optional[bool] = None,
            expires: Optional[Union[datetime, str]] = None,
            max_age: Optional[int] = None) -> Metadata:
        """Stores ``data`` (bytes, a binary file object, or a ``pathlib.Path``/``os.PathLike``) as
        the new version of ``identifier``. ``validate`` is ``"image"``, ``"record"`` or ``"none"``;
        ``if_match`` an ETag (replace only that version); ``if_none_match`` creates only.
        ``expect_continue`` defaults to on for bodies of 1 MiB or more or of unknown size.
        ``expires`` (a datetime, or ``"never"``) or ``max_age`` (seconds) sets when the version
        expires (``Blob-Expires``, ``Cache-Control: max-age``); neither: the store's default.
        Returns the stored version's metadata (``created`` tells new from replaced)."""
        headers: Dict[str, Union[str, bytes]] = {}
        if content_type is not None:
            headers["Content-Type"] = content_type
        for key, value in (metadata or {}).items():
            headers[f"Blob-Meta-{key}"] = value.encode("utf-8")
        if validate is not None:
            headers["Blob-Validate"] = validate
        if if_match is not None:
            headers["If-Match"] = f'"{_unquote_etag(if_match)}"'
        if if_none_match:
            headers["If-None-Match"] = "*"
        if isinstance(expires, datetime):
            headers["Blob-Expires"] = _rfc3339(expires)
        elif expires is not None:
            headers["Blob-Expires"] = expires
        if max_age is not None:
            headers["Cache-Control"] = f"max-age={max_age}"

        if isinstance(data, str):
            raise TypeError("put() takes bytes, a binary file object or a pathlib.Path, not str")
        if isinstance(data, (bytes, bytearray, memoryview)):
            payload = bytes(data)
            if len(payload) < EXPECT_CONTINUE_THRESHOLD and not expect_continue:
                response = self._send("PUT", blob_path(store, identifier), headers, payload)
                return self._put_result(response)
            return self._put_streamed(store, identifier, headers, io.BytesIO(payload),
                                      len(payload), expect_continue)
        if isinstance(data, os.PathLike):
            with open(os.fspath(data), "rb") as file:
                return self._put_streamed(store, identifier, headers, file,
                                          os.fstat(file.fileno()).st_size, expect_continue)
        return self._put_streamed(store, identifier, headers, data, _known_size(data),
                                  expect_continue)

    def _put_result(self, response: http.client.HTTPResponse) -> Metadata:
        body = response.read()
        if response.status not in (200, 201):
            raise _error_from(response.status, response.headers, body)
        return Metadata.from_json(json.loads(body))

    def _put_streamed(self, store: str, identifier: str, headers: Dict[str, Union[str, bytes]],
                      source: Union[BinaryIO, IO[bytes]], size: Optional[int],
                      expect_continue: Optional[bool]) -> Metadata:
        if expect_continue is None:
            expect_continue = size is None or size >= EXPECT_CONTINUE_THRESHOLD
        conn = self._conn
        try:
            conn.putrequest("PUT", blob_path(store, identifier), skip_accept_encoding=True)
            for name, value in headers.items():
                conn.putheader(name, value)
            if size is None:
                conn.putheader("Transfer-Encoding", "chunked")
            else:
                conn.putheader("Content-Length", str(size))
            if expect_continue:
                conn.putheader("Expect", "100-continue")
            conn.endheaders()
        except BaseException:
            conn.close()
            raise
        assert conn.sock is not None
        if expect_continue and not _await_continue(conn.sock):
            # The final answer came instead of 100 Continue; the body must not be sent, and the
            # connection cannot carry another request (the daemon closes it too).
            try:
                return self._put_result(conn.getresponse())
            finally:
                conn.close()
        try:
            while True:
                chunk = source.read(_CHUNK)
                if not chunk:
                    break
                if size is None:
                    conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                else:
                    conn.send(chunk)
            if size is None:
                conn.send(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            # The daemon refused the upload and stopped reading; its answer may still be readable.
            try:
                return self._put_result(conn.getresponse())
            finally:
                conn.close()
        except BaseException:
            conn.close()  # a half-sent body: the connection is unusable
            raise
        return self._put_result(conn.getresponse())

    def get(self, store: str, identifier: str, range: Optional[RangeSpec] = None) -> bytes:
        """The content (or the ``range``: ``(first, last)``, ``(first, None)``, ``(None, n)`` for
        the last n bytes, or a raw ``bytes=...`` string)."""
        return self.get_blob(store, identifier, range=range).data

    def get_blob(self, store: str, identifier: str, range: Optional[RangeSpec] = None,
                 if_none_match: Optional[Union[str, Iterable[str]]] = None) -> Blob:
        """Like :meth:`get`, with the metadata and status; ``if_none_match`` (an ETag, several,
        or ``"*"``) gives a :class:`Blob` with ``not_modified`` when the version matches."""
        headers = self._read_headers(range, if_none_match)
        response, body = self._request("GET", blob_path(store, identifier), headers,
                                       ok=(200, 206, 304))
        return self._blob(identifier, response, body)

    def _read_headers(self, range: Optional[RangeSpec],
                      if_none_match: Optional[Union[str, Iterable[str]]]) -> Dict[str, str]:
        headers: Dict[str, str] = {}
        if range is not None:
            headers["Range"] = _range_header(range)
        if if_none_match is not None:
            tags = [if_none_match] if isinstance(if_none_match, str) else list(if_none_match)
            headers["If-None-Match"] = ", ".join(
                t if t == "*" or t.startswith(("W/", '"')) else f'"{t}"' for t in tags)
        return headers

    @staticmethod
    def _blob(identifier: str, response: http.client.HTTPResponse, body: bytes) -> Blob:
        etag = _unquote_etag(response.headers.get("ETag", ""))
        if response.status == 304:
            return Blob(304, b"", etag, None)
        # The blob's size: a 206 says it in Content-Range, a 200 in Content-Length.
        content_range = response.headers.get("Content-Range")
        if content_range and "/" in content_range:
            size = int(content_range.rpartition("/")[2])
        else:
            size = int(response.headers.get("Content-Length") or 0)
        return Blob(response.status, body, etag,
                    Metadata.from_headers(identifier, response.headers, size=size), content_range)

    def stream(self, store: str, identifier: str, range: Optional[RangeSpec] = None,
               chunk_size: int = _CHUNK) -> Iterator[bytes]:
        """The content as an iterator of chunks, read as the caller consumes them. Errors are
        raised on the first ``next()``. Leaving the iteration early closes the connection."""
        headers = self._read_headers(range, None)
        response = self._send("GET", blob_path(store, identifier), headers)
        if response.status not in (200, 206):
            body = response.read()
            raise _error_from(response.status, response.headers, body)
        return self._chunks(response, chunk_size)

    def _chunks(self, response: http.client.HTTPResponse, chunk_size: int) -> Iterator[bytes]:
        finished = False
        try:
            while True:
                chunk = response.read(chunk_size)
                if not chunk:
                    finished = True
                    return
                yield chunk
        finally:
            if not finished:
                self._conn.close()

    def stat(self, store: str, identifier: str) -> Metadata:
        """``HEAD``: the current version's metadata (``modified`` to the second)."""
        response, _ = self._request("HEAD", blob_path(store, identifier))
        return Metadata.from_headers(identifier, response.headers)

    def exists(self, store: str, identifier: str) -> bool:
        """True when the blob exists."""
        try:
            self.stat(store, identifier)
            return True
        except NotFound:
            return False

    def remove(self, store: str, identifier: str, if_match: Optional[str] = None) -> None:
        """Deletes the blob (``NotFound`` if absent; ``PreconditionFailed`` if ``if_match`` is not
        the current ETag)."""
        headers = {"If-Match": f'"{_unquote_etag(if_match)}"'} if if_match is not None else {}
        self._request("DELETE", blob_path(store, identifier), headers, ok=(204,))

    def remove_all(self, store: str) -> None:
        """Deletes every blob of the store."""
        self._request("DELETE", store_path(store) + "/blobs", ok=(204,))

    # Listing ----------------------------------------------------------------------------------

    def list(self, store: str, prefix: Optional[str] = None, type: Optional[str] = None,
             sort: Optional[str] = None, limit: Optional[int] = None,
             cursor: Optional[str] = None) -> Page:
        """One page of the store's blobs. ``sort`` is ``"identifier"`` or ``"modified"``."""
        query = _query({"prefix": prefix, "type": type, "sort": sort, "limit": limit,
                        "cursor": cursor})
        obj = self._json(store_path(store) + "/blobs" + query)
        items = obj["items"]
        assert isinstance(items, list)
        next_cursor = obj.get("nextCursor")
        return Page([Metadata.from_json(item) for item in items],
                    str(next_cursor) if next_cursor is not None else None)

    def list_all(self, store: str, prefix: Optional[str] = None, type: Optional[str] = None,
                 sort: Optional[str] = None, page_size: Optional[int] = None) -> Iterator[Metadata]:
        """Every matching blob, page after page."""
        cursor: Optional[str] = None
        while True:
            page = self.list(store, prefix=prefix, type=type, sort=sort, limit=page_size,
                             cursor=cursor)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def stores(self) -> List[StoreInfo]:
        """Every store under the daemon's root, sorted by name."""
        obj = self._json("/v1/stores")
        stores = obj["stores"]
        assert isinstance(stores, list)
        return [StoreInfo(str(s["name"]),
                          int(s["count"]) if s.get("count") is not None else None,
                          int(s["bytes"]) if s.get("bytes") is not None else None,
                          bool(s["open"]) if "open" in s else None,
                          str(s["heldBy"]) if s.get("heldBy") is not None else None,
                          StorePolicy.from_json(s["policy"]) if isinstance(s.get("policy"), dict)
                          else None)
                for s in stores]

    def store_status(self, store: str) -> StoreStatus:
        """``GET /v1/stores/{store}``: the store's usage and policy."""
        return StoreStatus.from_json(self._json(store_path(store)))

    def set_store_policy(self, store: str, **members: Optional[float]) -> StoreStatus:
        """``PUT /v1/stores/{store}``: creates the store if needed and sets the members given
        (``max_bytes``, ``max_count``, ``default_ttl``; None lifts a limit); the others are kept."""
        names = {"max_bytes": "maxBytes", "max_count": "maxCount", "default_ttl": "defaultTTL"}
        unknown = set(members) - set(names)
        if unknown:
            raise TypeError(f"unknown policy members: {sorted(unknown)}")
        body = json.dumps({names[key]: value for key, value in members.items()}).encode("utf-8")
        response = self._send("PUT", store_path(store), {"Content-Type": "application/json"}, body)
        data = response.read()
        if response.status not in (200, 201):
            raise _error_from(response.status, response.headers, data)
        return StoreStatus.from_json(json.loads(data))

    def verify(self, store: str) -> VerifyReport:
        """Reads and checks every blob of the store (slow on big stores)."""
        obj = self._json(store_path(store) + "/verify")

        def problems(key: str) -> List[VerifyProblem]:
            return [VerifyProblem(str(p["path"]), str(p["reason"]), p.get("identifier"))
                    for p in obj.get(key) or []]
        return VerifyReport(int(obj["healthy"]), problems("corrupt"), problems("orphaned"))

    def health(self) -> bool:
        """True when the daemon answers ``{"status":"ok"}``."""
        return self._json("/v1/health").get("status") == "ok"

    def metrics(self) -> str:
        """The Prometheus text (see :func:`parse_metrics`)."""
        _, body = self._request("GET", "/metrics")
        return body.decode("utf-8")

    def watch(self, store: Optional[str] = None, last_event_id: Optional[int] = None,
              reconnect: bool = False, retry_delay: float = 0.5,
              timeout: Optional[float] = None) -> EventStream:
        """Follows ``/v1/events`` (of one store, or all) on a connection of its own. Iterate it for
        typed events (:class:`PutEvent`, :class:`RemovedEvent`, :class:`RemovedAllEvent`,
        :class:`GapEvent`); pass a previous stream's ``last_event_id`` to resume. Close it (or use
        it as a context manager) when done."""
        return EventStream(self, store, last_event_id, reconnect, retry_delay, timeout)


def _known_size(source: Union[BinaryIO, IO[bytes]]) -> Optional[int]:
    """The bytes left in a seekable file, else None (the body is then sent chunked)."""
    try:
        if not source.seekable():
            return None
        here = source.tell()
        end = source.seek(0, os.SEEK_END)
        source.seek(here)
        return end - here
    except (AttributeError, OSError, ValueError):
        return None


def _await_continue(sock: socket.socket) -> bool:
    """Waits for the interim ``100 Continue`` and consumes it (True), or leaves a final response
    for http.client to read (False). Peeks, so nothing of a final response is taken."""
    while True:
        head = sock.recv(8192, socket.MSG_PEEK)
        if not head:
            return False
        end = head.find(b"\r\n\r\n")
        if end < 0:
            if len(head) >= 8192:
                return False
            time.sleep(0.001)  # a partial head: wait for the rest
            continue
        if head.split(b" ", 2)[1:2] == [b"100"]:
            sock.recv(end + 4)
            return True
        return False


def parse_metrics(text: str) -> Dict[Tuple[str, Tuple[Tuple[str, str], ...]], float]:
    """Parses Prometheus text into ``{(name, ((label, value), ...)): value}``."""
    samples: Dict[Tuple[str, Tuple[Tuple[str, str], ...]], float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        labels: Tuple[Tuple[str, str], ...] = ()
        name = head
        if "{" in head:
            name, _, rest = head.partition("{")
            pairs = []
            for part in _split_labels(rest.rstrip("}")):
                key, _, raw = part.partition("=")
                pairs.append((key.strip(), json.loads(raw)))
            labels = tuple(sorted(pairs))
        samples[(name, labels)] = float(value)
    return samples


def _split_labels(text: str) -> List[str]:
    parts, current, quoted, escaped = [], "", False, False
    for ch in text:
        if escaped:
            current += ch
            escaped = False
        elif ch == "\\":
            current += ch
            escaped = True
        elif ch == '"':
            current += ch
            quoted = not quoted
        elif ch == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    return parts
