"""A reader's own papers make their profile: `import-reader --author` (a real recorded OpenAlex work
of the author, served by the loopback fault server) and `import-reader --bibtex`, stored apart from
the library's papers, embedded, and read by `recommend` before the reader has starred anything.

The recordings and where they come from: tests/data/sources/openalex/README.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.recommend.own import OWN_PREFIX, ReaderPapers, with_own_papers

from conftest import cli_library
from sourceserver import SourceServer

DATA = Path(__file__).parent / "data" / "sources" / "openalex"
WORK = json.loads((DATA / "W2741809807.json").read_text(encoding="utf-8"))  # Piwowar, Priem et al. 2018
BIB = Path(__file__).parent / "data" / "refs.bib"  # two papers: diffusion objectives, signed graphs

# a small library on distinct themes; the first is what the recorded work (open access prevalence) is about
PAPERS = [
    {
        "id": "oa",
        "title": "Estimating the share of open access articles in the scholarly literature",
        "abstract": "We measure how many scholarly articles are freely available to read online, by year and "
        "discipline, using a large sample of DOIs and an oaDOI-style lookup of open access copies.",
    },
    {
        "id": "diffusion",
        "title": "Denoising diffusion models with variational lower bounds",
        "abstract": "We train diffusion models for image generation with a weighted ELBO objective.",
    },
    {
        "id": "rl",
        "title": "Policy gradient methods for robot locomotion",
        "abstract": "Reinforcement learning of walking gaits on quadruped robots with proximal policy optimisation.",
    },
    {
        "id": "graphs",
        "title": "Copula models of signed graph edges",
        "abstract": "Signed graph learning with Gaussian copulas for edge dependencies between nodes.",
    },
    {
        "id": "speech",
        "title": "Streaming speech recognition with transducers",
        "abstract": "An RNN transducer for low-latency automatic speech recognition on device.",
    },
]


def works(query: dict[str, list[str]]) -> bytes:
    flt = query.get("filter", [""])[0]
    priem = ("authorships.author.id:A5023888391", "authorships.author.orcid:https://orcid.org/0000-0001-6187-6610")
    found = [WORK] if flt in priem else []  # Jason Priem wrote it
    return json.dumps({"meta": {"count": len(found), "next_cursor": None}, "results": found}).encode()


@pytest.fixture
def oa() -> Iterator[SourceServer]:
    s = SourceServer(routes={"/works": works}).start()
    yield s
    s.stop()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return cli_library(tmp_path, PAPERS)


def test_author_works_become_the_profile_not_library_papers(oa: SourceServer, db: str) -> None:
    oa.faults["/works"] = ["429:1", "cut"]  # the service asks to wait, then a body is cut: both retried
    base = ["--db", db, "import-reader", "--reader", "jason", "--base-url", oa.url]
    r = CliRunner().invoke(cli, [*base, "--author", "A5023888391", "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    assert got["own_papers"]["new"] == 1 and got["own_papers"]["embedded"] == 1, got
    assert got["liked"] == []  # nothing of theirs is in this library: no star was given
    with Library(db) as lib:
        assert lib.count() == len(PAPERS)  # stored apart: not one of the conference's papers
        assert "W2741809807" not in {h.paper.id for h in lib.search("open access prevalence", limit=20)}
        (own,) = lib.own_papers.papers("jason")
        assert own.key == own.openalex_id == "W2741809807" and own.doi == "10.7717/peerj.4375"
        assert own.abstract.startswith("Despite growing interest in Open Access")  # rebuilt from the inverted index
        assert own.authors[:2] == ["Heather Piwowar", "Jason Priem"] and own.year == 2018
        assert lib.readers.liked("jason") == []
        hits = lib.recommend.for_reader("jason", limit=3)
        assert hits[0].paper.id == "oa", [h.paper.id for h in hits]  # their work says what they read
        assert (hits[0].reason or "").startswith("because you wrote 'The state of OA")  # said as it is
        # a reader without own papers or stars still gets the cold-start order, with its reason
        other = lib.recommend.for_reader("someone", limit=1)
        assert "no likes yet" in (other[0].reason or "")
    again = CliRunner().invoke(cli, [*base, "--author", "https://orcid.org/0000-0001-6187-6610", "--json"])
    assert again.exit_code == 0, again.output  # by ORCID: the same work, updated in place
    assert json.loads(again.output)["own_papers"]["updated"] == 1
    assert oa.hits("/works")[-1].query["filter"] == ["authorships.author.orcid:https://orcid.org/0000-0001-6187-6610"]


def test_author_import_offline_stores_nothing(oa: SourceServer, db: str) -> None:
    oa.faults["/works"] = ["503"] * 20
    r = CliRunner().invoke(
        cli, ["--db", db, "import-reader", "--reader", "jason", "--base-url", oa.url, "--author", "A5023888391"]
    )
    assert r.exit_code == 1 and "503" in r.output, r.output
    with Library(db) as lib:
        assert lib.own_papers.papers("jason") == []


def test_bibtex_of_own_papers_makes_the_profile(db: str, tmp_path: Path) -> None:
    run = CliRunner().invoke
    r = run(cli, ["--db", db, "import-reader", "--reader", "diederik", "--bibtex", str(BIB)])
    assert r.exit_code == 0, r.output
    assert "2 own papers of diederik from bibtex refs.bib: 2 new" in r.output
    with Library(db) as lib:
        keys = {p.key for p in lib.own_papers.papers("diederik")}
        assert keys == {"kingma2023understanding", "doi:10.1234/tmlr.5678"}
        assert lib.recommend.profile("diederik")["own_papers"] == 2
        top = [h.paper.id for h in lib.recommend.for_reader("diederik", limit=2)]
        assert set(top) == {"diffusion", "graphs"}, top
        assert lib.count() == len(PAPERS)
    # a file that is not there, a file with no paper in it
    assert run(cli, ["--db", db, "import-reader", "--bibtex", str(tmp_path / "none.bib")]).exit_code == 1
    empty = tmp_path / "empty.bib"
    empty.write_text("% nothing here\n", encoding="utf-8")
    bad = run(cli, ["--db", db, "import-reader", "--reader", "diederik", "--bibtex", str(empty)])
    assert bad.exit_code in (1, 3, 4) and "Traceback" not in bad.output, bad.output
    assert run(cli, ["--db", db, "import-reader", "--bibtex", str(BIB), "--author", "A1"]).exit_code == 2


def test_grown_corpus_keeps_the_library_rows(db: str, tmp_path: Path) -> None:
    with Library(db) as lib:
        corpus = lib.recommend.corpus()
        own = ReaderPapers(["k"], ["Open access"], ["Free to read articles"], vectors=[None])
        big = with_own_papers(corpus, own)
        n = len(corpus)
        assert big.ids[:n] == corpus.ids and big.ids[n:] == [OWN_PREFIX + "k"]
        assert big.tfidf.shape[0] == n + 1 and big.emb is not None and big.emb.shape[0] == n + 1
        assert np.allclose(big.emb[:n], corpus.emb) and not big.emb[n].any()  # no vector: keywords only


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "lib.db")
    from test_store_backends import fresh_db_name

    return request.getfixturevalue("pg_server").url(fresh_db_name())


def test_own_papers_and_s2_records_on_every_store(store_url: str) -> None:
    from paperatlas.store.own_papers import OwnPaper
    from paperatlas.store.semantic_scholar import S2Link, S2Record

    with Library(store_url, embedder="hashing") as lib:
        rid = lib.readers.get("ada").id
        st = lib.store.own_papers
        assert st.save(rid, [OwnPaper("W1", "A paper", "Its abstract", ["Ada"], year=2020)]) == (1, 0)
        st.save_vectors(rid, "m", {"W1": np.arange(4, dtype=np.float32)})
        assert st.save(rid, [OwnPaper("W1", "A paper, retitled", "Its abstract")]) == (0, 1)
        assert st.vectors(rid, "m") == {}  # the text changed: its vector is redone
        st.save_vectors(rid, "m", {"W1": np.arange(4, dtype=np.float32)})
        assert np.array_equal(st.vectors(rid, "m")["W1"], np.arange(4, dtype=np.float32))
        assert [p.title for p in st.papers(rid)] == ["A paper, retitled"] and st.papers(rid)[0].authors == []
        lib.store.s2.save([S2Record("p1", "a" * 40, links=[S2Link("cited_by", "b" * 40, "p2", True)])])
        assert lib.store.s2.influential_citers("p1") == ["p2"] and lib.store.s2.get("p1").links[0].influential
        assert lib.own_papers.remove("ada") == 1 and st.papers(rid) == []
