"""A Mini-Conf site's programme: the real PLDI 2021 sitedata (tests/data/programme/pldi-2021, see
the README there) read by `ingest calendar_papers.csv`, linked by title, laid out as sessions, an
agenda with its clashes and an .ics; bad variants are derived from the real files here."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import icalendar
import pytest
from click.testing import CliRunner
from sourceserver import SourceServer

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.programme.feed import FeedError
from paperatlas.programme.miniconf import parse_sitedata, read_sitedata

SITE = Path(__file__).parent / "data" / "programme" / "pldi-2021"
CALENDAR = SITE / "calendar_papers.csv"
# pldi.255 and pldi.43 open the two parallel talk tracks at 13:00 UTC on 23 June (1A and 1B)
TALK_1A, TALK_1B = "Abstraction for Conflict-Free Replicated Data Types", "Proof Repair across Type Equivalences"


def invoke(db: Path, *args: str) -> str:
    res = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """A library that holds PLDI 2021's papers (from papers.csv, as a paper list) and then reads
    its calendar: every event links to a paper already there, by title."""
    db = tmp_path_factory.mktemp("pldi") / "lib.db"
    invoke(db, "ingest", str(SITE / "papers.csv"), "--venue", "PLDI", "--year", "2021", "--no-embed")
    out = invoke(db, "ingest", str(CALENDAR), "--no-embed")
    return db, out


def test_every_real_event_links_by_title(linked):
    db, out = linked
    assert "programme pldi 2021: 348 events: 0 linked by forum id, 348 by title" in out, out
    with Library(str(db)) as lib:
        assert lib.count() == 87  # nothing brought in twice
        sessions = lib.programme.sessions()
        assert len(sessions) == 36
        first = sessions[0]
        assert first.start == "2021-06-23T13:00:00+00:00" and first.rooms in (["pldi-A"], ["pldi-B"])
        # the mirrored day keeps its own sessions (twelve hours later), told apart by name
        names = [s.session for s in sessions]
        assert "Poster Session 1" in names and "Poster Session 1 (mirror)" in names
        info, posters = lib.programme.session("pldi-2021-poster-session-1")
        assert info.rooms == ["Gather"] and info.events == 14
        assert [e.poster_number for e in posters] == sorted(e.poster_number for e in posters)
        assert posters[0].poster_position == "1" and posters[0].name == TALK_1B
        assert info.start == "2021-06-23T13:35:00+00:00"  # the poster rows take their session's time


def test_show_json_carries_a_talk_a_poster_and_their_mirrors(linked):
    db, _ = linked
    with Library(str(db)) as lib:
        pid = next(p.id for p in lib.papers() if p.title == TALK_1A)
    d = json.loads(invoke(db, "show", pid, "--json"))
    assert [(e["type"], e["session"]) for e in d["events"]] == [
        ("oral", "Talks 1A: Concurrent and Distributed Programming"),
        ("poster", "Poster Session 1"),
        ("oral", "Talks 1A: Concurrent and Distributed Programming (mirror)"),
        ("poster", "Poster Session 1 (mirror)"),
    ]
    talk, poster = d["events"][:2]
    assert talk["start"] == "2021-06-23T13:00:00+00:00" and talk["end"] == "2021-06-23T13:05:00+00:00"
    assert talk["timezone"] == "+00:00" and talk["room"] == "pldi-A"
    assert poster["poster_position"] == "12" and poster["room"] == "Gather"


def test_agenda_of_the_real_programme_flags_parallel_talks(linked):
    db, _ = linked
    with Library(str(db)) as lib:
        ids = {p.title: p.id for p in lib.papers()}
    invoke(db, "like", ids[TALK_1A], ids[TALK_1B])
    a = json.loads(invoke(db, "agenda", "--reader", "me", "--recommended", "0", "--json"))
    assert [s["session"] for s in a["sessions"]][:3] == [
        "Talks 1A: Concurrent and Distributed Programming",
        "Talks 1B: Verification",
        "Poster Session 1",
    ]
    assert a["sessions"][2]["papers"] == [ids[TALK_1B], ids[TALK_1A]]  # poster 1 before poster 12
    kinds = {(c["kind"], c["a"]["paper_id"], c["b"].get("paper_id")) for c in a["clashes"]}
    # the two 13:00 talks run at once on the two tracks, and again on the mirrored day
    assert ("orals", ids[TALK_1A], ids[TALK_1B]) in kinds or ("orals", ids[TALK_1B], ids[TALK_1A]) in kinds
    cal = icalendar.Calendar.from_ical(invoke(db, "agenda", "--reader", "me", "--recommended", "0", "--ics"))
    events = list(cal.walk("VEVENT"))
    assert len(events) == 8  # 2 papers x (talk, poster) x (day, mirror)
    assert len({str(e["UID"]) for e in events}) == 8
    starts = sorted(e.decoded("DTSTART").isoformat() for e in events)
    assert starts[0] == "2021-06-23T13:00:00+00:00" and starts[-1] == "2021-06-24T01:35:00+00:00"


def test_a_calendar_alone_brings_its_papers_in(tmp_path):
    db = tmp_path / "lib.db"
    out = invoke(db, "ingest", str(CALENDAR), "--no-embed")
    assert "87 new" in out and "348 brought their paper in" in out, out
    with Library(str(db)) as lib:
        p = lib.get("pldi2021/pldi.255")
        assert p.title == TALK_1A and p.venue == "PLDI" and p.year == 2021
        assert p.authors == ["Hongjin Liang", "Xinyu Feng"]
        assert p.url == "https://doi.org/10.1145/3453483.3454067"
        assert len(lib.programme.events_for(p.id)) == 4
    again = invoke(db, "ingest", str(CALENDAR), "--no-embed")
    assert "0 new" in again and "since the last read" not in again, again


def test_a_moved_poster_and_a_dropped_row_are_reported(tmp_path):
    site = tmp_path / "sitedata"
    shutil.copytree(SITE, site)
    db = tmp_path / "lib.db"
    invoke(db, "ingest", str(site / "calendar_papers.csv"), "--no-embed")
    invoke(db, "like", "pldi2021/pldi.255")
    lines = (site / "calendar_papers.csv").read_text().splitlines(keepends=True)
    # poster 12 of Poster Session 1 moves to 99; one talk of 1B is dropped from the calendar
    lines = [ln.replace("pldi_posters1,,,pldi.255,12", "pldi_posters1,,,pldi.255,99") for ln in lines]
    lines = [ln for ln in lines if not ln.startswith("pldi_talks1B,2021-06-23T13:30")]
    (site / "calendar_papers.csv").write_text("".join(lines))
    out = invoke(db, "ingest", str(site / "calendar_papers.csv"), "--no-embed")
    assert "1 moved" in out and "1 withdrawn" in out, out
    with Library(str(db)) as lib:
        (change,) = [c for c in lib.programme.changes("me") if c["kind"] == "moved"]
        assert change["before"]["poster_position"] == "12" and change["after"]["poster_position"] == "99"


def test_bad_sitedata_says_what_is_wrong_and_stores_nothing(tmp_path):
    cal, papers = CALENDAR.read_bytes(), (SITE / "papers.csv").read_bytes()
    # a row naming a paper papers.csv does not hold is left out, with its line
    odd = cal.replace(b"pldi_talks1A,2021-06-23T13:05:00-00:00,2021-06-23T13:10:00-00:00,pldi.369,", b"x,,,pldi.0,")
    feed = parse_sitedata(odd, papers)
    assert len(feed.events) == 347
    assert any(
        "1 row of calendar_papers.csv name a paper that papers.csv does not hold (line 3)" in n for n in feed.notes
    )
    # no tracks: the sessions keep their ids; the poster rows, which carry no time, stay off the calendar
    bare = parse_sitedata(cal, papers)
    assert any("174 events kept without a time (174 with no time)" in n for n in bare.notes)
    assert any("not in any track_*.csv" in n for n in bare.notes)
    with pytest.raises(FeedError, match="no column paperUID"):
        parse_sitedata(b"session,start,end,paper\nx,,,pldi.1\n", papers)
    with pytest.raises(FeedError, match="not UTF-8"):
        parse_sitedata(b"session,start,end,paperUID\n\xff\xfe,,,\n", papers)
    lone = tmp_path / "calendar_papers.csv"
    lone.write_bytes(cal)
    with pytest.raises(FeedError, match="no papers.csv beside it"):
        read_sitedata(lone)
    db = tmp_path / "lib.db"
    res = CliRunner().invoke(cli, ["--db", str(db), "ingest", str(lone), "--no-embed"])
    assert res.exit_code == 1 and "no papers.csv beside it" in res.output, res.output
    with Library(str(db)) as lib:
        assert lib.count() == 0 and lib.programme.feeds() == []


def test_bench_walk_on_the_real_poster_sessions():
    from paperatlas_lab.bench.programme import bench_walk_site

    d = bench_walk_site(CALENDAR, readers=3, budgets=(20, 30), embedder="hashing")
    assert d["sessions"] == 6 and d["posters_per_session"] == [14, 14, 16, 14, 16, 13]
    assert len(d["results"]) == 4
    for row in d["results"]:
        # the planner's choice is the best that fits: never less interest than either baseline's
        assert row["plan"] >= row["topk"] - 1e-9 and row["plan"] >= row["score_order"] - 1e-9, row


def served(name: str) -> bytes:
    """A sitedata file as a deployed Mini-Conf site serves it (`/serve_{name}.json`): its main.py
    reads each CSV with csv.DictReader, `#` lines left out, and answers the rows as JSON."""
    with (SITE / f"{name}.csv").open(encoding="utf-8") as fh:
        return json.dumps(list(csv.DictReader(row for row in fh if row[0] != "#"))).encode()


def test_fetch_from_a_mini_conf_site_with_faults(tmp_path):
    srv = SourceServer({f"/serve_{n}.json": served(n) for n in ("calendar_papers", "papers", "track_pldi")}).start()
    try:
        srv.faults["/serve_calendar_papers.json"] = ["503", "cut"]
        srv.faults["/serve_papers.json"] = ["malformed"]
        db = tmp_path / "lib.db"
        args = [
            "fetch",
            "miniconf",
            "pldi",
            "2021",
            "--base-url",
            srv.url,
            "--no-embed",
            "--retries",
            "2",
            "--delay",
            "0",
        ]
        out = invoke(db, *args)
        assert "programme pldi 2021: 348 events" in out and "348 brought their paper in" in out, out
        with Library(str(db)) as lib:
            assert lib.count() == 87 and len(lib.programme.sessions()) == 36
            # each event links to the paper's page on the site (Mini-Conf's /poster_{UID}.html)
            assert {e.url for e in lib.programme.events_for("pldi2021/pldi.255")} == {srv.url + "/poster_pldi.255.html"}
        out = invoke(db, *args)  # read again: nothing new, nothing changed
        assert "0 new" in out and "since the last read" not in out, out
        # followed, the site is read by `update`: a poster moved since is reported
        invoke(db, "follow", "miniconf", "pldi", "2021", "--base-url", srv.url)
        srv.routes["/serve_calendar_papers.json"] = served("calendar_papers").replace(
            b'"pldi.255", "posterNumber": "12"', b'"pldi.255", "posterNumber": "99"'
        )
        out = invoke(db, "update", "--delay", "0", "--no-embed")
        assert "from miniconf pldi 2021 (1 page, 3 requests" in out, out
        with Library(str(db)) as lib:
            moved = lib.programme.changes()  # poster 12 of session 1 and of its mirror
            assert [(c["kind"], c["event_id"], c["after"]["poster_position"]) for c in moved] == [
                ("moved", "pldi_posters1:pldi.255", "99"),
                ("moved", "pldi_posters1_mirror:pldi.255", "99"),
            ]
        # a site without that track: the sessions keep their ids, and the fetch says why
        out = invoke(tmp_path / "other.db", *args[:4], "main", *args[4:])
        assert "no track main on the site (HTTP 404)" in out, out
    finally:
        srv.stop()
    res = CliRunner().invoke(cli, ["--db", str(tmp_path / "x.db"), "fetch", "miniconf", "pldi", "2021"])
    assert res.exit_code != 0 and "--base-url" in res.output, res.output
