"""The programme where a reader looks for papers: each search hit, related paper and map point
carries its paper's events (one shape, `Event.to_dict()`), and `--session / --day / --room` filter
search in the CLI, the web (and its OpenAPI), and the MCP `search` tool.

One library (module scope) holds the recorded NeurIPS 2025 feed records (tests/data/programme) and
the example papers, with hashing vectors and topics built.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES
from starlette.testclient import TestClient

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.errors import PaperatlasError
from paperatlas.models import EVENT_FIELDS, Hit
from paperatlas.programme.models import event_text

FEED = Path(__file__).parent / "data" / "programme" / "neurips-2025-orals-posters.json"
POSTER_A, POSTER_B, ORAL = "7HVADbW8fh", "1tzlbKySxX", "1kPO9vCRbg"
SID = "neurips-2025-san-diego-poster-session-6"


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("programme-search")
    library = Library(tmp / "lib.db", embedder="hashing")
    library.ingest([*EXAMPLES, FEED])
    library.embed()
    library.topics.build(seed=0, k=3)
    yield library
    library.close()


def ids(hits) -> set[str]:
    return {h.paper.id for h in hits}


def test_hits_carry_the_events_in_the_one_shape(lib: Library) -> None:
    hits = lib.search("heterophilic graph representation", mode="keyword")
    hit = next(h for h in hits if h.paper.id == POSTER_A)
    (e,) = hit.events
    assert set(e) == set(EVENT_FIELDS)  # the documented keys, no more, no fewer
    assert e == lib.programme.events_for(POSTER_A)[0].to_dict()  # the same serialiser as `show`
    assert (e["session"], e["day"], e["room"], e["poster_position"]) == (
        "San Diego Poster Session 6",
        "2025-12-05",
        "Exhibit Hall C,D,E",
        "#2504",
    )
    assert hit.to_dict()["events"] == [e]
    others = [h for h in hits if h.paper.id != POSTER_A]
    assert all(h.events == [] and "events" not in h.to_dict() for h in others)  # an example paper: no programme
    assert event_text(e) == (
        "Poster · San Diego Poster Session 6 · 2025-12-05 16:30–19:30 (UTC-08:00) · Exhibit Hall C,D,E #2504"
    )
    assert Hit.json_schema()["properties"]["events"]["items"]["properties"].keys() == EVENT_FIELDS.keys()
    related = lib.similar(POSTER_B, 40)
    assert [h.events[0]["poster_position"] for h in related if h.paper.id == POSTER_A] == ["#2504"]


def test_session_day_and_room_filters(lib: Library) -> None:
    both = {POSTER_A, POSTER_B}
    assert ids(lib.search("", session=SID)) == both  # by id
    assert ids(lib.search("", session="poster session 6")) == both  # by words of its name, any case
    assert ids(lib.search("", session="Oral Session 17")) == {ORAL}
    assert ids(lib.search("", session="Oral Session 1")) == set()  # whole words: not session 17
    assert ids(lib.search("", day="2025-12-05")) == both  # the oral is on another day
    assert ids(lib.search("", day="2025-12-05", room="Ballroom C")) == set()
    assert ids(lib.search("", room="hall c")) == both  # a word run of "Exhibit Hall C,D,E"
    found = lib.search("graph", mode="keyword", session=SID)
    assert ids(found) == {POSTER_A} and found[0].events  # a query within a session keeps its ranking
    everything = lib.search("graph", mode="keyword")
    assert len(everything) > len(found)  # the examples hold graph papers too, outside the programme
    with pytest.raises(PaperatlasError, match="is not a day"):
        lib.search("graph", day="5 Dec")


def test_cli_search_shows_and_filters_events(lib: Library, runner) -> None:
    db = ["--db", lib.path]
    res = runner.invoke(cli, [*db, "search", "graph", "--mode", "keyword", "--session", "Poster Session 6", "--json"])
    assert res.exit_code == 0, res.output
    (hit,) = json.loads(res.output)["hits"]
    assert hit["id"] == POSTER_A and hit["events"][0]["session_id"] == SID
    res = runner.invoke(cli, [*db, "search", "--day", "2025-12-05", "--room", "Hall C"])
    assert res.exit_code == 0, res.output
    assert "Exhibit Hall C,D,E #2449" in res.output and "2025-12-05 16:30–19:30 (UTC-08:00)" in res.output
    res = runner.invoke(cli, [*db, "search", "graph", "--session", "Oral Session 1"])
    assert res.exit_code == 4 and "`paperatlas programme` lists the sessions" in res.output
    res = runner.invoke(cli, [*db, "search", "graph", "--day", "2025/12/05"])
    assert res.exit_code == 1 and "YYYY-MM-DD" in res.output


@pytest.fixture(scope="module")
def client(lib: Library):
    from paperatlas.web import create_app

    with TestClient(create_app(lib), base_url="http://127.0.0.1", client=("127.0.0.1", 50000)) as c:
        yield c


def test_web_search_filters_and_shows_events(client: TestClient) -> None:
    d = client.get("/search.json", params={"q": "graph", "mode": "keyword", "session": "Poster Session 6"}).json()
    assert [h["id"] for h in d["hits"]] == [POSTER_A] and d["filters"]["session"] == "Poster Session 6"
    assert d["hits"][0]["events"][0]["poster_position"] == "#2504"
    d = client.get("/search.json", params={"day": "2025-12-05"}).json()
    assert {h["id"] for h in d["hits"]} == {POSTER_A, POSTER_B}
    r = client.get("/search.json", params={"q": "graph", "day": "Friday"})
    assert r.status_code == 400
    page = client.get("/search", params={"q": "graph", "mode": "keyword", "session": SID}).text
    assert "San Diego Poster Session 6 · 2025-12-05 16:30–19:30 (UTC-08:00) · Exhibit Hall C,D,E #2504" in page
    assert f'<option value="{SID}" selected>' in page and '<select name="day"' in page
    zh = client.get("/search", params={"q": "graph", "mode": "keyword", "day": "2025-12-05", "lang": "zh"}).text
    assert "任意场次" in zh and "海报 · San Diego Poster Session 6" in zh
    paper = client.get(f"/paper/{POSTER_B}").text  # the related list says where its papers are
    assert "Exhibit Hall C,D,E #2504" in paper
    spec = client.get("/openapi.json").json()
    params = {p["name"]: p for p in spec["paths"]["/search.json"]["get"]["parameters"]}
    assert {"session", "day", "room"} <= set(params)
    assert params["day"]["schema"]["anyOf"][0]["format"] == "date"


def test_map_points_say_where_they_are_presented(lib: Library, client: TestClient) -> None:
    d = lib.topics.map_data()
    at = {d["ids"][int(i)]: evs for i, evs in d["events"].items()}
    assert set(at) == {POSTER_A, POSTER_B, ORAL}
    assert at[ORAL] == [["oral", "Oral Session 17", at[ORAL][0][2], "Ballroom C"]]
    assert at[POSTER_A][0][2] == "2025-12-05 16:30–19:30 (UTC-08:00)"
    assert client.get("/map.json").json()["events"] == d["events"]


def test_mcp_search_filters_and_carries_events(lib: Library) -> None:
    from mcp import Client
    from test_mcp import session

    from paperatlas.mcp import create_server

    async def body(c: Client) -> None:
        r = await c.call_tool("search", {"query": "graph", "mode": "keyword", "session": "Poster Session 6"})
        (hit,) = r.structured_content["hits"]
        assert hit["id"] == POSTER_A and hit["events"][0]["room"] == "Exhibit Hall C,D,E"
        assert "at the conference: Poster · San Diego Poster Session 6" in r.content[0].text
        r = await c.call_tool("search", {"query": "graph", "day": "2025-12-06", "mode": "keyword"})
        assert r.structured_content["hits"] == [] and "day=2025-12-06" in r.structured_content["note"]

    session(create_server(lib), body)


def test_recommendations_carry_the_events(lib: Library) -> None:
    lib.readers.set_feedback("rec", [POSTER_A], "like")
    hits = lib.recommend.for_reader("rec", 40)
    assert [h.events[0]["poster_position"] for h in hits if h.paper.id == POSTER_B] == ["#2449"]
    assert all(h.events == [] for h in hits if h.paper.id not in (POSTER_B, ORAL))
