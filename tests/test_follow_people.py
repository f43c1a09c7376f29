"""`follow author|institution`: a person or a place followed through OpenAlex (names resolved by the
service's own recorded answers), their works arriving with `update`, and listed first in the digest
and its Atom feed. Real recorded OpenAlex bodies on the loopback fault server.

The recordings and where they come from: tests/data/sources/openalex/README.md.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli

from sourceserver import SourceServer

DATA = Path(__file__).parent / "data" / "sources" / "openalex"
WORK = json.loads((DATA / "W2741809807.json").read_text(encoding="utf-8"))  # Piwowar, Priem, ... West 2018
PRIEM = json.loads((DATA / "A5023888391.json").read_text(encoding="utf-8"))  # the author record
MICHIGAN = json.loads((DATA / "I27837315.json").read_text(encoding="utf-8"))  # an institution record
WASHINGTON = "https://ror.org/00cvxb145"  # the ROR of three of the recorded work's authors


def envelope(results: list[dict]) -> bytes:
    return json.dumps({"meta": {"count": len(results), "next_cursor": None}, "results": results}).encode()


def works(query: dict[str, list[str]]) -> bytes:
    flt = query.get("filter", [""])[0]
    mine = ("authorships.author.id:A5023888391", f"authorships.institutions.ror:{WASHINGTON}")
    return envelope([WORK] if flt.startswith(mine) else [])


@pytest.fixture
def oa() -> Iterator[SourceServer]:
    s = SourceServer(
        routes={
            "/works": works,
            "/authors": lambda q: envelope([PRIEM] if "priem" in q.get("search", [""])[0].lower() else []),
            "/institutions": lambda q: envelope([MICHIGAN] if "michigan" in q.get("search", [""])[0].lower() else []),
        }
    ).start()
    yield s
    s.stop()


def test_follow_people_and_places_update_and_digest(oa: SourceServer, tmp_path: Path) -> None:
    db = str(tmp_path / "lib.db")
    run = CliRunner().invoke
    base = ["--db", db, "follow", "--base-url", oa.url]
    oa.faults["/authors"] = ["cut"]  # a cut answer is fetched again
    r = run(cli, [*base, "author", "Jason", "Priem"])
    assert r.exit_code == 0, r.output
    assert "resolved to A5023888391: Jason Priem (OurResearch, 62 works)" in r.output
    assert oa.hits("/authors")[-1].query["search"] == ["Jason Priem"]
    r = run(cli, [*base, "institution", "University of Michigan", "--json"])
    assert r.exit_code == 0, r.output
    mich = json.loads(r.stdout)  # the resolution is said on stderr
    assert mich["id"] == "https://ror.org/00jmfr291" and mich["name"] == "University of Michigan"
    assert run(cli, [*base, "institution", WASHINGTON, "--since", "2018-01-01"]).exit_code == 0  # by ROR: no look-up
    assert len(oa.hits("/institutions")) == 1
    listed = json.loads(run(cli, ["--db", db, "follow", "author", "--json"]).output)
    assert [(f["name"], f["id"]) for f in listed] == [("Jason Priem", "A5023888391")]
    back = (dt.date.today() - dt.timedelta(days=90)).isoformat()
    assert listed[0]["since"] == back  # a new follow starts 90 days back

    nobody = run(cli, [*base, "author", "Nobody Atall"])
    assert nobody.exit_code == 1 and "OpenAlex knows no author" in nobody.output and "ORCID" in nobody.output
    bad = run(cli, [*base, "institution", "Michigan", "--since", "last week"])
    assert bad.exit_code != 0 and "YYYY-MM-DD" in bad.output

    today = dt.date.today().isoformat()
    up = run(cli, ["--db", db, "update", "--no-embed", "--delay", "0"])
    assert up.exit_code == 0, up.output
    filters = sorted(h.query["filter"][0] for h in oa.hits("/works"))
    assert f"authorships.author.id:A5023888391,from_publication_date:{back}" in filters
    assert f"authorships.institutions.ror:{WASHINGTON},from_publication_date:2018-01-01" in filters
    assert "authorships.institutions.ror:https://ror.org/00jmfr291,from_publication_date:" + back in filters
    with Library(db, embedder="hashing") as lib:
        assert lib.count() == 1 and lib.get("W2741809807").year == 2018

    md = run(cli, ["--db", db, "digest", "--since", today])
    assert md.exit_code == 0, md.output
    assert "The state of OA" in md.output and "you follow Jason Priem" in md.output
    assert md.output.count("The state of OA") == 1  # listed once, as news, not again as a recommendation
    atom = run(cli, ["--db", db, "digest", "--since", today, "--format", "atom"])
    assert atom.exit_code == 0 and "you follow Jason Priem" in atom.output and "<entry>" in atom.output
    later = (dt.date.today() + dt.timedelta(days=1)).isoformat()
    assert "you follow" not in run(cli, ["--db", db, "digest", "--since", later]).output

    gone = run(cli, ["--db", db, "unfollow", "author", "jason priem"])
    assert gone.exit_code == 0 and "openalex --author A5023888391" in gone.output, gone.output
    assert json.loads(run(cli, ["--db", db, "follow", "author", "--json"]).output) == []
    again = run(cli, ["--db", db, "unfollow", "author", "jason priem"])
    assert again.exit_code == 1 and "not following the author" in again.output, again.output
