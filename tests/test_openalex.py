"""`fetch openalex` against real recorded OpenAlex bodies on a loopback server that injects faults.

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
from paperatlas.sources import FetchError, HttpClient, SourceArgsError, create_source
from paperatlas.sources.openalex import rebuild_abstract, work_row

from sourceserver import SourceServer

DATA = Path(__file__).parent / "data" / "sources" / "openalex"
WORK = json.loads((DATA / "W2741809807.json").read_text(encoding="utf-8"))
NATURE = json.loads((DATA / "S137773608.json").read_text(encoding="utf-8"))
ABSTRACT_START = "Despite growing interest in Open Access (OA) to scholarly literature, there is an unmet need"


def derived(n: int) -> dict[str, Any]:
    """A second work for paging: the recorded one under another id, DOI and title (every field's
    shape stays the service's own)."""
    w = copy.deepcopy(WORK)
    w["id"] = f"https://openalex.org/W90000000{n}"
    w["doi"] = f"https://doi.org/10.5555/derived.{n}"
    w["title"] = w["display_name"] = f"Derived work number {n} about open access prevalence"
    w["ids"] = {"openalex": w["id"], "doi": w["doi"]}
    return w


def envelope(results: list[dict[str, Any]], next_cursor: str | None, count: int = 2) -> bytes:
    return json.dumps(
        {"meta": {"count": count, "per_page": 200, "next_cursor": next_cursor}, "results": results}
    ).encode()


class Works:
    """/works by cursor: `*` -> the recorded work, `c2` -> a derived one, then the end."""

    def __init__(self) -> None:
        self.pages = {"*": ([WORK], "c2"), "c2": ([derived(1)], None)}

    def __call__(self, query: dict[str, list[str]]) -> bytes:
        cursor = query.get("cursor", ["?"])[0]
        if cursor not in self.pages:
            return envelope([], None)
        results, nxt = self.pages[cursor]
        return envelope(results, nxt)


@pytest.fixture
def oa() -> Iterator[SourceServer]:
    works = Works()
    s = SourceServer(
        routes={
            "/works": works,
            "/sources": lambda q: json.dumps({"meta": {"count": 1}, "results": [NATURE]}).encode(),
        }
    ).start()
    s.works = works  # type: ignore[attr-defined]
    yield s
    s.stop()


def _client() -> HttpClient:
    waits: list[float] = []
    c = HttpClient(sleep=waits.append, read_timeout=2.0)
    c.waits = waits  # type: ignore[attr-defined]
    return c


def test_abstract_is_rebuilt_and_insane_indexes_are_refused() -> None:
    assert rebuild_abstract(WORK["abstract_inverted_index"]).startswith(ABSTRACT_START)
    assert rebuild_abstract({"a": [0], "b": [1]}) == "a b"
    assert rebuild_abstract({"a": [0], "b": [10**9]}) == ""  # one far position would allocate a billion slots
    assert rebuild_abstract({"a": [0], "b": [4000]}) == ""  # mostly empty: not an abstract
    assert rebuild_abstract({"a": ["0"]}) == "" and rebuild_abstract([1, 2]) == "" and rebuild_abstract(None) == ""
    assert rebuild_abstract({"a": [True]}) == ""


def test_work_row_keeps_ids_and_affiliations() -> None:
    row = work_row(WORK)
    assert row["id"] == row["openalex_id"] == "W2741809807"
    assert row["doi"] == "10.7717/peerj.4375" and row["venue"] == "PeerJ" and row["year"] == 2018
    assert row["authors"][:2] == ["Heather Piwowar", "Jason Priem"]
    first = row["affiliations"][0]
    assert first["institution"] == "Impact Technology Development (United States)" and first["country"] == "US"
    assert first["orcid"] == "0000-0003-1613-5981" and first["ror"] == ["https://ror.org/05ppvf150"]


def test_fetch_venue_resolves_pages_and_stores_papers_with_links(
    oa: SourceServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPERATLAS_OPENALEX_MAILTO", "me@example.org")
    db = str(tmp_path / "lib.db")
    r = CliRunner().invoke(
        cli,
        ["--db", db, "fetch", "openalex", "--venue", "Nature", "--year", "2018", "--base-url", oa.url, "--no-embed"],
    )
    assert r.exit_code == 0, r.output
    assert "2 new" in r.output
    assert "resolved to S137773608 (Nature)" in r.output  # the resolution is shown
    (src,) = oa.hits("/sources")
    assert src.query["search"] == ["Nature"] and src.query["mailto"] == ["me@example.org"]
    pages = oa.hits("/works")
    assert [h.query["cursor"][0] for h in pages] == ["*", "c2"]
    assert pages[0].query["filter"] == ["primary_location.source.id:S137773608,publication_year:2018"]
    assert pages[0].query["mailto"] == ["me@example.org"] and pages[0].query["per-page"] == ["200"]
    lib = Library(db, embedder="hashing")
    p = lib.get("W2741809807")
    assert p.abstract.startswith(ABSTRACT_START) and p.venue == "Nature" and p.year == 2018
    assert p.extra["doi"] == "10.7717/peerj.4375" and p.extra["openalex_id"] == "W2741809807"
    assert p.extra["affiliations"][1]["author"] == "Jason Priem"
    # the citation links came with the works: no enrich needed for cited-by counts
    fields = lib.citations.paper_fields("W2741809807")
    assert fields["cited_by_count"] == WORK["cited_by_count"] and fields["match"]["method"] == "fetched"
    lib.close()
    again = CliRunner().invoke(
        cli,
        ["--db", db, "fetch", "openalex", "--venue", "Nature", "--year", "2018", "--base-url", oa.url, "--no-embed"],
    )
    assert again.exit_code == 0 and "0 new" in again.output, again.output


def test_faults_on_every_page_lose_nothing(oa: SourceServer, tmp_path: Path) -> None:
    oa.faults["/works"] = ["429:3", "cut", "503", "malformed"]
    lib = Library(str(tmp_path / "lib.db"), embedder="hashing")
    c = _client()
    rep = lib.sources.fetch("openalex", [], oa.url, client=c, search="open access")
    assert rep.new == 2 and rep.stopped == ""
    assert 3.0 in c.waits  # Retry-After honoured
    assert all(h.query.get("search") == ["open access"] for h in oa.hits("/works"))
    assert "filter" not in oa.hits("/works")[0].query


def test_a_cursor_loop_is_detected(oa: SourceServer, tmp_path: Path) -> None:
    oa.works.pages["c2"] = ([derived(1)], "c2")  # type: ignore[attr-defined]
    lib = Library(str(tmp_path / "lib.db"), embedder="hashing")
    rep = lib.sources.fetch("openalex", [], oa.url, client=_client(), venue="S137773608")
    assert rep.new == 2
    assert any("cursor it had already sent" in n for n in rep.notes), rep.notes
    assert len(oa.hits("/works")) == 2 and not oa.hits("/sources")  # an S-id needs no resolution


def test_a_failed_fetch_resumes_at_the_stored_cursor(oa: SourceServer, tmp_path: Path) -> None:
    lib = Library(str(tmp_path / "lib.db"), embedder="hashing")
    oa.faults["/works"] = ["", "503", "503", "503"]
    with pytest.raises(FetchError):
        lib.sources.fetch("openalex", [], oa.url, client=HttpClient(sleep=lambda s: None, retries=2), venue="Nature")
    assert lib.count() == 1
    oa.seen.clear()
    rep = lib.sources.fetch("openalex", [], oa.url, client=_client(), venue="Nature")
    assert rep.resumed and rep.new == 1
    assert [h.query["cursor"][0] for h in oa.hits("/works")] == ["c2"]  # not from the start again
    assert not oa.hits("/sources")  # the resolved source was kept with the position


def test_bad_arguments_say_what_to_type() -> None:
    with pytest.raises(SourceArgsError, match="needs --venue"):
        create_source("openalex", [])
    with pytest.raises(SourceArgsError, match="ORCID"):
        create_source("openalex", [], author="Jane Doe")
    with pytest.raises(SourceArgsError, match="ROR"):
        create_source("openalex", [], institution="MIT")
    with pytest.raises(SourceArgsError, match="not a year"):
        create_source("openalex", [], venue="CVPR", year="twenty")
    src = create_source("openalex", [], author="https://orcid.org/0000-0001-6187-6610")
    assert src.author_filter == "authorships.author.orcid:https://orcid.org/0000-0001-6187-6610"  # type: ignore[attr-defined]
    src = create_source("openalex", [], institution="https://ror.org/00jmfr291")
    assert src.institution_filter == "authorships.institutions.ror:https://ror.org/00jmfr291"  # type: ignore[attr-defined]
    assert create_source("openalex", [], author="A5023888391").key == "openalex --author A5023888391"


def test_follow_and_update_fetch_openalex(oa: SourceServer, tmp_path: Path) -> None:
    db = str(tmp_path / "lib.db")
    r = CliRunner().invoke(cli, ["--db", db, "follow", "openalex", "--venue", "Nature", "--base-url", oa.url])
    assert r.exit_code == 0 and "following openalex --venue Nature" in r.output, r.output
    r = CliRunner().invoke(cli, ["--db", db, "update", "--no-embed"])
    assert r.exit_code == 0 and "2 new" in r.output, r.output
    # following a person: their works arrive with `update`
    orcid = "0000-0001-6187-6610"
    r = CliRunner().invoke(cli, ["--db", db, "follow", "openalex", "--author", orcid, "--base-url", oa.url])
    assert r.exit_code == 0 and f"following openalex --author {orcid}" in r.output, r.output
    oa.seen.clear()
    r = CliRunner().invoke(cli, ["--db", db, "update", "--no-embed"])
    assert r.exit_code == 0, r.output
    asked = [h.query.get("filter", [""])[0] for h in oa.hits("/works")]
    assert f"authorships.author.orcid:https://orcid.org/{orcid}" in asked


def test_years_fetch_one_year_each(oa: SourceServer, tmp_path: Path) -> None:
    db = str(tmp_path / "lib.db")
    args = ["--db", db, "fetch", "openalex", "--venue", "S137773608", "--years", "2017-2018", "--base-url", oa.url]
    r = CliRunner().invoke(cli, [*args, "--no-embed", "--json"])
    assert r.exit_code == 0, r.output
    filters = [h.query["filter"][0] for h in oa.hits("/works") if h.query["cursor"][0] == "*"]
    assert filters == [
        "primary_location.source.id:S137773608,publication_year:2017",
        "primary_location.source.id:S137773608,publication_year:2018",
    ]


def test_hostile_link_fields_are_bounded() -> None:
    from paperatlas.sources.openalex import MAX_WORK_IDS, work_links

    w = {
        "id": "https://openalex.org/W1",
        "cited_by_count": -5,
        "counts_by_year": [{"year": "2020", "cited_by_count": 3}, "x", {"year": 2021, "cited_by_count": 2}],
        "referenced_works": [f"https://openalex.org/W{i}" for i in range(MAX_WORK_IDS + 500)] + ["javascript:alert(1)"],
        "related_works": "not a list",
    }
    links = work_links(w)
    assert links["cited_by_count"] is None and links["counts_by_year"] == [{"year": 2021, "cited_by_count": 2}]
    assert len(links["referenced_works"]) == MAX_WORK_IDS and links["related_works"] == []
    assert work_row({"id": "https://openalex.org/W2", "authorships": "x", "primary_location": 3}) == {
        "id": "W2",
        "openalex_id": "W2",
    }
