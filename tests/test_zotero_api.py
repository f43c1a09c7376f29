"""import-reader zotero:users/ID: the Zotero web API, served from a real recorded response on loopback.

tests/data/zotero/api/items_doc.json is pyzotero's recording of GET /users/475425/items (see
PROVENANCE.md). The loopback server pages it as the API does (limit/start, Total-Results) and injects
faults: a 503 with Retry-After, a Backoff header, 403 for a wrong key, 404, a body that is not JSON.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from click.testing import CliRunner

from conftest import DATA
from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.refs import zotero_api

ITEMS = json.loads((DATA / "zotero" / "api" / "items_doc.json").read_text(encoding="utf-8"))
KEY = "k3yF0rT3sts"


class FakeZotero(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []
    faults: list[int] = []  # status codes to answer, first in first out, before the real answers

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        u = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        FakeZotero.requests.append(
            {
                "path": u.path,
                "query": q,
                "key": self.headers.get("Zotero-API-Key"),
                "version": self.headers.get("Zotero-API-Version"),
            }
        )
        if FakeZotero.faults:
            self._send(FakeZotero.faults.pop(0), b"Service Unavailable", {"Retry-After": "0"})
            return
        if u.path == "/groups/1/items/top":
            self._send(200, b"<html>a captive portal</html>", {"Content-Type": "text/html"})
            return
        if u.path != "/users/475425/items/top":
            self._send(404, b"Not found")
            return
        if self.headers.get("Zotero-API-Key") not in (None, KEY):
            self._send(403, b"Forbidden")
            return
        start, limit = int(q.get("start", 0)), int(q.get("limit", 25))
        page = ITEMS[start : start + limit]
        headers = {"Content-Type": "application/json", "Total-Results": str(len(ITEMS)), "Last-Modified-Version": "1"}
        if start == 0:
            headers["Backoff"] = "0"  # the API asks clients to slow down now and then
        self._send(200, json.dumps(page).encode(), headers)


@pytest.fixture
def api() -> Iterator[str]:
    FakeZotero.requests, FakeZotero.faults = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeZotero)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def lib_path(tmp_path: Path) -> str:
    papers = [  # three of the recorded items, as a conference list would have them
        {
            "id": "holmes-babylon",
            "title": "Sherlock Holmes in Babylon",
            "doi": "10.2307/2321200",
            "abstract": "A history of mathematics read as a detective story.",
            "venue": "Monthly",
            "year": 1980,
        },
        {
            "id": "yarns",
            "title": "Biscrolling nanotube sheets and functional guests into yarns",
            "abstract": "Guests are scrolled into carbon nanotube yarns.",
            "venue": "Science",
            "year": 2011,
        },
        {
            "id": "plasma",
            "title": "Plasma recovery in plasma source ion implantation",
            "doi": "10.1109/PPPS.2007.4345875",
            "abstract": "Initial plasma properties and the recovery of the plasma.",
            "venue": "PPPS",
            "year": 2007,
        },
    ]
    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        lib.ingest([f])
    return str(tmp_path / "lib.db")


def test_pages_retries_and_matches(api: str, lib_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOTERO_API_URL", api)
    monkeypatch.setenv("ZOTERO_API_KEY", KEY)
    monkeypatch.setattr(zotero_api, "PAGE", 7)  # 20 items: three pages
    waits: list[float] = []
    monkeypatch.setattr(zotero_api.time, "sleep", waits.append)
    FakeZotero.faults = [503]
    r = CliRunner().invoke(cli, ["--db", lib_path, "import-reader", "zotero:users/475425", "-r", "z", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["format"] == "zotero-api"
    assert {(m["id"], m["how"]) for m in rep["matched"]} == {
        ("holmes-babylon", "doi"),
        ("yarns", "title"),
        ("plasma", "doi"),
    }
    assert len(rep["unmatched"]) == 17 and 'HowStuffWorks "How Earthquakes Work"' in rep["unmatched"]
    starts = [q["query"]["start"] for q in FakeZotero.requests]
    assert starts == ["0", "0", "7", "14"]  # the 503 was retried, then three pages
    assert all(q["key"] == KEY and q["version"] == "3" and q["query"]["format"] == "json" for q in FakeZotero.requests)
    assert waits[:2] == [0.0, 0.0]  # Retry-After: 0, then Backoff: 0
    with Library(lib_path) as lib:
        assert {p.id for p in lib.readers.liked("z")} == {"holmes-babylon", "yarns", "plasma"}


@pytest.mark.parametrize(
    "source,key,message,fix",
    [
        ("zotero:users/475425", "wrong", "refused the key (HTTP 403)", "ZOTERO_API_KEY"),
        ("zotero:users/999", KEY, "no such Zotero library (HTTP 404)", "zotero:users/USERID"),
        ("zotero:groups/1", KEY, "not JSON", "ZOTERO_API_URL"),
        ("zotero:people/1", KEY, "bad Zotero library 'zotero:people/1'", "zotero:groups/GROUPID"),
    ],
)
def test_api_errors_say_the_fix(
    api: str, lib_path: str, monkeypatch: pytest.MonkeyPatch, source: str, key: str, message: str, fix: str
) -> None:
    monkeypatch.setenv("ZOTERO_API_URL", api)
    monkeypatch.setenv("ZOTERO_API_KEY", key)
    r = CliRunner().invoke(cli, ["--db", lib_path, "import-reader", source, "-r", "e"])
    assert r.exit_code == 1 and message in r.stderr and "Fix:" in r.stderr and fix in r.stderr
    with Library(lib_path) as lib:
        assert lib.store.readers.get_reader("e") is None


def test_gives_up_after_retries(lib_path: str, monkeypatch: pytest.MonkeyPatch, api: str) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    waits: list[float] = []
    monkeypatch.setattr(zotero_api.time, "sleep", waits.append)
    with pytest.raises(Exception, match="cannot reach the Zotero API"):
        zotero_api.read_zotero_api("zotero:users/475425", key="", base=f"http://127.0.0.1:{closed}")
    assert waits == [1.0, 2.0, 4.0, 8.0]
    FakeZotero.faults = [503] * 10
    with pytest.raises(Exception, match="HTTP 503"):
        zotero_api.read_zotero_api("zotero:users/475425", key=KEY, base=api)
    assert len(FakeZotero.requests) == zotero_api.RETRIES + 1


def test_item_json_to_entry() -> None:
    doi_items = [e for it in ITEMS if (e := zotero_api.item_entry(it)) and e.doi]
    assert {e.doi for e in doi_items} == {
        "10.2307/2321200",
        "10.1109/plasma.2002.1030588",
        "10.1109/ppps.2007.4345875",
        "10.1126/science.1195912",
        "10.1201/9781420005509.ch22",
    }  # the last from its URL, query cut off
    preprint = zotero_api.item_entry(
        {
            "data": {
                "itemType": "preprint",
                "title": "LoRA",
                "archiveID": "arXiv:2106.09685",
                "creators": [{"creatorType": "author", "firstName": "Edward J.", "lastName": "Hu"}],
                "date": "2021-10-16",
            }
        }
    )
    assert preprint and (preprint.arxiv, preprint.authors, preprint.year) == ("2106.09685", ["Edward J. Hu"], 2021)
    assert zotero_api.item_entry({"data": {"itemType": "attachment", "title": "PDF"}}) is None
