"""Who a request speaks for, and whether the request is welcome at all.

Readers sign in with their secret (the API token `paperatlas readers token NAME` prints); the
server then keeps a signed session cookie (`pa_session`, HttpOnly, SameSite=Strict). The cookie
names the reader's id, a session kept in the library (so signing out ends it on the server, and
it expires after 30 days) and a fingerprint of their token, signed with a per-library secret kept
in the library, so no cookie value a visitor can make up speaks for another reader, and
resetting a token ends that reader's sessions. Scripts send `Authorization: Bearer TOKEN`.

The owner of a local install should never meet a sign-in form: a server bound to loopback
signs in requests that come from this machine (not through a proxy) and ask for a loopback name
as the owner, who is always the reader "me" (the reader the CLI writes to by default), created
on the owner's first write. Nobody else can create "me". See docs/security.md.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
import unicodedata
import weakref

from starlette.requests import Request

from ..hosts import LOOPBACK_NAMES, HostCheck, host_name, is_loopback_name
from ..library import Library
from ..readers import Reader

__all__ = ["LOOPBACK_NAMES", "HostCheck", "host_name", "is_loopback_name"]  # kept here for the web's callers

SESSION_COOKIE = "pa_session"
SECRET_KEY = "web_session_secret"  # meta key of the per-library signing secret
OWNER = "me"
SESSION_MAX_AGE = 30 * 86400  # a sign-in lasts 30 days; then the token is asked for again


# per open library: asked once, and on a read-only server (where a library without a secret
# cannot store one) the same in-memory secret for the life of the process
_SECRETS: weakref.WeakKeyDictionary[Library, bytes] = weakref.WeakKeyDictionary()


def library_secret(library: Library) -> bytes:
    """The library's signing secret, made once and kept in the library (shared by every host of it)."""
    secret = _SECRETS.get(library)
    if secret is None:
        secret = _SECRETS.setdefault(library, library.secret(SECRET_KEY).encode())
    return secret


def _fingerprint(r: Reader) -> str:
    return hashlib.sha256(r.token.encode()).hexdigest()[:16]


def _sign(secret: bytes, text: str) -> str:
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()[:32]


def _same(a: str, b: str) -> bool:
    """Constant-time equality that also takes non-ASCII input (hmac refuses such str)."""
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def new_session(library: Library, r: Reader) -> str:
    """Start a web session of `r` (a row in the library) and return the cookie value that carries
    it: reader id . session id . token fingerprint . signature."""
    sid = library.readers.new_session(r.id, SESSION_MAX_AGE)
    body = f"{r.id}.{sid}.{_fingerprint(r)}"
    return f"{body}.{_sign(library_secret(library), body)}"


def _session_parts(library: Library, value: str) -> tuple[int, str, str] | None:
    """(reader id, session id, fingerprint) of a cookie whose signature holds, else None."""
    parts = value.split(".")
    if len(parts) != 4 or not parts[0].isdigit() or len(parts[0]) > 18 or not 0 < len(parts[1]) <= 64:
        return None
    body = ".".join(parts[:3])
    if not _same(_sign(library_secret(library), body), parts[3]):
        return None
    return int(parts[0]), parts[1], parts[2]


def session_reader(library: Library, value: str) -> Reader | None:
    """The reader a session cookie signs in, or None when it is forged, expired, signed out, or
    the reader's token was reset since."""
    parts = _session_parts(library, value)
    if parts is None:
        return None
    rid, sid, fp = parts
    r = library.readers.find(rid)
    if r is None or not _same(_fingerprint(r), fp) or not library.readers.session_is_live(rid, sid):
        return None
    return r


def end_session(library: Library, value: str) -> None:
    """Sign out: the session of this cookie stops working everywhere (a copy of it included)."""
    parts = _session_parts(library, value)
    if parts is not None:
        library.readers.end_session(parts[1])


def feed_key(library: Library, kind: str, r: Reader, ident: str | int = "") -> str:
    """The unguessable key in a reader's feed URL (feeds are read by feed readers, which keep no cookie)."""
    return _sign(library_secret(library), f"feed:{kind}:{r.id}:{ident}:{_fingerprint(r)}")[:24]


def check_feed_key(library: Library, kind: str, r: Reader, key: str, ident: str | int = "") -> bool:
    return bool(key) and _same(feed_key(library, kind, r, ident), key)


def owner_reader(library: Library) -> Reader | None:
    """The reader a local owner acts as: always "me", whoever else exists (None until the owner's
    first write creates it). The CLI's `like`, `recommend` ... write and read "me" by default too,
    so the page and the terminal agree."""
    return library.readers.find(OWNER)


def is_owner_name(name: str) -> bool:
    """Whether `name` is, or reads as, the owner's reader name ("me", "ME", a full-width "ｍｅ"):
    names only the owner may create, so no visitor can pose as the owner to the others."""
    return unicodedata.normalize("NFKC", name).casefold().strip() == OWNER


# Headers a relaying proxy adds: a request carrying any of them came from somewhere else, even
# when the proxy itself runs on this machine (its connection comes from a loopback address).
PROXY_HEADERS = (
    "x-forwarded-for",
    "forwarded",
    "x-real-ip",
    "via",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-forwarded-server",
    "cf-connecting-ip",
    "true-client-ip",
    "x-client-ip",
    "x-cluster-client-ip",
    "fastly-client-ip",
    "x-original-forwarded-for",
    "x-envoy-external-address",
)


def client_is_loopback(request: Request) -> bool:
    """A request from this machine, not relayed by a proxy (a proxy on this host looks local)."""
    if any(h in request.headers for h in PROXY_HEADERS):
        return False
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class SignupLimit:
    """New readers a visitor may create: `burst` at once per client address, then one per `every`
    seconds (a token bucket). Kept in this process: with `serve --workers N` each worker has its
    own buckets; behind a proxy every visitor shares the proxy's address (stricter, never looser)."""

    def __init__(self, burst: int = 5, every: float = 600.0, max_clients: int = 10_000) -> None:
        self.burst, self.every, self.max_clients = burst, every, max_clients
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, when counted)
        self._lock = threading.Lock()

    def take(self, client: str, now: float | None = None) -> float:
        """Take one sign-up for `client`: 0 when allowed, else the seconds until the next one is."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, then = self._buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) / self.every)
            if tokens < 1:
                self._buckets[client] = (tokens, now)
                return (1 - tokens) * self.every
            if len(self._buckets) >= self.max_clients and client not in self._buckets:
                self._forget_full(now)
            self._buckets[client] = (tokens - 1, now)
            return 0.0

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that have refilled (they hold nothing a new bucket would not)."""
        for c, (tokens, then) in list(self._buckets.items()):
            if tokens + (now - then) / self.every >= self.burst:
                del self._buckets[c]
        if len(self._buckets) >= self.max_clients:  # all busy: the oldest go first
            for c in sorted(self._buckets, key=lambda c: self._buckets[c][1])[: self.max_clients // 10 or 1]:
                del self._buckets[c]


def new_secret() -> str:
    return secrets.token_urlsafe(32)
