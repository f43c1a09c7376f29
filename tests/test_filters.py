"""One table of filters (paperatlas/contrib.py): every filter the library and its capabilities contribute
is an option of the CLI, a parameter of the web (and its OpenAPI), an argument of the MCP `search` tool,
and a field a saved search keeps, so its Atom feed never silently widens.

One library (module scope): the recorded CoRL 2025 paperlists file (affiliations, presentation types),
the example lists and the recorded NeurIPS 2025 programme feed (sessions, days, rooms).
"""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner
from conftest import EXAMPLES
from starlette.testclient import TestClient

from paperatlas import Library
from paperatlas import library as library_mod
from paperatlas.cli import cli
from paperatlas.contrib import Filter, SearchRequest
from paperatlas.errors import PaperatlasError
from paperatlas.library import filter_table
from paperatlas.web import create_app

DATA = Path(__file__).parent / "data"
FILES = [
    DATA / "paperlists" / "corl" / "corl2025.json",
    *EXAMPLES,
    DATA / "programme" / "neurips-2025-orals-posters.json",
]
ATOM = "{http://www.w3.org/2005/Atom}"
QUERY = "learning"  # a keyword most papers hold: each filter must narrow its answer
# a value of each filter that keeps some of the library's papers (a filter added later is tried with
# its declared example: a feed that dropped it would then list papers where none pass)
VALUES: dict[str, Any] = {
    "venue": "NeurIPS",
    "year": 2025,
    "status": "Oral",
    "author": "Yixuan Huang",
    "session": "Poster Session 6",
    "day": "2025-12-05",
    "room": "Hall C",
    "institution": "Stanford",
    "country": "China",
    "type": "oral",
    # the library has no citation counts and no full text: these keep no paper (and the feed none)
    "min_citations": 1,
    "fulltext": True,
}


def value_of(f: Filter) -> Any:
    return VALUES.get(f.name, f.example or "zz")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("filters") / "lib.db"
    with Library(path, embedder="hashing") as lib:
        lib.ingest(FILES)
        lib.embed()
    return path


@pytest.fixture
def client(db: Path, tmp_path: Path) -> Iterator[tuple[TestClient, Library]]:
    import shutil

    copy = tmp_path / "lib.db"
    shutil.copy(db, copy)
    lib = Library(copy, embedder="hashing")
    with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 1)) as c:
        yield c, lib
    lib.close()


def feed_ids(c: TestClient, feed: str) -> list[str]:
    r = c.get(feed + "&limit=100")
    assert r.status_code == 200, r.text
    return [e.find(f"{ATOM}id").text.split(":paper:", 1)[1] for e in ET.fromstring(r.content).findall(f"{ATOM}entry")]


@pytest.mark.parametrize("f", list(filter_table()), ids=lambda f: f.name)
def test_a_saved_search_keeps_the_filter(client: tuple[TestClient, Library], f: Filter) -> None:
    """Saved from the search page with one filter set, the search's feed lists what the search lists,
    never more; the page's next-page link keeps the filter too."""
    c, lib = client
    value = value_of(f)
    everything = {h.paper.id for h in lib.search(QUERY, "keyword", 100)}
    narrowed = [h.paper.id for h in lib.search(QUERY, "keyword", 100, **{f.name: value})]
    assert set(narrowed) < everything, f"{f.name}={value!r} does not narrow the test library's answer"
    page = c.get("/search", params={"q": QUERY, "mode": "keyword", f.name: str(value), "per_page": 1})
    soup = BeautifulSoup(page.text, "html.parser")
    save = soup.select_one("form.save-search")
    if save is None:  # nothing passes (no citations or full text in this library): no form to save from
        assert not narrowed
        token = soup.select_one("input[name=csrf]") or soup.select_one("meta[name=csrf-token]")
        csrf = token.get("value") or token.get("content")
        form = {"csrf": csrf, "q": QUERY, "mode": "keyword", f.name: str(f.check(value))}
    else:
        form = {i["name"]: i["value"] for i in save.select("input")}
    assert form[f.name] == str(f.check(value))
    if len(narrowed) > 1:
        assert f"{f.name}=" in soup.select_one("nav.pager a[rel=next]")["href"]
    h = {"x-csrf-token": form.pop("csrf"), "accept": "application/json"}
    saved = c.post("/searches", data=form, headers=h)
    assert saved.status_code == 200, saved.text
    assert saved.json()["params"] == {"mode": "keyword", f.name: f.check(value)}
    assert sorted(feed_ids(c, saved.json()["feed"])) == sorted(narrowed)


def test_a_search_saved_in_the_old_shape_still_reads(client: tuple[TestClient, Library]) -> None:
    """Searches saved before every filter was kept hold {mode, venue, year, status}: they replay as saved."""
    c, lib = client
    me = lib.readers.get("me")
    sid = lib.store.readers.save_search(me.id, "old", QUERY, {"mode": "keyword", "venue": "NeurIPS", "year": None})
    feed = next(s["feed"] for s in c.get("/digest.json").json()["saved_searches"] if s["id"] == sid)
    want = [h.paper.id for h in lib.search(QUERY, "keyword", 100, venue="NeurIPS")]
    assert want and sorted(feed_ids(c, feed)) == sorted(want)


def test_search_request_round_trip_and_errors(db: Path) -> None:
    with Library(db, embedder="hashing") as lib:
        table = lib.filters
        req = SearchRequest("graphs", "keyword", {k: VALUES[k] for k in table.names()}, page=2, per_page=5)
        assert SearchRequest.from_params(req.to_params(), table) == req
        assert SearchRequest.from_params({"q": "x", "year": "2025"}, table).filters == {"year": 2025}
        for bad, said in (
            ({"colour": "red"}, "no filter named 'colour'"),
            ({"year": "soon"}, "year must be a whole number"),
            ({"year": str(2**70)}, "is out of range"),
            ({"type": "keynote"}, "is not one of"),
            ({"day": "Friday"}, "is not a day"),
            ({"institution": "x" * 201}, "longer than 200"),
            ({"mode": "fuzzy"}, "is not one of"),
        ):
            with pytest.raises(PaperatlasError, match=said) as e:
                SearchRequest.from_params(bad, table)
            assert e.value.fix  # every refusal says what to do
        # a request searches as its keywords do
        r = SearchRequest(QUERY, "keyword", {"session": "Poster Session 6"}, per_page=50)
        assert [h.paper.id for h in lib.search(r)] == [
            h.paper.id for h in lib.search(QUERY, "keyword", 50, session="Poster Session 6")
        ]


class Colours:
    """A capability added by one line in CAPABILITIES: its filter must appear on every surface."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib

    @staticmethod
    def filters() -> list[Filter]:
        return [
            Filter(
                "colour",
                str,
                "only papers of this colour",
                "colours",
                lambda lib, v: {p.id for p in lib.papers() if p.venue == "CoRL"} if v == "red" else set(),
                choices=("red", "blue"),
            )
        ]


def test_a_contributed_filter_appears_everywhere(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(library_mod, "CAPABILITIES", [*library_mod.CAPABILITIES, ("colours", Colours, ())])
    runner = CliRunner()
    for cmd in ("search", "list", "export", "recommend"):
        r = runner.invoke(cli, [cmd, "--help"])
        assert "--colour [red|blue]" in r.output and "Only papers of this colour." in r.output
    r = runner.invoke(cli, ["--db", str(db), "search", "--colour", "red", "--json", "--limit", "100"])
    assert r.exit_code == 0, r.output
    assert '"venue": "CoRL"' in r.output and '"venue": "NeurIPS"' not in r.output
    r = runner.invoke(cli, ["--db", str(db), "list", "--colour", "blue"])
    assert r.exit_code == 4 and "--colour" in r.stderr
    # recommendations narrow by any filter of the table too (a reader with likes on both venues)
    with Library(db, embedder="hashing") as lib:
        liked = [lib.papers(venue=v, limit=1)[0].id for v in ("CoRL", "NeurIPS")]
    reader = ["--reader", "colourtest"]
    for pid in liked:
        assert runner.invoke(cli, ["--db", str(db), "like", pid, *reader]).exit_code == 0
    r = runner.invoke(cli, ["--db", str(db), "recommend", *reader, "--colour", "red", "--json", "--limit", "20"])
    assert r.exit_code == 0, r.output
    assert '"venue": "CoRL"' in r.output and '"venue": "NeurIPS"' not in r.output

    lib = Library(db, embedder="hashing")
    try:
        with TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
            doc = c.get("/openapi.json").json()
            search = {p["name"]: p for p in doc["paths"]["/search.json"]["get"]["parameters"]}
            assert search["colour"]["schema"]["enum"] == ["red", "blue"]
            body = doc["paths"]["/searches"]["post"]["requestBody"]["content"]["application/json"]["schema"]
            assert "colour" in body["properties"]
            got = c.get("/search.json", params={"q": QUERY, "mode": "keyword", "colour": "red"}).json()
            assert got["filters"]["colour"] == "red" and {h["venue"] for h in got["hits"]} == {"CoRL"}
            assert c.get("/search.json", params={"q": QUERY, "colour": "green"}).status_code == 400

        from paperatlas.mcp.server import create_server

        server = create_server(lib)
        tools = {t.name: t for t in asyncio.run(server.list_tools())}
        assert tools["search"].input_schema["properties"]["colour"]["anyOf"][0]["enum"] == ["red", "blue"]
    finally:
        lib.close()


def test_an_empty_query_names_the_options_as_they_are_spelled(db: Path) -> None:
    r = CliRunner().invoke(cli, ["--db", str(db), "search", ""])
    assert r.exit_code == 2 and "--min-citations" in r.output and "--min_citations" not in r.output


@pytest.mark.parametrize(
    "word", ["1", "true", "True", "yes", "on", "0", "false", "False", "no", "off", "Yes", "TRUE", "y", "2"]
)
def test_a_switch_word_means_the_same_to_the_web_and_the_filter_table(word: str) -> None:
    # the web's query-string parameter and the table's filter once kept two word lists: "Yes" passed one
    # and was refused by the other
    from paperatlas.web.common import HTTPError, Param

    table = Filter("flag", bool, "a switch", "core", lambda lib, v: None)
    try:
        web: Any = Param("flag", type=bool).parse(word)
    except HTTPError:
        web = "refused"
    try:
        by_table: Any = table.check(word)
    except PaperatlasError:
        by_table = "refused"
    # the table turns an off switch into "no filter" (None); the web gives False
    assert (web if web is not False else None) == by_table
