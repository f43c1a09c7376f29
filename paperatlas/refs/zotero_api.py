"""Read a Zotero library straight from the Zotero web API (api.zotero.org, version 3).

`import-reader zotero:users/475425` (or `zotero:groups/ID`) pages through the library's top-level
items; the key comes from $ZOTERO_API_KEY (public libraries need none). Only the standard library
talks HTTP here: pyzotero pins bibtexparser < 2, which this package cannot share.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from .. import __version__
from ..errors import PaperatlasError
from .readers import Entry, _entry

API = "https://api.zotero.org"
PAGE = 100  # the API's largest page
RETRIES = 4
_SPEC = re.compile(r"^zotero:(users|groups)/(\d+)$")
_NOT_ITEMS = {"attachment", "note", "annotation"}
KEY_FIX = ("make a key with read access at https://www.zotero.org/settings/keys and set "
           "ZOTERO_API_KEY (the library ID is on the same page: \"Your userID for use in API calls\")")


def is_spec(source: str) -> bool:
    return str(source).startswith("zotero:")


def parse_spec(source: str) -> tuple[str, str]:
    m = _SPEC.match(source.strip())
    if not m:
        raise PaperatlasError(f"bad Zotero library {source!r}",
                              "write zotero:users/USERID or zotero:groups/GROUPID (numbers, from "
                              "https://www.zotero.org/settings/keys or the group's page)")
    return m.group(1), m.group(2)


def item_entry(item: dict[str, Any]) -> Entry | None:
    """An Entry from one item of the API's JSON (None for attachments and notes)."""
    d = item.get("data", item)
    if d.get("itemType") in _NOT_ITEMS:
        return None
    authors = [(c.get("name") or f"{c.get('firstName', '')} {c.get('lastName', '')}").strip()
               for c in d.get("creators") or [] if c.get("creatorType", "author") == "author"]
    extra = str(d.get("extra") or "")
    return _entry(str(d.get("title") or ""), "", d.get("date"), authors, str(d.get("DOI") or ""),
                  str(d.get("archiveID") or ""), [str(d.get("url") or "")],
                  [extra, *extra.splitlines(), str(d.get("archiveID") or ""), str(d.get("number") or "")])


def fetch_items(source: str, key: str | None = None, base: str | None = None,
                sleep: Callable[[float], None] | None = None, timeout: float = 30) -> list[dict[str, Any]]:
    """Every top-level item of a Zotero library (JSON dicts), page by page.

    Retries a 429 / 5xx answer up to RETRIES times, waiting as Retry-After or Backoff says
    (the API's rate limiting); a 403 / 404 is an error that says how to fix the key or the id."""
    kind, lib_id = parse_spec(source)
    sleep = sleep or time.sleep
    key = key if key is not None else os.environ.get("ZOTERO_API_KEY", "")
    base = (base or os.environ.get("ZOTERO_API_URL") or API).rstrip("/")
    items: list[dict[str, Any]] = []
    start, total = 0, None
    while total is None or start < total:
        query = urllib.parse.urlencode({"format": "json", "limit": PAGE, "start": start})
        url = f"{base}/{kind}/{lib_id}/items/top?{query}"
        page, headers = _get(url, key, sleep, timeout, source)
        if not isinstance(page, list):
            raise PaperatlasError(f"{source}: the Zotero API answered {type(page).__name__}, not a list of items",
                                  "check ZOTERO_API_URL (unset it for api.zotero.org)")
        items += page
        total = int(headers.get("Total-Results") or len(items))
        if not page:
            break
        start += len(page)
        if headers.get("Backoff"):  # the server asks clients to slow down
            sleep(float(headers["Backoff"]))
    return items


def _get(url: str, key: str, sleep: Callable[[float], None], timeout: float,
         source: str) -> tuple[Any, dict[str, str]]:
    req_headers = {"Zotero-API-Version": "3", "User-Agent": f"paperatlas/{__version__}"}
    if key:
        req_headers["Zotero-API-Key"] = key
    for attempt in range(RETRIES + 1):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=req_headers), timeout=timeout) as r:
                body = r.read()
                headers = {k: v for k, v in r.headers.items()}
            try:
                return json.loads(body), headers
            except json.JSONDecodeError:
                raise PaperatlasError(f"{source}: the Zotero API answered something that is not JSON",
                                      "try again later; check ZOTERO_API_URL if you set it") from None
        except urllib.error.HTTPError as e:
            if e.code in (429, 500, 502, 503, 504) and attempt < RETRIES:
                wait = e.headers.get("Retry-After") or e.headers.get("Backoff") or str(2 ** attempt)
                sleep(min(float(wait) if wait.replace(".", "", 1).isdigit() else 2.0 ** attempt, 60.0))
                continue
            if e.code == 403:
                raise PaperatlasError(f"{source}: the Zotero API refused the key (HTTP 403)"
                                      + ("" if key else "; this library is not public"), KEY_FIX) from None
            if e.code == 404:
                raise PaperatlasError(f"{source}: no such Zotero library (HTTP 404)",
                                      "check the number: zotero:users/USERID or zotero:groups/GROUPID") from None
            raise PaperatlasError(f"{source}: the Zotero API answered HTTP {e.code}",
                                  "try again later") from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            if attempt < RETRIES:
                sleep(2.0 ** attempt)
                continue
            reason = getattr(e, "reason", e)
            raise PaperatlasError(f"{source}: cannot reach the Zotero API ({reason})",
                                  "check the network connection, or export the library to a file and "
                                  "import that") from None
    raise AssertionError("unreachable")  # pragma: no cover


def read_zotero_api(source: str, **kw: Any) -> list[Entry]:
    return [e for it in fetch_items(source, **kw) if (e := item_entry(it)) is not None]
