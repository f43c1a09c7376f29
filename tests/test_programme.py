"""The conference programme: `fetch virtual`, events in `show --json`, the agenda and its .ics.

Against the recorded NeurIPS 2025 feed records in tests/data/programme (see its README), served
by the loopback source server with faults; variants (a re-timed event, a time without an offset)
are derived from those records here.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import icalendar
import pytest
from sourceserver import SourceServer

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.programme.feed import FeedError, parse_feed

DATA = Path(__file__).parent / "data" / "programme"
FEED = json.loads((DATA / "neurips-2025-orals-posters.json").read_text())
PATH = "/static/virtual/data/neurips-2025-orals-posters.json"
POSTER_A, POSTER_B, ORAL = "7HVADbW8fh", "1tzlbKySxX", "1kPO9vCRbg"  # forum ids of the three events


def body(feed: dict) -> bytes:
    return json.dumps(feed).encode()


@pytest.fixture
def server():
    srv = SourceServer({PATH: body(FEED)}).start()
    yield srv
    srv.stop()


def fetch(runner, db, server, *extra):
    res = runner.invoke(
        cli,
        [
            "--db",
            str(db),
            "fetch",
            "virtual",
            "neurips",
            "2025",
            "--base-url",
            server.url,
            "--no-embed",
            "--retries",
            "2",
            *extra,
        ],
    )
    return res


def show_events(runner, db, pid):
    res = runner.invoke(cli, ["--db", str(db), "show", pid, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_events_link_to_papers_already_there_by_forum_id(tmp_path, runner, server):
    db = tmp_path / "lib.db"
    # the library holds two of the papers under its own ids (as the venue data names them)
    rows = [
        {
            "id": f"neurips2025/{ev['paper_url'].rsplit('=', 1)[1]}",
            "openreview_id": ev["paper_url"].rsplit("=", 1)[1],
            "title": ev["name"],
            "abstract": ev["abstract"] + " (the full abstract)",
            "venue": "NeurIPS",
            "year": 2025,
            "authors": [a["fullname"] for a in ev["authors"]],
        }
        for ev in FEED["results"][:2]
    ]
    (tmp_path / "papers.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert runner.invoke(cli, ["--db", str(db), "ingest", str(tmp_path / "papers.jsonl")]).exit_code == 0
    res = fetch(runner, db, server)
    assert res.exit_code == 0, res.output
    assert "2 linked by forum id" in res.output and "1 brought their paper in" in res.output
    assert server.seen[0].path == PATH
    d = show_events(runner, db, f"neurips2025/{POSTER_A}")
    assert d["abstract"].endswith("(the full abstract)")  # the library's paper is not overwritten
    assert d["events"] == [
        {
            "session": "San Diego Poster Session 6",
            "start": "2025-12-05T16:30:00-08:00",
            "end": "2025-12-05T19:30:00-08:00",
            "timezone": "-08:00",
            "day": "2025-12-05",
            "room": "Exhibit Hall C,D,E",
            "poster_position": "#2504",
            "type": "poster",
            "event_id": "119718",
            "session_id": "neurips-2025-san-diego-poster-session-6",
            "feed": "neurips 2025",
            "url": "https://neurips.cc/virtual/2025/poster/119718",  # the conference's address, not the mirror's
        }
    ]
    x = d["extra"]
    assert (x["presentation"], x["room"], x["poster_position"]) == ("poster", "Exhibit Hall C,D,E", "#2504")
    assert x["affiliations"][2] == {
        "author": "Daniel Zhengkui Wang",
        "institution": "Singapore Institute of Technology",
        "country": "",
    }
    oral = show_events(runner, db, ORAL)  # brought in: a paper of the conference
    assert oral["title"].startswith("DisCO") and oral["venue"] == "NeurIPS" and oral["year"] == 2025
    assert oral["extra"]["presentation"] == "oral"
    assert oral["extra"]["affiliations"][0]["institution"] == "Texas A&M University"  # HTML entity decoded
    with Library(str(db)) as lib:
        assert lib.count() == 3  # nothing duplicated


def test_refetch_is_not_modified_and_faults_are_retried(tmp_path, runner, server):
    db = tmp_path / "lib.db"
    server.faults[PATH] = ["503", "cut", "malformed"]
    res = fetch(runner, db, server)
    assert res.exit_code == 0, res.output
    assert "3 events" in res.output
    res = fetch(runner, db, server)
    assert res.exit_code == 0 and "not modified" in res.output, res.output
    assert server.seen[-1].status == 304


def test_agenda_contract_json_and_ics(tmp_path, runner, server):
    db = tmp_path / "lib.db"
    assert fetch(runner, db, server).exit_code == 0
    for pid in (POSTER_A, POSTER_B, ORAL):
        assert runner.invoke(cli, ["--db", str(db), "like", pid]).exit_code == 0
    res = runner.invoke(cli, ["--db", str(db), "agenda", "--reader", "me", "--json"])
    assert res.exit_code == 0, res.output
    a = json.loads(res.output)
    assert [s["session"] for s in a["sessions"]] == ["San Diego Poster Session 6", "Oral Session 17"]
    assert a["sessions"][0]["papers"] == [POSTER_B, POSTER_A]  # #2449 before #2504
    assert a["sessions"][0]["items"][0]["why"] == ["liked"]
    assert a["clashes"] == []
    res = runner.invoke(cli, ["--db", str(db), "agenda", "--reader", "me", "--ics"])
    assert res.exit_code == 0, res.output
    cal = icalendar.Calendar.from_ical(res.output)
    events = [c for c in cal.walk("VEVENT")]
    assert len(events) == 3
    by_uid = {str(e["UID"]): e for e in events}
    poster = by_uid["neurips-2025-119718@paperatlas"]
    assert poster.decoded("DTSTART").isoformat() == "2025-12-06T00:30:00+00:00"  # 16:30 at -08:00
    assert poster.decoded("DTEND").isoformat() == "2025-12-06T03:30:00+00:00"
    assert str(poster["LOCATION"]) == "Exhibit Hall C,D,E, #2504"
    assert str(poster["URL"]) == "https://neurips.cc/virtual/2025/poster/119718"
    assert "Coloring Learning" in str(poster["SUMMARY"])
    again = runner.invoke(cli, ["--db", str(db), "agenda", "--reader", "me", "--ics"]).output
    assert sorted(str(e["UID"]) for e in icalendar.Calendar.from_ical(again).walk("VEVENT")) == sorted(by_uid)
    res = runner.invoke(cli, ["--db", str(db), "agenda", "--reader", "me", "--tz", "Asia/Shanghai", "--json"])
    assert json.loads(res.output)["sessions"][0]["start"] == "2025-12-06T08:30:00+08:00"
    assert json.loads(res.output)["sessions"][0]["day"] == "2025-12-06"
    res = runner.invoke(cli, ["--db", str(db), "agenda", "--tz", "Mars/Olympus", "--json"])
    assert res.exit_code == 1 and "unknown timezone 'Mars/Olympus'" in res.output


def test_clashes_between_starred_orals_and_planned_posters(tmp_path, runner):
    feed = copy.deepcopy(FEED)
    oral = feed["results"][2]
    # the oral moved into the poster session's hours; a second oral at the same time
    oral["starttime"], oral["endtime"] = "2025-12-05T17:00:00-08:00", "2025-12-05T17:15:00-08:00"
    twin = copy.deepcopy(oral)
    twin.update(id=114996, paper_url="https://openreview.net/forum?id=1tzlbKySxX", room_name="Ballroom A")
    feed["results"].append(twin)
    srv = SourceServer({PATH: body(feed)}).start()
    try:
        db = tmp_path / "lib.db"
        assert fetch(runner, db, srv).exit_code == 0
        for pid in (POSTER_A, POSTER_B, ORAL):
            runner.invoke(cli, ["--db", str(db), "like", pid])
        a = json.loads(runner.invoke(cli, ["--db", str(db), "agenda", "--json"]).output)
        kinds = sorted(
            (c["kind"], c["a"].get("paper_id"), c["b"].get("paper_id") or c["b"].get("session")) for c in a["clashes"]
        )
        assert ("orals", ORAL, POSTER_B) in kinds or ("orals", POSTER_B, ORAL) in kinds
        assert any(k[0] == "oral-poster" and k[2] == "San Diego Poster Session 6" for k in kinds)
        d = show_events(runner, db, POSTER_B)
        assert [e["type"] for e in d["events"]] == ["poster", "oral"]  # a poster and an oral
        assert d["extra"]["presentation"] == "oral" and d["extra"]["poster_position"] == "#2449"
    finally:
        srv.stop()


def test_programme_changes_are_recorded_and_the_ics_follows(tmp_path, runner, server):
    db = tmp_path / "lib.db"
    assert fetch(runner, db, server).exit_code == 0
    runner.invoke(cli, ["--db", str(db), "like", POSTER_A])
    changed = copy.deepcopy(FEED)
    changed["results"][0]["poster_position"] = "#2600"  # moved
    changed["results"][0]["starttime"] = "2025-12-05T17:00:00-08:00"  # and re-timed
    del changed["results"][1]  # withdrawn
    server.routes[PATH] = body(changed)
    res = fetch(runner, db, server)
    assert res.exit_code == 0, res.output
    assert "1 moved" in res.output and "1 retimed" in res.output and "1 withdrawn" in res.output
    assert "(on the agenda of me)" in res.output
    res = runner.invoke(cli, ["--db", str(db), "digest", "--reader", "me"])
    assert res.exit_code == 0 and "programme change: moved from San Diego Poster Session 6" in res.output, res.output
    assert "programme change: re-timed from 2025-12-05 16:30 to 2025-12-05 17:00" in res.output
    with Library(str(db)) as lib:
        mine = lib.programme.changes("me")
        assert sorted(c["kind"] for c in mine) == ["moved", "retimed"]
        assert mine[0]["before"]["poster_position"] == "#2504" and mine[0]["after"]["poster_position"] == "#2600"
        assert lib.programme.events_for(POSTER_B) == []  # withdrawn
    cal = icalendar.Calendar.from_ical(
        runner.invoke(cli, ["--db", str(db), "agenda", "--ics", "--recommended", "0"]).output
    )
    (ev,) = cal.walk("VEVENT")
    assert str(ev["UID"]) == "neurips-2025-119718@paperatlas" and int(ev["SEQUENCE"]) == 2
    assert str(ev["LOCATION"]).endswith("#2600")


def test_bad_feeds_say_what_is_wrong_and_store_nothing(tmp_path, runner):
    feed = copy.deepcopy(FEED)
    feed["results"][0]["starttime"] = "2025-12-05T16:30:00"  # no offset
    feed["results"][1]["name"] = ""  # names no paper
    got = parse_feed(body(feed))
    assert [e.event_id for e in got.events] == ["119718", "114995"]
    assert got.events[0].start is None and got.events[0].poster_position == "#2504"
    assert any("without an offset" in n for n in got.notes) and any("name no paper" in n for n in got.notes)
    feed["timezone"] = "America/Los_Angeles"  # a feed that names its zone places such times there
    assert parse_feed(body(feed)).events[0].start.isoformat() == "2025-12-05T16:30:00-08:00"
    feed["timezone"] = "Pacific/Nowhere"
    assert "unknown timezone 'Pacific/Nowhere'" in " ".join(parse_feed(body(feed)).notes)
    with pytest.raises(FeedError, match="not valid JSON.*cut off"):
        parse_feed(body(FEED)[:200])
    with pytest.raises(FeedError, match="no `results` list"):
        parse_feed(b'{"papers": []}')
    srv = SourceServer({PATH: body(FEED)[:300]}).start()
    try:
        db = tmp_path / "lib.db"
        res = fetch(runner, db, srv)
        assert res.exit_code == 1 and "not what the service sends" in res.output, res.output
        with Library(str(db)) as lib:
            assert lib.count() == 0 and lib.programme.feeds() == []
    finally:
        srv.stop()


def test_untimed_events_and_pasted_locations_sit_apart(tmp_path, runner):
    feed = copy.deepcopy(FEED)
    feed["results"][0]["starttime"] = feed["results"][0]["endtime"] = None
    srv = SourceServer({PATH: body(feed)}).start()
    try:
        db = tmp_path / "lib.db"
        res = fetch(runner, db, srv)
        assert res.exit_code == 0 and "kept without a time" in res.output, res.output
        runner.invoke(cli, ["--db", str(db), "like", POSTER_A, POSTER_B])
        a = json.loads(runner.invoke(cli, ["--db", str(db), "agenda", "--json"]).output)
        assert a["sessions"][0]["papers"] == [POSTER_B]
        assert [u["paper_id"] for u in a["unscheduled"]] == [POSTER_A]
        assert a["unscheduled"][0]["poster_position"] == "#2504"
    finally:
        srv.stop()


@pytest.mark.slow
def test_mcp_get_paper_carries_the_events(tmp_path, runner, server):
    """The SDK's own MCP client against `paperatlas mcp` (a subprocess, as an assistant starts it)."""
    from mcp import Client
    from test_mcp import session, stdio

    db = tmp_path / "lib.db"
    assert fetch(runner, db, server).exit_code == 0

    async def body(c: Client) -> None:
        r = await c.call_tool("get_paper", {"id": POSTER_A})
        (e,) = r.structured_content["events"]
        assert (e["session"], e["poster_position"], e["start"]) == (
            "San Diego Poster Session 6",
            "#2504",
            "2025-12-05T16:30:00-08:00",
        )
        assert "Exhibit Hall C,D,E" in "\n".join(x.text for x in r.content)

    session(stdio(db), body)


def test_walk_through_a_session_and_replan(tmp_path, runner, server):
    db = tmp_path / "lib.db"
    assert fetch(runner, db, server).exit_code == 0
    runner.invoke(cli, ["--db", str(db), "like", POSTER_A, POSTER_B])
    sid = "neurips-2025-san-diego-poster-session-6"
    res = runner.invoke(cli, ["--db", str(db), "walk", sid, "--minutes", "20", "--per-poster", "5", "--json"])
    assert res.exit_code == 0, res.output
    w = json.loads(res.output)
    assert [s["poster_position"] for s in w["stops"]] == ["#2449", "#2504"]  # hall order
    assert abs(w["stops"][1]["arrive_min"] - 5.55) <= 0.05  # 55 numbers at 1 min per 100
    assert w["must_see_visited"] == 2
    res = runner.invoke(cli, ["--db", str(db), "walk", sid, "--minutes", "5", "--done", POSTER_B, "--json"])
    assert json.loads(res.output)["stops"] == []  # from #2449, #2504 is 0.55 min away: 5 min do not hold it
    res = runner.invoke(cli, ["--db", str(db), "walk", sid, "--minutes", "6", "--done", POSTER_B, "--json"])
    w = json.loads(res.output)
    assert [s["paper_id"] for s in w["stops"]] == [POSTER_A] and w["done"] == [POSTER_B]
    res = runner.invoke(cli, ["--db", str(db), "walk", "no-such-session"])
    assert res.exit_code == 1 and "no session 'no-such-session'" in res.output


def test_ingest_of_a_saved_feed_file(tmp_path, runner):
    db = tmp_path / "lib.db"
    saved = DATA / "neurips-2025-orals-posters.json"
    res = runner.invoke(cli, ["--db", str(db), "ingest", str(saved), "--no-embed"])
    assert res.exit_code == 0, res.output
    assert "3 new" in res.output and "3 events" in res.output
    res = runner.invoke(cli, ["--db", str(db), "ingest", str(saved), "--no-embed"])
    assert res.exit_code == 0 and "3 linked by forum id" in res.output and "since the last read" not in res.output
    assert show_events(runner, db, ORAL)["events"][0]["room"] == "Ballroom C"
    odd = tmp_path / "programme.json"  # not named as the site names it: told by its content
    odd.write_bytes(saved.read_bytes())
    res = runner.invoke(cli, ["--db", str(db), "ingest", str(odd), "--no-embed"])
    assert res.exit_code == 1 and "cannot tell the conference and year" in res.output, res.output


def test_people_to_meet_and_a_group_split(tmp_path, runner, server):
    db = tmp_path / "lib.db"
    assert fetch(runner, db, server).exit_code == 0
    runner.invoke(cli, ["--db", str(db), "like", ORAL, POSTER_A])
    res = runner.invoke(cli, ["--db", str(db), "people", "--json"])
    assert res.exit_code == 0, res.output
    people = {p["author"]: p for p in json.loads(res.output)}
    assert people["Tommi Jaakkola"]["institution"] == "MIT"
    assert people["Tommi Jaakkola"]["papers"][0]["session"] == "Oral Session 17"
    assert people["Miaomiao Huang"]["papers"][0]["poster_position"] == "#2504"
    runner.invoke(cli, ["--db", str(db), "like", "--reader", "bo", POSTER_B])
    sid = "neurips-2025-san-diego-poster-session-6"
    res = runner.invoke(cli, ["--db", str(db), "split", sid, "--readers", "me,bo", "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    mine = {m["reader"]: [s["paper_id"] for s in m["stops"]] for m in d["members"]}
    assert mine == {"me": [POSTER_A], "bo": [POSTER_B]} and d["overlap"] == 0
    res = runner.invoke(cli, ["--db", str(db), "split", sid, "--readers", "me,nobody"])
    assert res.exit_code == 1 and "no reader 'nobody'" in res.output
