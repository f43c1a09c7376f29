"""Read a Zotero library straight from the Zotero web API (api.zotero.org, version 3).

`import-reader zotero:users/475425` (or `zotero:groups/ID`) pages through the library's top-level
items; the key comes from $ZOTERO_API_KEY (public libraries need none). The fetchers' own HTTP client
talks to it (pyzotero pins bibtexparser < 2, which this package cannot share).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from .. import settings
from .. import __version__
from ..errors import PaperatlasError
from .readers import Entry, _entry

API = "https://api.zotero.org"
PAGE = 100  # the API's largest page
RETRIES = 4
MAX_WAIT = 60.0  # the longest a Retry-After or Backoff header may make us wait
_SPEC = re.compile(r"^zotero:(users|groups)/(\d+)$")
_NOT_ITEMS = {"attachment", "note", "annotation"}
KEY_FIX = (
    "make a key with read access at https://www.zotero.org/settings/keys and set "
    'ZOTERO_API_KEY (the library ID is on the same page: "Your userID for use in API calls")'
)


def is_spec(source: str) -> bool:
    return str(source).startswith("zotero:")


def parse_spec(source: str) -> tuple[str, str]:
    m = _SPEC.match(source.strip())
    if not m:
        raise PaperatlasError(
            f"bad Zotero library {source!r}",
            "write zotero:users/USERID or zotero:groups/GROUPID (numbers, from "
            "https://www.zotero.org/settings/keys or the group's page)",
        )
    return m.group(1), m.group(2)


def item_entry(item: dict[str, Any]) -> Entry | None:
    """An Entry from one item of the API's JSON (None for attachments and notes)."""
    d = item.get("data", item)
    if d.get("itemType") in _NOT_ITEMS:
        return None
    authors = [
        (c.get("name") or f"{c.get('firstName', '')} {c.get('lastName', '')}").strip()
        for c in d.get("creators") or []
        if c.get("creatorType", "author") == "author"
    ]
    extra = str(d.get("extra") or "")
    return _entry(
        str(d.get("title") or ""),
        "",
        d.get("date"),
        authors,
        str(d.get("DOI") or ""),
        str(d.get("archiveID") or ""),
        [str(d.get("url") or "")],
        [extra, *extra.splitlines(), str(d.get("archiveID") or ""), str(d.get("number") or "")],
    )


def fetch_items(
    source: str,
    key: str | None = None,
    base: str | None = None,
    sleep: Callable[[float], None] | None = None,
    timeout: float = 30,
) -> list[dict[str, Any]]:
    """Every top-level item of a Zotero library (JSON dicts), page by page.

    Retries a 429 / 5xx answer up to RETRIES times, waiting as Retry-After or Backoff says (at most
    MAX_WAIT seconds; the API's rate limiting); a 403 / 404 is an error that says how to fix the key
    or the id. The transport is the fetchers' client (body cap, whole-request deadline, redirects
    only within the host). An answer that is not a list of objects, a Total-Results that is not a
    number, a page the API already sent, or more than $PAPERATLAS_FETCH_MAX_PAGES pages is an error
    naming the page: nothing is imported from a library that was not read whole."""
    from ..http_client import MAX_PAGES_ENV, max_pages_default
    from ..http_client import HttpClient

    kind, lib_id = parse_spec(source)
    sleep = sleep or time.sleep
    key = key if key is not None else settings.get("zotero_api_key")
    base = (base or settings.raw("zotero_api_url") or API).rstrip("/")
    client = HttpClient(
        connect_timeout=min(10.0, timeout),
        read_timeout=timeout,
        retries=0,
        unreachable_retries=0,
        sleep=sleep,
        user_agent=f"paperatlas/{__version__}",
    )
    cap = max_pages_default()
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    start, total, pages = 0, None, 0
    while total is None or start < total:
        if pages >= cap:
            raise PaperatlasError(
                f"{source}: more than {cap} pages of {PAGE} items; stopped, nothing imported",
                f"raise the cap with {MAX_PAGES_ENV}=N if the library really is that large, "
                "or export it to a file and import that",
            )
        query = urllib.parse.urlencode({"format": "json", "limit": PAGE, "start": start})
        url = f"{base}/{kind}/{lib_id}/items/top?{query}"
        body, headers = _get(client, url, key, sleep, source)
        pages += 1
        page = _parse(body, source, start)
        digest = hashlib.sha256(body).hexdigest()
        if page and digest in seen:
            raise PaperatlasError(
                f"{source}: the Zotero API sent the same items again at start={start}; "
                "stopped, nothing imported (it would never end)",
                "try again later; check ZOTERO_API_URL if you set it",
            )
        seen.add(digest)
        items += page
        total = _total(headers.get("Total-Results"), len(items), source)
        if not page:
            break
        start += len(page)
        backoff = _seconds(headers.get("Backoff"))
        if backoff is not None:  # the server asks clients to slow down
            sleep(min(backoff, MAX_WAIT))
    return items


def _seconds(value: str | None) -> float | None:
    v = (value or "").strip()
    return float(v) if v.replace(".", "", 1).isdigit() else None


def _total(value: str | None, have: int, source: str) -> int:
    if value is None or not value.strip():
        return have
    if not value.strip().isdigit():
        raise PaperatlasError(
            f"{source}: the Zotero API answered Total-Results: {value[:40]!r}, not a number",
            "try again later; check ZOTERO_API_URL (unset it for api.zotero.org)",
        )
    return int(value)


def _parse(body: bytes, source: str, start: int) -> list[dict[str, Any]]:
    try:
        page = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise PaperatlasError(
            f"{source}: the Zotero API answered something that is not JSON",
            "try again later; check ZOTERO_API_URL if you set it",
        ) from None
    except RecursionError:
        raise PaperatlasError(
            f"{source}: the Zotero API answered JSON nested too deep to read (start={start})",
            "check ZOTERO_API_URL (unset it for api.zotero.org)",
        ) from None
    if not isinstance(page, list):
        raise PaperatlasError(
            f"{source}: the Zotero API answered {type(page).__name__}, not a list of items",
            "check ZOTERO_API_URL (unset it for api.zotero.org)",
        )
    for i, item in enumerate(page):
        if not isinstance(item, dict) or not isinstance(item.get("data", item), dict):
            what = f"{type(item).__name__}, not" if not isinstance(item, dict) else "an object whose data is not"
            raise PaperatlasError(
                f"{source}: item {start + i + 1} of the answer is {what} an object",
                "check ZOTERO_API_URL (unset it for api.zotero.org)",
            )
    return page


def _get(client: Any, url: str, key: str, sleep: Callable[[float], None], source: str) -> tuple[bytes, Any]:
    from ..http_client import FetchError

    req_headers = {"Zotero-API-Version": "3"}
    if key:
        req_headers["Zotero-API-Key"] = key
    for attempt in range(RETRIES + 1):
        try:
            resp = client.get(url, headers=req_headers, what=source)
            return resp.body, resp.headers
        except FetchError as e:
            if e.status == 403:
                raise PaperatlasError(
                    f"{source}: the Zotero API refused the key (HTTP 403)"
                    + ("" if key else "; this library is not public"),
                    KEY_FIX,
                ) from None
            if e.status == 404:
                raise PaperatlasError(
                    f"{source}: no such Zotero library (HTTP 404)",
                    "check the number: zotero:users/USERID or zotero:groups/GROUPID",
                ) from None
            if not e.transient:  # past the deadline, over the cap, a refused redirect, a 4xx
                raise PaperatlasError(f"{source}: {e.message}", e.fix) from None
            if attempt < RETRIES:
                wait = _seconds(e.headers.get("Retry-After")) if e.status else None
                if wait is None and e.status:
                    wait = _seconds(e.headers.get("Backoff"))
                sleep(min(wait if wait is not None else 2.0**attempt, MAX_WAIT))
                continue
            if e.status:
                raise PaperatlasError(f"{source}: the Zotero API answered HTTP {e.status}", "try again later") from None
            raise PaperatlasError(
                f"{source}: cannot reach the Zotero API ({e.message})",
                "check the network connection, or export the library to a file and import that",
            ) from None
    raise AssertionError("unreachable")  # pragma: no cover


def read_zotero_api(source: str, **kw: Any) -> list[Entry]:
    return [e for it in fetch_items(source, **kw) if (e := item_entry(it)) is not None]
