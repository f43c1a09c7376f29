"""`enrich`: the library's papers matched to OpenAlex works (a real recorded work on a loopback server
with faults), who cites whom inside the library, and where it shows (`show`, `search --sort citations`).

The recordings and where they come from: tests/data/sources/openalex/README.md.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.citations import TITLE_THRESHOLD, title_similarity
from paperatlas.sources import HttpClient
from paperatlas.sources.openalex import bare_doi

from conftest import cli_library
from sourceserver import SourceServer

DATA = Path(__file__).parent / "data" / "sources" / "openalex"
WORK = json.loads((DATA / "W2741809807.json").read_text(encoding="utf-8"))
CITED_ID = WORK["referenced_works"][0].rsplit("/", 1)[1]  # a work the recorded one references


def derived(wid: str, doi: str | None, title: str, year: int, refs: list[str], cited: int) -> dict[str, Any]:
    """Another work in the recorded one's shape: new id, DOI, title, year, references and count."""
    w = copy.deepcopy(WORK)
    w.update(
        id=f"https://openalex.org/{wid}",
        doi=f"https://doi.org/{doi}" if doi else None,
        title=title,
        display_name=title,
        publication_year=year,
        referenced_works=[f"https://openalex.org/{r}" for r in refs],
        cited_by_count=cited,
    )
    return w


# the arXiv preprint the recorded work cites (OpenAlex gives arXiv papers the DOI 10.48550/arXiv.ID)
PREPRINT = derived(CITED_ID, "10.48550/arxiv.1501.00001", "Measuring open access uptake", 2015, [], 12)
# a later paper found by title, which cites the recorded work
LATER = derived("W900000003", None, "Citation advantage of open access articles, revisited", 2019, ["W2741809807"], 40)
DECOY = derived("W900000004", None, "Open access and the citation advantage in physics journals", 2019, [], 7)
BY_DOI = {bare_doi(w["doi"]): w for w in (WORK, PREPRINT)}

PAPERS = [
    {
        "id": "oa-state",
        "title": WORK["title"],
        "abstract": "How much of the literature is open.",
        "doi": "10.7717/peerj.4375",
        "year": 2018,
    },
    {
        "id": "preprint",
        "title": "Measuring open access uptake",
        "abstract": "An early count.",
        "arxiv_id": "1501.00001",
        "year": 2015,
    },
    {
        "id": "later",
        "title": "Citation Advantage of Open-Access Articles, Revisited",
        "abstract": "Revisits it.",
        "year": 2019,
    },
    {
        "id": "unknown",
        "title": "Open access citation advantages among physicists",
        "abstract": "Not in OpenAlex.",
        "year": 2019,
    },
]


def works(query: dict[str, list[str]]) -> bytes:
    flt = query.get("filter", [""])[0]
    if flt == "authorships.author.id:A5023888391":  # Jason Priem, an author of the recorded work
        return json.dumps({"meta": {"count": 1, "next_cursor": None}, "results": [WORK]}).encode()
    if flt.startswith("doi:"):
        found = [BY_DOI[d] for d in flt[4:].split("|") if d in BY_DOI]
    elif flt.startswith("title.search:"):
        found = [DECOY, LATER] if "revisited" in flt.lower() else [DECOY]
    else:
        found = []
    return json.dumps({"meta": {"count": len(found), "per_page": 50}, "results": found}).encode()


@pytest.fixture
def oa() -> Iterator[SourceServer]:
    s = SourceServer(routes={"/works": works}).start()
    yield s
    s.stop()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return cli_library(tmp_path, PAPERS, "--no-embed")


def _show(db: str, pid: str) -> dict[str, Any]:
    r = CliRunner().invoke(cli, ["--db", db, "show", pid, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_title_similarity_threshold_tells_close_from_different() -> None:
    assert title_similarity(LATER["title"], PAPERS[2]["title"]) >= TITLE_THRESHOLD
    assert title_similarity(DECOY["title"], PAPERS[3]["title"]) < TITLE_THRESHOLD


def test_enrich_matches_by_doi_arxiv_and_title_and_fills_show(oa: SourceServer, db: str) -> None:
    oa.faults["/works"] = ["429:2", "cut"]
    r = CliRunner().invoke(cli, ["--db", db, "enrich", "--all", "--base-url", oa.url, "--delay", "0", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["matched"] == {"doi": 1, "arxiv": 1, "title": 1} and rep["unmatched"] == 1, rep
    dois = [h.query["filter"][0] for h in oa.hits("/works") if h.query["filter"][0].startswith("doi:")]
    assert "doi:10.7717/peerj.4375" in dois and "doi:10.48550/arxiv.1501.00001" in dois

    state = _show(db, "oa-state")
    assert state["openalex_id"] == "W2741809807" and state["cited_by_count"] == WORK["cited_by_count"]
    assert state["references"] == ["preprint"]  # it cites the preprint, which is in the library
    assert state["cited_by"] == ["later"]  # and the later paper cites it
    assert state["counts_by_year"] == sorted(WORK["counts_by_year"], key=lambda c: c["year"])  # the history kept
    assert state["match"]["method"] == "doi"
    pre = _show(db, "preprint")
    assert pre["openalex_id"] == CITED_ID and pre["cited_by"] == ["oa-state"] and pre["match"]["method"] == "arxiv"
    later = _show(db, "later")
    assert later["match"]["method"] == "title" and later["match"]["score"] >= TITLE_THRESHOLD
    assert later["references"] == ["oa-state"]
    unknown = _show(db, "unknown")
    assert unknown["openalex_id"] == "" and unknown["cited_by_count"] is None  # nothing guessed below the threshold

    text = CliRunner().invoke(cli, ["--db", db, "show", "oa-state"])
    assert "cites 1 in this library · cited by 1 in this library" in text.output, text.output


def test_enrich_is_incremental_and_offline_afterwards(oa: SourceServer, db: str) -> None:
    args = ["--db", db, "enrich", "--all", "--base-url", oa.url, "--delay", "0", "--json"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    oa.seen.clear()
    again = json.loads(CliRunner().invoke(cli, args).output)
    assert again["skipped_fresh"] == 4 and again["looked_up"] == 0 and not oa.seen
    oa.stop()  # offline: what was stored is read from the library
    assert _show(db, "oa-state")["cited_by"] == ["later"]


def test_refresh_and_ids_and_a_service_that_fails(oa: SourceServer, db: str) -> None:
    lib = Library(db, embedder="hashing")
    oa.faults["/works"] = ["503"] * 10
    with pytest.raises(Exception, match="HTTP 503"):
        lib.citations.enrich(["oa-state"], base_url=oa.url, client=HttpClient(sleep=lambda s: None, retries=1))
    assert lib.citations.paper_fields("oa-state") == {}  # nothing half-written
    oa.faults.clear()
    rep = lib.citations.enrich(["oa-state"], base_url=oa.url, client=HttpClient(sleep=lambda s: None))
    assert rep.matched == {"doi": 1}
    rep = lib.citations.enrich(["oa-state"], base_url=oa.url, client=HttpClient(sleep=lambda s: None), refresh=True)
    assert rep.looked_up == 1 and rep.skipped_fresh == 0
    lib.close()


def test_dois_are_batched_fifty_to_a_request(oa: SourceServer, tmp_path: Path) -> None:
    lib = Library(str(tmp_path / "lib.db"), embedder="hashing")
    rows = tmp_path / "many.jsonl"
    rows.write_text(
        "\n".join(
            json.dumps({"id": f"p{i}", "title": f"P{i}", "abstract": f"a{i}", "doi": f"10.5555/x.{i}"})
            for i in range(120)
        ),
        encoding="utf-8",
    )
    lib.ingest([str(rows)])
    rep = lib.citations.enrich(base_url=oa.url, client=HttpClient(sleep=lambda s: None))
    assert rep.unmatched == 120
    filters = [h.query["filter"][0] for h in oa.hits("/works")]
    assert [f.count("|") + 1 for f in filters if f.startswith("doi:")] == [50, 50, 20]
    assert not [f for f in filters if f.startswith("title.search:")]  # "P7" is too short to match by title


def test_search_sort_citations_orders_by_cited_by_count(oa: SourceServer, db: str) -> None:
    r = CliRunner().invoke(cli, ["--db", db, "enrich", "--all", "--base-url", oa.url, "--delay", "0"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        cli, ["--db", db, "search", "open access", "--mode", "keyword", "--sort", "citations", "--json"]
    )
    assert r.exit_code == 0, r.output
    order = [h["id"] for h in json.loads(r.output)["hits"]]
    assert order[:3] == ["oa-state", "later", "preprint"], order  # cited_by_count large to small
    assert order[3:] == ["unknown"]  # no count: after the others
    lib = Library(db, embedder="hashing")
    # citation velocity: the recorded work's counts of this year and the last (its counts_by_year)
    import datetime as dt

    recent = {c["year"]: c["cited_by_count"] for c in WORK["counts_by_year"]}
    this = dt.date.today().year
    assert lib.citations.rising(["oa-state"]) == {"oa-state": float(recent.get(this, 0) + recent.get(this - 1, 0))}
    (keep,) = [f.keep for f in lib.citations.filters() if f.name == "min_citations"]
    assert (
        keep(lib, 41) == {"oa-state"} and keep(lib, 0) == {"oa-state", "later", "preprint"} and keep(lib, None) is None
    )
    lib.close()
    listed = CliRunner().invoke(cli, ["--db", db, "list", "--sort", "citations", "--limit", "2", "--json"])
    assert [p["id"] for p in json.loads(listed.output)] == ["oa-state", "later"], listed.output
    bad = CliRunner().invoke(cli, ["--db", db, "search", "open", "--sort", "stars"])
    assert bad.exit_code == 2 and "use one of: citations, rising" in bad.output  # a usage error


def test_the_web_and_mcp_sort_by_citations_and_a_saved_search_keeps_the_order(oa: SourceServer, db: str) -> None:
    """The contributed orders are a parameter of every surface: the search page offers them (once
    some paper has a count), its pager and "save this search" keep the one chosen, the saved
    search's feed lists in that order, and the MCP search tool takes it."""
    from bs4 import BeautifulSoup
    from mcp import Client
    import anyio
    from starlette.testclient import TestClient

    from paperatlas.mcp import create_server
    from paperatlas.web import create_app

    lib = Library(db, embedder="hashing")
    with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 1)) as c:
        page = BeautifulSoup(c.get("/search", params={"q": "open access", "mode": "keyword"}).text, "html.parser")
        assert page.select_one("select[name=sort]") is None  # no counts yet: no menu that changes nothing
        r = CliRunner().invoke(cli, ["--db", db, "enrich", "--all", "--base-url", oa.url, "--delay", "0"])
        assert r.exit_code == 0, r.output
        q = {"q": "open access", "mode": "keyword", "sort": "citations"}
        j = c.get("/search.json", params=q).json()
        assert [h["id"] for h in j["hits"]] == ["oa-state", "later", "preprint", "unknown"] and j["sort"] == "citations"
        assert c.get("/search.json", params={**q, "sort": "stars"}).status_code == 400
        for lang, label in (("en", "most cited"), ("zh", "被引最多")):
            page = BeautifulSoup(c.get("/search", params={**q, "lang": lang, "per_page": 1}).text, "html.parser")
            chosen = page.select_one("select[name=sort] option[selected]")
            assert chosen["value"] == "citations" and chosen.get_text(strip=True) == label
        assert "sort=citations" in page.select_one("nav.pager a[rel=next]")["href"]
        form = {i["name"]: i["value"] for i in page.select_one("form.save-search").select("input")}
        h = {"x-csrf-token": form.pop("csrf"), "accept": "application/json"}
        saved = c.post("/searches", data=form, headers=h)
        assert saved.status_code == 200 and saved.json()["params"] == {"mode": "keyword", "sort": "citations"}
        feed = c.get(saved.json()["feed"] + "&limit=100")
        ids = [e.split("</id>", 1)[0].split(":paper:", 1)[1] for e in feed.text.split("<entry>")[1:]]
        assert ids == ["oa-state", "later", "preprint", "unknown"]

    async def search() -> dict[str, Any]:
        async with Client(create_server(lib)) as m:
            res = await m.call_tool("search", {"query": "open access", "mode": "keyword", "sort": "citations"})
            return res.structured_content

    assert [h["id"] for h in anyio.run(search)["hits"]] == ["oa-state", "later", "preprint", "unknown"]
    lib.close()


def test_paper_page_and_mcp_show_the_citations(oa: SourceServer, db: str) -> None:
    from bs4 import BeautifulSoup
    from mcp import Client
    import anyio
    from starlette.testclient import TestClient

    from paperatlas.mcp import create_server
    from paperatlas.web import create_app

    r = CliRunner().invoke(cli, ["--db", db, "enrich", "--all", "--base-url", oa.url, "--delay", "0"])
    assert r.exit_code == 0, r.output
    lib = Library(db, embedder="hashing")
    with TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
        j = c.get("/paper/oa-state.json").json()
        assert j["openalex_id"] == "W2741809807" and j["cited_by"] == ["later"] and j["references"] == ["preprint"]
        assert j["cited_by_count"] == WORK["cited_by_count"]
        for lang, words in (("en", "cites 1 paper in this library"), ("zh", "引用本库 1 篇论文")):
            page = BeautifulSoup(c.get(f"/paper/oa-state?lang={lang}").text, "html.parser")
            line = page.select_one("dd.cited-by").get_text(" ", strip=True)
            assert words in line and "2024: 118" in line, line
            cited = [a["href"] for a in page.select("section.library-citations a")]
            assert "/paper/later" in cited and "/paper/preprint" in cited
            # the neighbourhood map: the preprint it cites and the paper citing it, as links
            nodes = {a["href"]: a["class"] for a in page.select("figure.citation-map svg a")}
            assert nodes == {"/paper/preprint": ["node", "cites"], "/paper/later": ["node", "cited_by"]}, nodes
            assert len(page.select("figure.citation-map line.edge")) == 2  # oa-state -> preprint, later -> oa-state
        plain = BeautifulSoup(c.get("/paper/unknown").text, "html.parser")
        assert plain.select_one("dd.cited-by") is None  # not found in OpenAlex: nothing claimed

    async def ask() -> dict[str, Any]:
        async with Client(create_server(lib)) as m:
            res = await m.call_tool("get_paper", {"id": "later"})
            return res.structured_content

    rec = anyio.run(ask)
    assert rec["openalex_id"] == "W900000003" and rec["references"] == ["oa-state"] and rec["cited_by_count"] == 40
    lib.close()


def test_citation_neighbours_and_the_blend(oa: SourceServer, db: str) -> None:
    from paperatlas.citations import blend

    r = CliRunner().invoke(cli, ["--db", db, "enrich", "--all", "--base-url", oa.url, "--delay", "0"])
    assert r.exit_code == 0, r.output
    lib = Library(db, embedder="hashing")
    assert lib.citations.citation_neighbours("oa-state") == {"preprint": 1.0, "later": 1.0}
    assert lib.citations.citation_neighbours("oa-state", ("cites",)) == {"preprint": 1.0}
    # the preprint and the later paper are both linked to oa-state, not to each other: no co-citation
    assert lib.citations.citation_neighbours("preprint", ("cocited",)) == {}
    assert lib.citations.citation_neighbours("unknown") == {}
    lib.close()
    ranked = blend([("x", 0.5), ("y", 0.4)], {"y": 2.0, "z": 1.0}, 0.5)
    assert ranked == [("y", 0.9), ("x", 0.5), ("z", 0.25)]
    assert blend([("x", 0.5)], {"z": 1.0}, 0.0) == [("x", 0.5)]


def test_enrich_on_postgresql(oa: SourceServer, pg_server: Any, tmp_path: Path) -> None:
    from pgserver import fresh_db_name

    src = tmp_path / "papers.jsonl"
    src.write_text("\n".join(json.dumps(p) for p in PAPERS), encoding="utf-8")
    lib = Library(pg_server.url(fresh_db_name("cite")), embedder="hashing")
    lib.ingest([str(src)])
    rep = lib.citations.enrich(base_url=oa.url, client=HttpClient(sleep=lambda s: None))
    assert rep.matched == {"doi": 1, "arxiv": 1, "title": 1} and rep.unmatched == 1
    fields = lib.citations.paper_fields("oa-state")
    assert fields["references"] == ["preprint"] and fields["cited_by"] == ["later"]
    again = lib.citations.enrich(["oa-state"], base_url=oa.url, client=HttpClient(sleep=lambda s: None), refresh=True)
    assert again.matched == {"doi": 1}  # replaced, not duplicated
    assert lib.citations.paper_fields("oa-state")["references"] == ["preprint"]
    assert lib.sort_ids(["unknown", "preprint", "oa-state"], "citations") == ["oa-state", "preprint", "unknown"]
    lib.close()


def test_report_lists_the_most_cited_papers(oa: SourceServer, db: str, tmp_path: Path) -> None:
    extra = tmp_path / "more.jsonl"  # enough papers for a topic model to build themes over
    extra.write_text(
        "\n".join(
            json.dumps({"id": f"x{i}", "title": f"Filler study {i} of retrieval", "abstract": f"words {i} retrieval"})
            for i in range(40)
        ),
        encoding="utf-8",
    )
    with Library(db, embedder="hashing") as lib:
        lib.ingest([str(extra)])
        lib.embed()
        lib.topics.build(seed=0)
    r = CliRunner().invoke(cli, ["--db", db, "enrich", "--all", "--base-url", oa.url, "--delay", "0"])
    assert r.exit_code == 0, r.output
    rep = json.loads(CliRunner().invoke(cli, ["--db", db, "report", "--json"]).output)
    assert [c["id"] for c in rep["cited"]] == ["oa-state", "later", "preprint"]
    assert rep["cited"][0]["cited_by_count"] == WORK["cited_by_count"]
    md = CliRunner().invoke(cli, ["--db", db, "report", "--format", "markdown"])
    assert "## Most cited papers" in md.output and f"cited {WORK['cited_by_count']} times" in md.output, md.output
    html = CliRunner().invoke(cli, ["--db", db, "report", "--format", "html"]).output
    section = html.split('<section id="cited">')[1].split("</section>")[0]
    assert "The state of OA" in section and "Measuring open access uptake" in section


def test_enrich_usage_and_saved_papers(oa: SourceServer, db: str) -> None:
    run = CliRunner().invoke
    assert run(cli, ["--db", db, "enrich"]).exit_code == 2  # nothing named
    assert run(cli, ["--db", db, "enrich", "--all", "oa-state"]).exit_code == 2  # two at once
    assert run(cli, ["--db", db, "enrich", "--all", "--reader", "ada"]).exit_code == 2
    unknown = run(cli, ["--db", db, "enrich", "no-such-paper", "--base-url", oa.url])
    assert unknown.exit_code != 0 and "no-such-paper" in unknown.output and not oa.seen
    nobody = run(cli, ["--db", db, "enrich", "--saved", "--reader", "ada", "--base-url", oa.url])
    assert nobody.exit_code == 4 and "liked none" in nobody.output, nobody.output
    assert run(cli, ["--db", db, "like", "later", "--reader", "ada"]).exit_code == 0
    r = run(cli, ["--db", db, "enrich", "--saved", "--reader", "ada", "--base-url", oa.url, "--delay", "0", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["looked_up"] == 1 and json.loads(r.output)["matched"] == {"title": 1}


def test_a_paper_merged_after_enrich_keeps_its_links(oa: SourceServer, db: str, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["--db", db, "enrich", "--all", "--base-url", oa.url, "--delay", "0"])
    assert r.exit_code == 0, r.output
    venue = tmp_path / "venue.jsonl"
    venue.write_text(json.dumps({"id": "venue-version", "title": "Measuring open access uptake", "abstract": "Final."}))
    lib = Library(db, embedder="hashing")
    lib.ingest([str(venue)])
    with lib.store.transaction() as c:  # the preprint becomes an alias of its venue version, as ingest merges them
        lib.store._absorb(c, "preprint", "venue-version")
    assert lib.citations.paper_fields("oa-state")["references"] == ["venue-version"]  # not the id that is gone
    merged = lib.citations.paper_fields("venue-version")
    assert merged["openalex_id"] == CITED_ID and merged["cited_by"] == ["oa-state"]
    lib.close()


def test_import_reader_author_likes_their_papers_and_what_they_cite(oa: SourceServer, db: str) -> None:
    run = CliRunner().invoke
    base = ["--db", db, "import-reader", "--reader", "jason", "--base-url", oa.url]
    nobody = run(cli, [*base, "--author", "A1"])  # OpenAlex lists no works of theirs
    assert nobody.exit_code == 4 and "paperatlas enrich" in nobody.output, nobody.output
    before = json.loads(run(cli, [*base, "--author", "A5023888391", "--json"]).output)
    assert before["own"] == ["oa-state"] and before["cited"] == []  # by DOI; what it cites needs `enrich`
    assert run(cli, ["--db", db, "enrich", "--all", "--base-url", oa.url, "--delay", "0"]).exit_code == 0
    r = run(cli, [*base, "--author", "A5023888391", "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    assert got["works"] == 1 and got["own"] == ["oa-state"] and got["cited"] == [{"id": "preprint", "by": 1}]
    with Library(db, embedder="hashing") as lib:
        assert sorted(p.id for p in lib.readers.liked("jason")) == ["oa-state", "preprint"]
    assert run(cli, [*base]).exit_code == 2  # neither a file nor --author
    bad = run(cli, [*base, "--author", "Jason Priem"])
    assert bad.exit_code == 1 and "ORCID" in bad.output
