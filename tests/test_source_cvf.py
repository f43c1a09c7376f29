"""`fetch cvf`: CVF open access listings (CVPR, ICCV, ...) against a real recorded listing page,
served from the loopback server with faults."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.fulltext.fetch import pdf_url
from paperatlas.sources import HttpClient, SourceArgsError, create_source

from sourceserver import SourceServer

DATA = Path(__file__).parent / "data" / "sources"
LISTING = (DATA / "cvf" / "CVPR2020.html").read_bytes()
PDF = (Path(__file__).parent / "data" / "pdfs" / "N18-3011.pdf").read_bytes()
FIRST = "cvf-Wu_Unsupervised_Learning_of_Probably_Symmetric_Deformable_3D_Objects_From_Images_CVPR_2020"
FIRST_PDF = "/content_CVPR_2020/papers/Wu_Unsupervised_Learning_of_Probably_Symmetric_Deformable_3D_Objects_From_Images_CVPR_2020_paper.pdf"
DOTS = "cvf-Wang_CNN-Generated_Images_Are_Surprisingly_Easy_to_Spot..._for_Now_CVPR_2020"


@pytest.fixture
def server() -> Iterator[SourceServer]:
    s = SourceServer(
        routes={"/CVPR2020": LISTING, FIRST_PDF: PDF},
        content_type={"/CVPR2020": "text/html; charset=utf-8", FIRST_PDF: "application/pdf"},
    ).start()
    yield s
    s.stop()


def _client() -> HttpClient:
    return HttpClient(sleep=lambda s: None, read_timeout=2.0, retries=2)  # type: ignore[arg-type]


def _paper_pages(server: SourceServer) -> list[str]:
    return [h.path for h in server.seen if "/html/" in h.path]


def test_listing_is_stored_with_authors_pages_and_pdfs(
    server: SourceServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPERATLAS_CVF_PAPER_PAGES", "3")
    server.faults["/CVPR2020"] = ["cut", "503", "malformed"]  # each fetched again
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch("cvf", ["CVPR", "2020"], base_url=server.url, client=_client())
        assert r.new == 9 and r.bad == [] and r.retries >= 3
        assert server.hits("/CVPR2020")[-1].query == {"day": ["all"]}
        p = lib.get(FIRST)
        assert p.title == "Unsupervised Learning of Probably Symmetric Deformable 3D Objects From Images in the Wild"
        assert p.authors == ["Shangzhe Wu", "Christian Rupprecht", "Andrea Vedaldi"]
        assert p.venue == "CVPR" and p.year == 2020 and p.abstract == ""
        # the saved page's absolute links are read as paths on the source's own site
        assert p.url == server.url + FIRST_PDF.replace("/papers/", "/html/").replace(".pdf", ".html")
        assert pdf_url(p) == server.url + FIRST_PDF
        assert lib.get(DOTS).title == "CNN-Generated Images Are Surprisingly Easy to Spot... for Now"
        # at most 3 paper pages per run; none is served here, so each answers 404, and the warning counts
        assert len(_paper_pages(server)) == 3
        assert any(
            "9 of 9 papers are stored without an abstract" in n and "3 paper pages answered 404" in n for n in r.notes
        )
        # `fulltext fetch` downloads the PDF the listing links (the recorded PDF is another paper's,
        # which full text notices: no real CVF PDF is recorded here)
        rep = lib.fulltext.fetch([FIRST], client=_client())
        assert len(server.hits(FIRST_PDF)) == 1 and [x["state"] for x in rep.results] == ["not_paper"]


def test_paper_pages_resume_where_the_last_run_stopped(
    server: SourceServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPERATLAS_CVF_PAPER_PAGES", "4")
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        runs = []
        for _ in range(4):
            before = len(_paper_pages(server))
            lib.sources.fetch("cvf", ["CVPR2020"], base_url=server.url, client=_client())
            runs.append(_paper_pages(server)[before:])
        # 9 papers, 4 pages a run: 1-4, 5-8, 9 (the end of the listing), then from the top again; a
        # page that always fails does not keep the ones after it from being asked
        assert [len(x) for x in runs] == [4, 4, 1, 4]
        assert len(set(runs[0] + runs[1] + runs[2])) == 9 and runs[3] == runs[0]


def test_an_abstract_already_stored_is_kept_and_its_page_not_asked_again(
    server: SourceServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPERATLAS_CVF_PAPER_PAGES", "1")
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        lib.sources.fetch("cvf", ["CVPR", "2020"], base_url=server.url, client=_client())
        assert _paper_pages(server) == ["/content_CVPR_2020/html/" + FIRST[4:] + "_paper.html"]
        p = lib.get(FIRST)
        row = {"id": p.id, "title": p.title, "authors": p.authors, "venue": "CVPR", "year": 2020}
        row |= {"url": p.url, "pdf_url": pdf_url(p), "abstract": "An abstract read on an earlier day."}
        (tmp_path / "abstract.jsonl").write_text(json.dumps(row) + "\n")
        lib.ingest([tmp_path / "abstract.jsonl"])
        server.seen.clear()
        r = lib.sources.fetch("cvf", ["CVPR", "2020"], base_url=server.url, client=_client())
        assert FIRST[4:] not in " ".join(_paper_pages(server)) and len(_paper_pages(server)) == 1
        assert lib.get(FIRST).abstract == "An abstract read on an earlier day." and r.updated == 0
        assert any("8 of 9 papers" in n for n in r.notes)


def test_paper_pages_failing_in_a_row_stop_the_reading_not_the_listing(
    server: SourceServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPERATLAS_CVF_PAPER_PAGES", "9")
    server.faults["*"] = ["503"] * 40  # every paper page: busy, without a Retry-After
    server.faults["/CVPR2020"] = [""]  # the listing: answered as recorded
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch("cvf", ["CVPR", "2020"], base_url=server.url, client=_client())
        assert r.new == 9
        assert len(set(_paper_pages(server))) == 3  # three pages down in a row: the site is not asked further
        assert any("stopped: 3 paper pages in a row failed" in n for n in r.notes)


def test_cli_conf_and_year_and_bad_arguments(server: SourceServer, tmp_path: Path) -> None:
    db = str(tmp_path / "lib.db")
    env = {"PAPERATLAS_CVF_PAPER_PAGES": "0"}
    args = ["--db", db, "fetch", "cvf", "--conf", "cvpr", "--year", "2020", "--base-url", server.url]
    res = CliRunner().invoke(cli, [*args, "--no-embed", "--json", "--retries", "0"], env=env)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["new"] == 9 and "9 of 9 papers are stored without an abstract" in res.stderr
    assert not _paper_pages(server)
    res = CliRunner().invoke(cli, ["--db", db, "fetch", "cvf", "ICCV", "2021", "--base-url", server.url], env=env)
    assert res.exit_code == 1 and "no listing at" in res.output and "openaccess.thecvf.com/menu" in res.output
    for bad in (["cvf", "NeurIPS", "2024"], ["cvf", "CVPR"], ["cvf", "--conf", "CVPR", "--year", "24"]):
        res = CliRunner().invoke(cli, ["--db", db, "fetch", *bad])
        assert res.exit_code != 0 and "Traceback" not in res.output
    with pytest.raises(SourceArgsError, match="openalex"):
        create_source("cvf", ["NeurIPS", "2024"])
    assert create_source("cvf", ["iccv", "2023"]).key == "cvf ICCV 2023"
