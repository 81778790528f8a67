"""HTTP requests as ocg makes them: one wall-clock deadline for the whole request, a bounded
body, and answers that break HTTP's limits named as such.

requests (urllib3, http.client) bounds each socket operation, not a request: a server that sends
its status line, headers or body a byte at a time, each byte within the read timeout, holds a
request for ever. Here a timer shuts the request's socket down when the deadline passes; the
read blocked on it returns at once, and the request ends with DeadlineExceeded. The body is read
whole, undecoded (decode_body undoes a content coding under its own bound), under the same
deadline and at most `max_bytes` of it.
"""

from __future__ import annotations

import http.client
import socket
import threading

import requests
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection

from ...core.errors import OcgFault


class DeadlineExceeded(OcgFault):
    """No complete answer before the request's deadline."""


class BodyTooLong(OcgFault):
    """The answer's body is longer than the caller allows."""


_current = threading.local()  # the deadline of the request this thread is making


class _Watch:
    """The sockets one request uses, shut down when its deadline passes."""

    def __init__(self, seconds: float):
        self.fired = False
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def add(self, sock) -> None:
        with self._lock:
            if sock is None or any(s is sock for s in self._socks):
                return
            self._socks.append(sock)
            if self.fired:
                _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._socks:
                _shut(sock)


def _shut(sock) -> None:
    """Wake any read blocked on `sock` (the plain socket's shutdown: a TLS layer is left alone)."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # closed already
        pass


def _watched(base: type) -> type:
    class Watched(base):
        """A connection that hands its socket to the deadline of the request using it."""

        def connect(self):
            super().connect()
            if (watch := getattr(_current, "watch", None)) is not None:
                watch.add(self.sock)

        def getresponse(self):  # a kept-alive connection is not connected again
            if (watch := getattr(_current, "watch", None)) is not None:
                watch.add(self.sock)
            return super().getresponse()

    return Watched


class _Pool(urllib3.HTTPConnectionPool):
    ConnectionCls = _watched(HTTPConnection)


class _TlsPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _watched(HTTPSConnection)


_POOLS = {"http": _Pool, "https": _TlsPool}


class _Adapter(requests.adapters.HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy, **kwargs):
        manager = super().proxy_manager_for(proxy, **kwargs)
        if type(manager) is urllib3.ProxyManager:  # a SOCKS manager's pools are its own
            manager.pool_classes_by_scheme = _POOLS
        return manager


def session() -> requests.Session:
    """A requests session whose connections honour fetch's deadline."""
    s = requests.Session()
    for prefix in ("http://", "https://"):
        s.mount(prefix, _Adapter())
    return s


def fetch(
    s: requests.Session, method: str, url: str, seconds: float, max_bytes: int, **kwargs
) -> tuple[requests.Response, bytes]:
    """(the answer, its whole body undecoded), within `seconds` of wall clock from now: else
    DeadlineExceeded; a body past `max_bytes` is BodyTooLong; anything else as requests raises it."""
    watch = _Watch(seconds)
    _current.watch = watch
    watch._timer.start()
    try:
        resp = s.request(method, url, stream=True, timeout=(min(seconds, 30.0), seconds), **kwargs)
        with resp:
            chunks, size = [], 0
            while chunk := resp.raw.read1(65536, decode_content=False):
                size += len(chunk)
                if size > max_bytes:
                    raise BodyTooLong(
                        f"HTTP {resp.status_code}: the body is longer than {max_bytes} bytes; refused"
                    )
                chunks.append(chunk)
    except BodyTooLong:
        raise
    except Exception:
        if watch.fired:
            raise DeadlineExceeded(f"no complete answer within {seconds:g} s") from None
        raise
    finally:
        watch._timer.cancel()
        _current.watch = None
    if watch.fired:  # the shut socket read as the body's end
        raise DeadlineExceeded(f"no complete answer within {seconds:g} s")
    return resp, b"".join(chunks)


def _causes(exc: BaseException):
    """`exc` and the exceptions it wraps (urllib3 and requests nest them in their arguments)."""
    todo, seen = [exc], set()
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [a for a in (*e.args, e.__cause__, e.__context__) if isinstance(a, BaseException)]


def broken_answer(exc: BaseException) -> str | None:
    """What is wrong with an answer that no retry mends (a redirect loop, a line or headers past
    http.client's limits), in words; None for other failures (a refused or dropped connection)."""
    if isinstance(exc, requests.TooManyRedirects):
        last = exc.response.url if exc.response is not None else "?"
        return f"more than {requests.models.DEFAULT_REDIRECT_LIMIT} redirects (a loop?), the last to {last}"
    for e in _causes(exc):
        if isinstance(e, http.client.LineTooLong) or (
            type(e) is http.client.HTTPException and "more than" in str(e)
        ):
            return f"the answer is past http.client's limits ({e}); refused"
    return None
