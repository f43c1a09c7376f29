"""Who a request speaks for, and whether the request is welcome at all.

Readers sign in with their secret (the API token `paperatlas readers token NAME` prints); the
server then keeps a signed session cookie (`pa_session`, HttpOnly, SameSite=Strict). The cookie
names the reader's id and a fingerprint of their token, signed with a per-library secret kept
in the library, so no cookie value a visitor can make up speaks for another reader, and
resetting a token ends that reader's sessions. Scripts send `Authorization: Bearer TOKEN`.

The owner of a single-user local install should never meet a sign-in form: a server bound to
loopback signs in requests that come from this machine (and not through a proxy) as the owner:
the reader "me", or the only reader when there is just one. See docs/security.md.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import weakref
from collections.abc import Iterable

from starlette.requests import Request

from ..library import Library
from ..readers import Reader

SESSION_COOKIE = "pa_session"
SECRET_KEY = "web_session_secret"  # meta key of the per-library signing secret
OWNER = "me"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SESSION_MAX_AGE = 400 * 86400  # browsers cap cookie lifetimes at 400 days


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


def session_value(library: Library, r: Reader) -> str:
    """The cookie value that signs `r` in: id.fingerprint.signature."""
    body = f"{r.id}.{_fingerprint(r)}"
    return f"{body}.{_sign(library_secret(library), body)}"


def session_reader(library: Library, value: str) -> Reader | None:
    """The reader a session cookie signs in, or None when it is forged, stale or malformed."""
    parts = value.split(".")
    if len(parts) != 3 or not parts[0].isdigit() or len(parts[0]) > 18:
        return None
    body = f"{parts[0]}.{parts[1]}"
    if not _same(_sign(library_secret(library), body), parts[2]):
        return None
    r = library.readers.find(int(parts[0]))
    if r is None or not _same(_fingerprint(r), parts[1]):
        return None  # the reader is gone or their token was reset since
    return r


def feed_key(library: Library, kind: str, r: Reader, ident: str | int = "") -> str:
    """The unguessable key in a reader's feed URL (feeds are read by feed readers, which keep no cookie)."""
    return _sign(library_secret(library), f"feed:{kind}:{r.id}:{ident}:{_fingerprint(r)}")[:24]


def check_feed_key(library: Library, kind: str, r: Reader, key: str, ident: str | int = "") -> bool:
    return bool(key) and _same(feed_key(library, kind, r, ident), key)


def owner_reader(library: Library) -> Reader | None:
    """The reader a local owner acts as: "me", else the only reader (None when there is none yet)."""
    me = library.readers.find(OWNER)
    if me is not None:
        return me
    readers = library.readers.all()
    return readers[0] if len(readers) == 1 else None


def first_owner_name(library: Library) -> str | None:
    """With no owner reader yet: the name the owner's first write creates, "me", unless other
    readers exist (then the owner signs in like anyone)."""
    return OWNER if not library.readers.all() else None


def client_is_loopback(request: Request) -> bool:
    """A request from this machine, not relayed by a proxy (a proxy on this host looks local)."""
    if any(h in request.headers for h in ("x-forwarded-for", "forwarded", "x-real-ip")):
        return False
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- Host names ----------------------------------------------------------------------------------
def host_name(host_header: str) -> str:
    """"example.org:8000" -> "example.org", "[::1]:8000" -> "::1" (lower case)."""
    h = host_header.strip().lower()
    if h.startswith("["):
        return h[1:].split("]", 1)[0]
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


class HostCheck:
    """Which Host headers are served. DNS rebinding makes a hostile name resolve to this server,
    so only names the owner configured are served: loopback names by default, `--allowed-host`
    for more ("*" for any). An IP literal is always served: a browser that asked for an address
    is on that address's own origin, which no rebinding page can be."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        names = {host_name(a) for a in allowed if a.strip()}
        self.any = "*" in names
        self.names = set(LOOPBACK_NAMES) | names

    def allows(self, host_header: str | None) -> bool:
        if self.any:
            return True
        if not host_header:
            return False  # HTTP/1.1 requires it; a missing Host is never a browser
        name = host_name(host_header)
        return name in self.names or _is_ip(name) or name.endswith(".localhost")


def new_secret() -> str:
    return secrets.token_urlsafe(32)
