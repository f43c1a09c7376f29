"""The programme pages and their .json twins, the agenda's calendar subscription (a real app in a
test client over a library holding the recorded NeurIPS 2025 feed records)."""

from __future__ import annotations

from pathlib import Path

import icalendar
import pytest
from starlette.testclient import TestClient

from paperatlas import Library
from paperatlas.web import create_app

FEED = Path(__file__).parent / "data" / "programme" / "neurips-2025-orals-posters.json"
SID = "neurips-2025-san-diego-poster-session-6"


@pytest.fixture
def client(tmp_path: Path):
    lib = Library(tmp_path / "web.db", embedder="hashing")
    lib.ingest([FEED])
    lib.embed()
    lib.readers.set_feedback("me", ["7HVADbW8fh", "1kPO9vCRbg"], "like")
    with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 50000)) as c:
        yield c
    lib.close()


def test_programme_and_session_twins(client: TestClient) -> None:
    d = client.get("/programme.json").json()
    assert [s["session"] for s in d["sessions"]] == ["San Diego Poster Session 6", "Oral Session 17"]
    assert d["days"] == ["2025-12-05", "2025-12-08"]
    assert client.get("/programme.json?type=oral").json()["sessions"][0]["session_id"] == "neurips-2025-oral-session-17"
    assert client.get("/programme.json?day=2025-12-08").json()["days"] == ["2025-12-08"]
    assert client.get("/programme.json?tz=Asia/Shanghai").json()["days"] == ["2025-12-06", "2025-12-09"]
    bad = client.get("/programme.json?tz=Nowhere/City")
    assert bad.status_code == 400 and "unknown timezone" in bad.json()["error"]
    s = client.get(f"/session/{SID}.json").json()
    assert [e["poster_position"] for e in s["events"]] == ["#2449", "#2504"]
    assert [e["liked"] for e in s["events"]] == [False, True]
    assert "7HVADbW8fh" in [st["paper_id"] for st in s["walk"]["stops"]]
    again = client.get(f"/session/{SID}.json?done=7HVADbW8fh").json()["walk"]
    assert "7HVADbW8fh" not in [st["paper_id"] for st in again["stops"]] and again["done"] == ["7HVADbW8fh"]
    assert client.get("/session/nope.json").status_code == 404
    html = client.get(f"/session/{SID}").text
    assert "#2504" in html and "Your walk" in html


def test_agenda_and_its_calendar_subscription(client: TestClient) -> None:
    a = client.get("/agenda.json?recommended=0").json()
    assert [s["papers"] for s in a["sessions"]] == [["7HVADbW8fh"], ["1kPO9vCRbg"]]
    url = a["ics_url"]
    assert url.startswith("/feeds/agenda/me.ics?key=")
    r = client.get(url)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/calendar")
    cal = icalendar.Calendar.from_ical(r.text)
    uids = {str(e["UID"]) for e in cal.walk("VEVENT")}
    assert {"neurips-2025-114995@paperatlas", "neurips-2025-119718@paperatlas"} <= uids
    assert client.get("/feeds/agenda/me.ics?key=wrong").status_code == 404
    assert client.get("/feeds/agenda/nobody.ics?key=x").status_code == 404
    html = client.get("/agenda").text
    assert "People to meet" in html and "Miaomiao Huang" in html and "Tommi Jaakkola" in html
    zh = client.get("/agenda?lang=zh").text
    assert "我的日程" in zh and "日历（.ics）" in zh
    sw = client.get("/programme-sw.js")
    assert sw.status_code == 200 and "caches.open" in sw.text


def test_the_paper_page_says_when_and_where(client: TestClient) -> None:
    (e,) = client.get("/paper/7HVADbW8fh.json").json()["events"]
    assert (e["session"], e["poster_position"], e["start"]) == (
        "San Diego Poster Session 6",
        "#2504",
        "2025-12-05T16:30:00-08:00",
    )
    html = client.get("/paper/7HVADbW8fh?lang=en").text
    assert f'href="/session/{SID}"' in html and "<b>#2504</b>" in html
    # one row says where and when: the session and the poster number are not repeated in a second row
    meta = html.split("<dt>id</dt>")[0]  # the paper's own fields (related papers follow)
    assert meta.count("San Diego Poster Session 6") == 1 and meta.count("#2504") == 1, meta


def test_the_api_document_lists_the_programme(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/programme.json", "/session/{session_id}.json", "/agenda.json", "/feeds/agenda/{name}.ics"} <= set(paths)


def test_a_session_only_search_names_the_session(client: TestClient) -> None:
    """Searching one session with no words heads the results with the session's name, not its id."""
    html = client.get(f"/search?session={SID}").text
    count = html.split('<p class="count">', 1)[1].split("</p>", 1)[0]
    assert "San Diego Poster Session 6" in count and SID not in count, count


def test_the_owners_agenda_before_any_star_is_me_s_not_a_sign_in(tmp_path: Path) -> None:
    """On this machine the header says "reader me": /agenda with no reader yet is me's empty agenda."""
    lib = Library(tmp_path / "empty.db", embedder="hashing")
    with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 50000)) as c:
        for lang in ("en", "zh"):
            html = c.get(f"/agenda?lang={lang}").text
            assert "/signin" not in html.split("<main", 1)[-1], lang
        assert "Nothing on your agenda yet" in c.get("/agenda?lang=en").text
        a = c.get("/agenda.json")
        assert a.status_code == 200 and a.json()["reader"] == "me" and a.json()["sessions"] == []
        assert lib.readers.find("me") is None  # a page only reads: no reader was created
    lib.close()
