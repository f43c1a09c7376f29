"""The conference report and the fields it needs, on recorded papercopilot/paperlists CoRL records of
five years (tests/data/paperlists/README.md). Every figure is recomputed here from the raw files or
from the library, never copied from the code under test."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.errors import PaperatlasError
from paperatlas.llm.capability import is_chinese
from paperatlas.ingest.fields import affiliations_of, presentation_of, reviews_of
from paperatlas.report import parse_years
from paperatlas.report.stats import benjamini_hochberg, normal_two_sided_p, trend_z, two_proportion_z

DATA = Path(__file__).parent / "data" / "paperlists" / "corl"
FILES = sorted(DATA.glob("corl*.json"))
RAW = {r["id"]: (int(f.stem[-4:]), r) for f in FILES for r in json.loads(f.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def corl(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A library of the five recorded years, embedded (hashing) and with its topics built."""
    db = str(tmp_path_factory.mktemp("corl") / "corl.db")
    with Library(db, embedder="hashing") as lib:
        assert lib.ingest(FILES).new == len(RAW) == 120
        lib.embed()
        lib.topics.build(seed=0)
    return db


def run(*args: str) -> str:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return r.output


# -- the fields kept --------------------------------------------------------------------------
def test_show_json_keeps_affiliations_reviews_type_and_citations_as_the_record_says(corl: str) -> None:
    for pid, (year, raw) in list(RAW.items())[::7]:
        p = json.loads(run("--db", corl, "show", "--json", "--", pid))
        extra = p["extra"]
        assert extra["presentation"] == raw["status"].lower()
        ratings = [float(x) for x in raw["rating"].split(";")] if raw["rating"] else []
        if ratings:
            assert extra["reviews"]["ratings"] == ratings
            assert math.isclose(extra["reviews"]["rating_avg"], sum(ratings) / len(ratings), abs_tol=1e-4)
        else:
            assert "reviews" not in extra
        if raw["gs_citation"] >= 0:
            assert extra["citations"] == raw["gs_citation"]
        else:
            assert "citations" not in extra
        authors = raw["author"].split(";")
        aff = extra.get("affiliations", [])
        assert [a["author"] for a in aff] in ([], authors)
        norm = set(raw["aff_unique_norm"].split(";")) - {"", "Unknown Institution"}
        got = {n for a in aff for n in a.get("institutions") or [a["institution"]] if n}
        assert got <= norm, (pid, got, norm)


def test_affiliations_of_a_real_record_with_a_missing_author_and_double_affiliations() -> None:
    _, raw = RAW["C6VxzSpjrv"]  # CoRL 2025: author 7 has no affiliation, 8 and 9 have two each
    aff = affiliations_of(raw, raw["author"].split(";"))
    assert aff[6] == {"author": "Trevor Darrell", "institution": "", "country": ""}
    assert aff[7]["institutions"] == ["Amazon", "University of California, Berkeley"]
    assert aff[8]["institution"] == "Meta" and aff[0]["country"] == "United States"


def test_field_helpers_on_edge_values() -> None:
    assert presentation_of("ICLR 2024 oral") == "oral" and presentation_of("Poster (Highlight)") == "highlight"
    assert presentation_of("Accept") == "" and presentation_of("Spotlights") == "spotlight"
    assert reviews_of({"rating": "", "rating_avg": [0, 0]}) == {}  # what paperlists writes with no reviews
    assert reviews_of({"rating": "3;5", "confidence": "4;x"}) == {
        "ratings": [3.0, 5.0],
        "rating_avg": 4.0,
        "rating_std": 1.0,
        "confidences": [4.0],
        "confidence_avg": 4.0,
    }
    # lists that do not line up: kept as written, the country not guessed
    aff = affiliations_of(
        {
            "aff": "MIT;Oxford",
            "aff_unique_norm": "MIT",
            "aff_unique_index": "0;0;0",
            "aff_country_unique": "United States",
            "aff_country_unique_index": "0",
        },
        ["A", "B"],
    )
    assert aff == [
        {"author": "A", "institution": "MIT", "country": ""},
        {"author": "B", "institution": "Oxford", "country": ""},
    ]


# -- the filters ----------------------------------------------------------------------------------
def _raw_ids(pred) -> set[str]:  # type: ignore[no-untyped-def]
    return {pid for pid, (_, r) in RAW.items() if pred(r)}


def test_filters_in_cli_match_the_raw_records(corl: str) -> None:
    want_oral = _raw_ids(lambda r: r["status"] == "Oral")
    got = {p["id"] for p in json.loads(run("--db", corl, "list", "--type", "oral", "--limit", "0", "--json"))}
    assert got == want_oral and len(got) == 24
    want_cmu = _raw_ids(lambda r: "Carnegie Mellon University" in r["aff_unique_norm"].split(";"))
    got = {
        p["id"]
        for p in json.loads(run("--db", corl, "list", "--institution", "carnegie mellon", "--limit", "0", "--json"))
    }
    assert got == want_cmu and got
    hits = json.loads(run("--db", corl, "search", "--country", "中国", "--type", "poster", "--limit", "100", "--json"))[
        "hits"
    ]
    for h in hits:
        assert "China" in RAW[h["id"]][1]["aff_country_unique"] and RAW[h["id"]][1]["status"] == "Poster"
    assert hits
    r = CliRunner().invoke(cli, ["--db", corl, "list", "--institution", "Nowhere University"])
    assert r.exit_code == 4 and "no paper here names the institution" in r.output


def test_a_bad_type_names_the_valid_ones(corl: str) -> None:
    with Library(corl) as lib, pytest.raises(PaperatlasError, match="oral, spotlight"):
        lib.search("robot", type="keynote")


# -- the report ----------------------------------------------------------------------------------
def test_report_json_contract_and_every_figure_recomputed_from_the_library(corl: str) -> None:
    rep = json.loads(run("--db", corl, "report", "--venue", "corl", "--year", "2021-2025", "--json"))
    with Library(corl) as lib:
        placed = lib.store.topics.paper_topics()
        labels = {t["topic"]: t["label"] for t in lib.store.topics.list_topics("coarse")}
    assert rep["papers"] == 120 and rep["placed"] == len(placed) == 120
    assert rep["scope"]["venue"] == "CoRL" and rep["scope"]["years_present"] == [2021, 2022, 2023, 2024, 2025]
    sizes = Counter(v["coarse"] for v in placed.values())
    assert sum(t["papers"] for t in rep["themes"]) == 120
    for t in rep["themes"]:
        assert t["label"] == labels[t["topic"]]
        assert t["papers"] == sizes[t["topic"]] == len(t["ids"]) == len(set(t["ids"]))
        assert {placed[i]["coarse"] for i in t["ids"]} == {t["topic"]}
        assert t["share"] == round(t["papers"] / 120, 4)
        assert t["types"].get("oral", 0) == sum(RAW[i][1]["status"] == "Oral" for i in t["ids"])
    # institutions and countries, counted from the raw files
    inst = Counter(
        n for _, r in RAW.values() for n in set(r["aff_unique_norm"].split(";")) - {"", "Unknown Institution"}
    )
    for row in rep["institutions"][:10]:
        assert row["papers"] == inst[row["name"]] == len(row["ids"])
    assert rep["institutions"][0]["name"] == inst.most_common(1)[0][0]
    china = _raw_ids(lambda r: "China" in r["aff_country_unique"].split(";"))
    row = next(c for c in rep["countries"] if c["name"] == "China")
    assert set(row["ids"]) == china and row["papers"] == len(china)
    # reviews: mean of the per-paper means of the papers that have ratings
    rated = [
        sum(map(float, r["rating"].split(";"))) / len(r["rating"].split(";")) for _, r in RAW.values() if r["rating"]
    ]
    assert rep["reviews"]["papers"] == len(rated) == 96
    assert math.isclose(rep["reviews"]["rating_avg"], sum(rated) / len(rated), abs_tol=1e-3)


def test_trends_agree_with_counts_recomputed_from_the_raw_files(corl: str) -> None:
    rep = json.loads(run("--db", corl, "report", "--venue", "CoRL", "--json"))
    tr = rep["trends"]
    assert tr["years"] == [2021, 2022, 2023, 2024, 2025]
    per_year = Counter(y for y, _ in RAW.values())
    assert tr["papers"] == {str(y): n for y, n in per_year.items()}
    theme_of = {i: t["topic"] for t in rep["themes"] for i in t["ids"]}
    for row in tr["themes"]:
        counts = Counter(RAW[i][0] for i, k in theme_of.items() if k == row["topic"])
        assert row["counts"] == {str(y): counts.get(y, 0) for y in tr["years"]}
        assert row["shares"] == {str(y): round(counts.get(y, 0) / per_year[y], 4) for y in tr["years"]}
        assert math.isclose(row["change"], row["shares"]["2025"] - row["shares"]["2021"], abs_tol=2e-4)
        assert 0 <= row["p"] <= row["q"] <= 1 and row["significant"] == (row["q"] < 0.05)
    changes = {r["topic"]: r["change"] for r in tr["themes"]}
    assert tr["rising"] == sorted([k for k, c in changes.items() if c > 0], key=lambda k: (-changes[k], k))[:5]
    # one year has no trends
    one = json.loads(run("--db", corl, "report", "--venue", "CoRL", "--year", "2023", "--json"))
    assert "trends" not in one and one["papers"] == 24


class _Resources(HTMLParser):
    """Every address the page would load by itself (not links the reader may follow)."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("src", "srcset", "data", "poster", "background"):
            if a.get(key):
                self.loads.append(f"{tag} {key}={a[key]}")
        if tag == "link" and a.get("href"):
            self.loads.append(f"link href={a['href']}")
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"] or "")


def test_offline_html_loads_nothing_and_every_bar_leads_to_its_papers(corl: str, tmp_path: Path) -> None:
    out = tmp_path / "corl.html"
    run("--db", corl, "report", "--venue", "CoRL", "--format", "html", "-o", str(out))
    html = out.read_text(encoding="utf-8")
    p = _Resources()
    p.feed(html)
    assert p.loads == []
    assert not re.search(r"url\(|@import|https?://", html)
    ids = set(re.findall(r'id="([^"]+)"', html))
    anchors = [h[1:] for h in p.hrefs if h.startswith("#")]
    assert anchors and all(a in ids for a in anchors), set(anchors) - ids
    rep = json.loads(run("--db", corl, "report", "--venue", "CoRL", "--json"))
    for t in rep["themes"]:
        assert f'href="#theme-{t["topic"]}"' in html  # its bar
        for y, ids_y in t["ids_by_year"].items():
            if ids_y:
                assert f'id="theme-{t["topic"]}-{y}"' in html
    assert "<svg" in html and "Trends" in html


def test_markdown_and_chinese(corl: str) -> None:
    md = run("--db", corl, "report", "--venue", "CoRL", "--year", "2024,2025")
    md = md[md.find("# CoRL") :]  # past the notes the command writes to stderr (mixed in by CliRunner)
    assert md.startswith("# CoRL 2024–2025: the conference at a glance") and "## Trends" in md
    zh = run("--db", corl, "report", "--venue", "CoRL", "--year", "2024,2025", "--lang", "zh")
    assert "## 主题" in zh and "## 趋势" in zh


def test_report_without_papers_or_topics_says_what_to_do(corl: str, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["--db", corl, "report", "--venue", "NeurIPS"])
    assert r.exit_code == 1 and "no papers for NeurIPS" in r.output and "paperatlas stats" in r.output
    db = str(tmp_path / "bare.db")
    with Library(db, embedder="hashing") as lib:
        lib.ingest(FILES[:1])
    r = CliRunner().invoke(cli, ["--db", db, "report", "--year", "2025-2201"])
    assert r.exit_code == 1 and "2019-2025" in r.output


def test_a_report_without_topics_comes_at_once_with_the_themes_marked_missing(tmp_path: Path) -> None:
    """Institutions, countries and reviews need no topics: the report gives them, says the themes are
    missing, and the terminal (never the shareable file) names the commands that add them."""
    db = str(tmp_path / "bare.db")
    with Library(db, embedder="hashing") as lib:
        lib.ingest(FILES)
    r = CliRunner().invoke(cli, ["--db", db, "report", "--venue", "CoRL", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["scope"]["themes_missing"] and rep["themes"] == [] and "trends" not in rep
    assert rep["countries"][0]["name"] == "United States" and rep["institutions"] and rep["reviews"]["papers"]
    assert any("topics build" in h for h in rep["hints"]) and not any("paperatlas" in n for n in rep["notes"])
    out = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["--db", db, "report", "--format", "html", "-o", str(out)])
    assert r.exit_code == 0 and "hint: run `paperatlas embed`, then `paperatlas topics build`" in r.stderr
    html = out.read_text(encoding="utf-8")
    assert "not built yet" in html and "Institutions and countries" in html
    assert "paperatlas embed" not in html and "topics build" not in html


def test_the_offline_report_has_no_cli_notes_a_true_title_and_no_empty_sections(tmp_path: Path) -> None:
    """The demo: untitled abstracts of two venues of one year, no authors, topics built, no model."""
    db = str(tmp_path / "demo.db")
    examples = sorted((Path(__file__).parents[1] / "examples").glob("*.txt"))
    with Library(db, embedder="hashing") as lib:
        lib.ingest(examples)
        lib.embed()
        lib.topics.build(seed=0)
        lib.ingest([FILES[0]])  # papers added after the topic build: in no theme
    out = tmp_path / "demo.html"
    r = CliRunner().invoke(cli, ["--db", db, "report", "--format", "html", "-o", str(out)])
    assert r.exit_code == 0, r.output
    html = out.read_text(encoding="utf-8")
    assert "<title>CoRL 2021, ICLR 2026, NeurIPS 2026: the papers at a glance</title>" in html
    assert not re.search(r"`paperatlas|docs/llm|paperatlas (embed|topics)", html), re.findall(r"paperatlas \w+", html)
    assert "Most prolific authors" in html  # CoRL's papers have authors
    assert "papers are in no theme" in html and "hint:" in r.stderr
    md = tmp_path / "demo.md"
    CliRunner().invoke(cli, ["--db", db, "report", "--venue", "ICLR", "-o", str(md)])
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# ICLR 2026: the conference at a glance") and "Most prolific authors" not in text
    assert "`paperatlas" not in text


def test_plural_of_one_paper_in_no_theme() -> None:
    from paperatlas.report.figures import build_report
    from paperatlas.store.report import PaperFacts

    facts = [PaperFacts(f"p{i}", f"T{i}", "V", 2024, "", [f"A{i}"], {}) for i in range(3)]
    rep = build_report({}, facts, {"p0": 0, "p1": 0}, [_theme(0)], lambda t, ids: ids)
    assert rep.notes == ["1 of 3 papers is in no theme (added after the themes were built)"]


def _theme(topic: int):  # type: ignore[no-untyped-def]
    from paperatlas.report.figures import ThemeInput

    return ThemeInput(topic, "a theme", ["a", "theme"])


# -- the statistics --------------------------------------------------------------------------------
def test_statistics_against_textbook_values() -> None:
    # two proportions 0.5 of 100 vs 0.6 of 100: pooled z = 0.1 / sqrt(0.55*0.45*0.02) = 1.4213
    assert math.isclose(two_proportion_z(50, 100, 60, 100), 1.42134, abs_tol=1e-4)
    assert math.isclose(normal_two_sided_p(1.959964), 0.05, abs_tol=1e-5)
    # Cochran-Armitage on three groups of 100 with 10, 20, 30 cases (scores 0, 1, 2): z = 3.5355
    assert math.isclose(trend_z([10, 20, 30], [100, 100, 100]), 3.5355, abs_tol=1e-3)
    assert trend_z([5, 5], [50, 50]) == 0.0 and trend_z([0, 0], [10, 10]) == 0.0
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.0533333, 0.0533333, 0.5])


def test_parse_years() -> None:
    assert parse_years("2019-2021,2024") == [2019, 2020, 2021, 2024]
    assert parse_years(None) == [] and parse_years([2024, 2023]) == [2023, 2024]
    assert parse_years("2025-2023") == [2023, 2024, 2025]  # a range either way round means the same years
    for bad in ("20x4", "2025-2201", "1900"):
        with pytest.raises(PaperatlasError):
            parse_years(bad)


# -- several years in one command -----------------------------------------------------------------
def test_fetch_years_pulls_every_year_in_one_command_and_names_the_one_that_failed(tmp_path: Path) -> None:
    from sourceserver import SourceServer

    routes = {f"/corl/{f.name}": f.read_bytes() for f in FILES}
    server = SourceServer(routes=routes).start()
    try:
        server.faults["/corl/corl2023.json"] = ["429:0"]  # retried, not lost
        db = str(tmp_path / "fetched.db")
        base = [
            "--db",
            db,
            "fetch",
            "paperlists",
            "corl",
            "--base-url",
            server.url,
            "--no-embed",
            "--retries",
            "2",
            "--delay",
            "0",
        ]
        r = CliRunner().invoke(cli, [*base, "--years", "2020-2025", "--json"])
        assert r.exit_code == 1, r.output  # 2020 is not served: named, the other years stored
        out = json.loads(r.output[r.output.index("{") :])
        assert out["failed"] == 1 and out["new"] == 120
        assert [d["args"] for d in out["fetches"]] == [["corl", str(y)] for y in range(2020, 2026)]
        assert "HTTP 404" in out["fetches"][0]["error"]
        with Library(db) as lib:
            assert Counter(p.year for p in lib.papers()) == Counter(y for y, _ in RAW.values())
        r = CliRunner().invoke(cli, [*base, "--years", "2021-2025"])
        assert r.exit_code == 0 and "5 fetches, 0 new, 0 updated" in r.output, r.output
        r = CliRunner().invoke(cli, [*base, "--years", "20x5"])
        assert r.exit_code != 0 and "2019-2025" in r.output
    finally:
        server.stop()


# -- the web page and the API -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def web(corl: str):  # type: ignore[no-untyped-def]
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    lib = Library(corl)
    with TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
        yield c
    lib.close()


def test_report_json_twin_is_the_cli_json(web, corl: str) -> None:  # type: ignore[no-untyped-def]
    api = web.get("/report.json?venue=CoRL&year=2021-2025").json()
    cli_json = json.loads(run("--db", corl, "report", "--venue", "CoRL", "--year", "2021-2025", "--json"))
    assert api == cli_json
    r = web.get("/report.json?year=20x")
    assert r.status_code == 400 and "2019-2025" in r.text
    assert web.get("/report.json?venue=NeurIPS").status_code == 404


def test_report_page_charts_link_to_their_papers_and_obey_the_csp(web) -> None:  # type: ignore[no-untyped-def]
    from bs4 import BeautifulSoup

    r = web.get("/report?venue=CoRL&year=2021-2025")
    assert r.status_code == 200
    soup = BeautifulSoup(r.text, "html.parser")
    rep = web.get("/report.json?venue=CoRL&year=2021-2025").json()
    ids = {el["id"] for el in soup.select("[id]")}
    svg_links = [a["href"] for a in soup.select("svg a")]
    assert len(svg_links) >= len(rep["themes"]) + 5 * len(rep["themes"])  # theme bars + trend points
    assert all(h[1:] in ids for h in svg_links if h.startswith("#"))
    for t in rep["themes"]:
        listed = [a["href"] for a in soup.select(f"#theme-{t['topic']} ol.plist a")]
        assert sorted(listed) == sorted(f"/paper/{i}" for i in t["ids"])
    # the site allows no inline script or style: the page's script and style are files
    assert all(s.get("src") for s in soup.select("script") if s.get("type") != "application/json")
    assert not soup.select("[style]")
    assert web.get("/report/report.js").status_code == 200 and web.get("/report/nope.js").status_code == 404
    zh = web.get("/report?venue=CoRL&year=2021-2025&lang=zh").text
    assert "趋势" in zh and "主题" in zh


def test_web_filters_and_paper_page_show_the_kept_fields(web) -> None:  # type: ignore[no-untyped-def]
    got = {h["id"] for h in web.get("/search.json?institution=stanford&type=oral&per_page=100").json()["hits"]}
    want = _raw_ids(lambda r: "Stanford University" in r["aff_unique_norm"].split(";") and r["status"] == "Oral")
    assert got == want and got
    b = web.get("/browse.json?venue=CoRL&year=2023&type=oral").json()
    assert b["matching"] == 6 and {p["id"] for p in b["papers"]} == _raw_ids(
        lambda r: r["status"] == "Oral" and RAW[r["id"]][0] == 2023
    )
    assert web.get("/search.json?type=keynote").status_code == 400
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(web.get("/paper/69y5fzvaAT?lang=en").text, "html.parser")  # RoboCook, CoRL 2023 oral
    aff = soup.select_one("dd.affiliations")
    assert aff is not None and "Stanford University" in aff.text
    assert aff.select_one('a[href="/search?institution=Stanford%20University"]') is not None
    text = soup.get_text(" ")
    assert "ratings" in text and "citations" in text


@pytest.mark.slow
def test_mcp_report_tool_and_search_filters(corl: str) -> None:
    """The SDK's own client against `paperatlas mcp` over stdio, as an assistant starts it."""
    import anyio
    from mcp import Client
    from test_mcp import stdio

    cli_json = json.loads(run("--db", corl, "report", "--venue", "CoRL", "--years", "2024-2025", "--json"))

    async def main() -> None:
        async with Client(stdio(Path(corl)), read_timeout_seconds=300) as c:
            r = await c.call_tool("report", {"venue": "CoRL", "years": "2024-2025"})
            s = r.structured_content
            assert s["papers"] == cli_json["papers"] and s["trends"]["themes"][0]["counts"] == {
                k: v for k, v in cli_json["trends"]["themes"][0]["counts"].items()
            }
            assert [t["papers"] for t in s["themes"]] == [t["papers"] for t in cli_json["themes"]]
            assert "ids" not in s["themes"][0] and "titles" not in s
            assert "# CoRL 2024–2025" in r.content[0].text
            r = await c.call_tool("search", {"query": "robot", "institution": "stanford", "type": "oral", "limit": 50})
            got = {h["id"] for h in r.structured_content["hits"]}
            assert got and got <= _raw_ids(
                lambda x: "Stanford University" in x["aff_unique_norm"] and x["status"] == "Oral"
            )

    anyio.run(main)


def test_author_page_lists_the_institutions_their_papers_give(web) -> None:  # type: ignore[no-untyped-def]
    name = "Pieter Abbeel"
    want: Counter[str] = Counter()
    for _, r in RAW.values():
        authors, aff = r["author"].split(";"), r["aff"].split(";")
        if name in authors and aff[authors.index(name)]:
            want[aff[authors.index(name)]] += 1
    prof = web.get(f"/author/{name}.json").json()
    assert sum(i["papers"] for i in prof["institutions"]) >= sum(want.values()) > 0
    assert "affiliations" in web.get(f"/author/{name}?lang=en").text


def test_eval_report_recounts_the_trends_from_the_raw_files(corl: str) -> None:
    args = ["eval", "report", "--db", corl, "--venue", "CoRL"]
    for f in FILES:
        args += ["--raw", str(f)]
    out = json.loads(run(*args))["trends_vs_raw"]
    assert out["count_disagreements"] == [] and out["year_total_disagreements"] == []
    assert out["raw_records_not_in_a_theme"] == 0 and out["papers_per_year"] == {str(y): 24 for y in range(2021, 2026)}
    r = CliRunner().invoke(cli, ["eval", "report", "--db", corl, "--areas", "CoRL", "2024"])
    assert r.exit_code != 0 and "primary_area" in r.output  # CoRL records carry no primary area


# -- written theme summaries (the LLM layer) -------------------------------------------------------
def test_parse_theme_summary_keeps_only_citations_of_papers_shown() -> None:
    from paperatlas.report.summaries import parse

    got = parse("Label: Robot grasping\nSummary: Papers learn grasps from touch [1][3], not [7].", ["a", "b", "c"])
    assert got == {
        "label": "Robot grasping",
        "text": "Papers learn grasps from touch , not .",
        "cites": ["a", "c"],
        "dropped_citations": 1,
    }
    zh = parse("标签：机器人抓取\n摘要：这些论文研究触觉抓取 [2]。", ["a", "b"])
    assert zh is not None and zh["label"] == "机器人抓取" and zh["cites"] == ["b"]
    assert parse("   ", ["a"]) is None
    # an answer out of format: its first line is the label, the rest the sentence
    assert parse("Grasping\nwith touch [1]", ["a"]) == {
        "label": "Grasping",
        "text": "with touch",
        "cites": ["a"],
        "dropped_citations": 0,
    }


def _copy_db(db: str, to: Path) -> str:
    """A copy of the module's library (its WAL included), for a test that writes to it."""
    import sqlite3

    src, dst = sqlite3.connect(db), sqlite3.connect(to)
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    return str(to)


def _two_themes(corl: str, to: Path) -> str:
    """A copy of the module's library with two coarse themes: four model requests per report, not ~20."""
    db = _copy_db(corl, to)
    with Library(db) as lib:
        lib.topics.build(seed=0, k=2)
    return db


@pytest.mark.slow
@pytest.mark.skipif(
    __import__("os").environ.get("PAPERATLAS_REQUIRE_LLM") != "1",
    reason="4 model requests: runs where the LLM layer is required (CI, PAPERATLAS_REQUIRE_LLM=1)",
)
def test_theme_summaries_from_the_model_server_are_grounded_cached_and_optional(
    corl: str, llm_proxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real llama.cpp server (the Gemma 270M fixture): the protocol is checked, never its prose,
    which loops and echoes; an answer it writes with no usable label is kept, counted and said."""
    from paperatlas.report import summaries

    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("PAPERATLAS_LLM_MAX_TOKENS", "16")
    # a shorter prompt (3 papers, 200 characters each): prompt reading is what costs on 2 busy cores
    monkeypatch.setattr(summaries, "PAPERS_SHOWN", 3)
    monkeypatch.setattr(summaries, "ABSTRACT_CHARS", 200)
    db = _two_themes(corl, tmp_path / "llm.db")
    args = ["--db", db, "report", "--venue", "CoRL", "--year", "2025"]
    # no endpoint: complete, nothing sent, and it says so
    bare = json.loads(run(*args, "--json"))
    assert all("summary" not in t for t in bare["themes"]) and len(bare["themes"]) == 2
    assert any("no language-model endpoint" in n and "c-TF-IDF" in n for n in bare["notes"])
    # the Chinese report says it in Chinese (the JSON stays English)
    assert "未配置语言模型端点" in run(*args, "--lang", "zh") and not llm_proxy.seen
    monkeypatch.setenv("PAPERATLAS_LLM_URL", llm_proxy.url)
    rep = json.loads(run(*args, "--json"))
    sent = llm_proxy.chat_requests()
    assert len(sent) == 2 * len(rep["themes"])  # one per theme and language
    prompts = [json.loads(s["body"])["messages"][-1]["content"] for s in sent]
    with Library(db) as lib:
        for t, (en, zh) in zip(rep["themes"], zip(prompts[::2], prompts[1::2])):
            shown = t["central"][:3]
            assert "In English," in en and "In Simplified Chinese," in zh
            for n, pid in enumerate(shown, 1):  # grounded: the prompt carries the theme's central papers, numbered
                assert f"[{n}] {lib.get(pid).title}" in en
            for lang, s in (t.get("summary") or {}).items():
                assert lang in ("en", "zh") and re.search(r"[^\W\d_]", s["label"]) and s["model"]
                assert set(s["cites"]) <= set(shown)
    # every answer is either shown or counted as unusable (the fixture's prose decides which, not the test)
    written = sum(len(t.get("summary") or {}) for t in rep["themes"])
    # unusable: no label, or a Chinese summary the fixture wrote in English (never shown as Chinese)
    unusable = [int(n.split()[0]) for n in rep["notes"] if "no usable label" in n or "came back in English" in n]
    assert all(
        is_chinese(f"{t['summary']['zh']['label']} {t['summary']['zh']['text']}")
        for t in rep["themes"]
        if "zh" in (t.get("summary") or {})
    )
    assert written + sum(unusable) == len(sent), rep["notes"]
    assert not any("no language-model endpoint" in n for n in rep["notes"])
    # a second report sends nothing (not even the model list): unusable answers are cached too
    seen = len(llm_proxy.seen)
    again = json.loads(run(*args, "--json"))
    assert len(llm_proxy.seen) == seen and again["themes"] == rep["themes"]
    monkeypatch.delenv("PAPERATLAS_LLM_URL")
    cached = json.loads(run(*args, "--summaries", "cached", "--json"))
    assert [x.get("summary") for x in cached["themes"]] == [x.get("summary") for x in rep["themes"]]
    assert all("summary" not in x for x in json.loads(run(*args, "--summaries", "off", "--json"))["themes"])
    # an endpoint that refuses (the model list is the first request): complete, names what failed, stops asking
    fresh = _two_themes(corl, tmp_path / "fresh.db")  # the same themes, nothing cached
    monkeypatch.setenv("PAPERATLAS_LLM_URL", llm_proxy.url)
    llm_proxy.faults = ["401"]
    failed = json.loads(run("--db", fresh, "report", "--venue", "CoRL", "--year", "2025", "--json"))
    assert sum(x["papers"] for x in failed["themes"]) == sum(x["papers"] for x in bare["themes"])
    assert any("language model failed" in n and "HTTP 401" in n for n in failed["notes"])
    assert all("summary" not in x for x in failed["themes"])
    assert len(llm_proxy.seen) == seen + 1  # one refused request, then nothing more


def test_theme_summaries_are_rendered_with_their_model_and_cited_papers(corl: str) -> None:
    """Markdown and HTML show a written label beside the key phrases, its sentence, the papers it cites
    and the model that wrote it (a summary set by hand: what the renderers do with one)."""
    from paperatlas.report.render import render_html, render_markdown

    with Library(corl) as lib:
        rep = lib.report.build("CoRL", [2025], summaries="off")
        t = rep.themes[0]
        pid = t["central"][0]
        t["summary"] = {"en": {"label": "Robots that grasp", "text": "They grasp.", "cites": [pid], "model": "m-1"}}
        md, page = render_markdown(rep, "en"), render_html(rep, "en")
        title = lib.get(pid).title
    line = next(ln for ln in md.splitlines() if "Robots that grasp" in ln)
    assert f"({t['label']})" in line and "They grasp." in line and f"`{pid}`" in line and "written by m-1" in line
    assert "Robots that grasp" in page and "written by m-1" in page and title in page


@pytest.mark.slow
def test_bench_report_runs_on_the_recorded_years_and_counts_what_it_built(tmp_path: Path) -> None:
    """`paperatlas bench report` end to end on the 120 recorded papers (one repeat): the figures it
    prints are of the library it built (the timings themselves are the bench's, not checked here)."""
    r = CliRunner().invoke(
        cli, ["bench", "report", *map(str, FILES), "--workdir", str(tmp_path), "--repeats", "1", "--json"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output[r.output.index("{") :])
    assert out["papers"] == len(RAW) and out["years"] == list(range(2021, 2026))
    assert out["largest_group"]["papers"] == 24 and out["largest_group"]["venue"] == "CoRL"
    assert out["themes"] >= 2 and out["html_bytes"] > 0 and {"ingest_s", "embed_s", "topics_s"} <= set(out["setup"])


def test_bar_charts_have_a_phone_layout_that_fits_390_px() -> None:
    """The wide chart scrolls sideways on a phone (its numbers cut at the screen's edge); the narrow one,
    shown under 600 px, puts each label above its bar and every number inside its 360 units."""
    from paperatlas.report.charts import NARROW_W, Bar, hbars
    from paperatlas.report.render import asset

    bars = [
        Bar("University of California, Berkeley and a long name", 120, "#a", "120 · 20.8%"),
        Bar("b", 3, "#b", "3 · 0.5%"),
    ]
    svg = str(hbars(bars, "Institutions"))
    narrow = svg[svg.index('class="chart narrow"') :]
    for x, text in re.findall(r'<text x="([\d.]+)"[^>]*class="num">([^<]+)<', narrow):
        assert float(x) + 7.5 * len(text) <= NARROW_W, (x, text)
    assert narrow.count('href="#a"') == 1 and narrow.count('href="#b"') == 1
    assert re.search(r"@media \(max-width:600px\)\{[^}]*svg\.chart\.wide\{display:none\}", asset("report.css"))


def test_chinese_report_reads_theme_labels_through_the_glossary(web) -> None:  # type: ignore[no-untyped-def]
    """On the Chinese page a theme label's known phrases read in Chinese (reinforcement learning ->
    强化学习); the English page and the API keep the labels as the topic model wrote them."""
    from bs4 import BeautifulSoup

    from paperatlas.search.glossary import chinese_label

    rep = web.get("/report.json?venue=CoRL&year=2021-2025").json()
    known = [t for t in rep["themes"] if chinese_label(t["label"]) != t["label"]]
    assert known, [t["label"] for t in rep["themes"]]
    zh = BeautifulSoup(web.get("/report?venue=CoRL&year=2021-2025&lang=zh").text, "html.parser")
    en = BeautifulSoup(web.get("/report?venue=CoRL&year=2021-2025&lang=en").text, "html.parser")
    for t in known:
        assert chinese_label(t["label"]) in zh.select_one(f"#theme-{t['topic']} summary").text
        assert t["label"] in en.select_one(f"#theme-{t['topic']} summary").text
    assert any(chinese_label(t["label"]) in zh.select_one("svg").text for t in known)  # the chart's bars
    md = web.get("/report/export?venue=CoRL&year=2021-2025&format=markdown&lang=zh").text
    assert chinese_label(known[0]["label"]) in md


def test_chinese_map_labels_topics_through_the_glossary(web) -> None:  # type: ignore[no-untyped-def]
    en = web.get("/map.json?lang=en").json()["topics"]
    zh = web.get("/map.json?lang=zh").json()["topics"]
    assert [t["label"] for t in zh["coarse"]] != [t["label"] for t in en["coarse"]]
    for a, b in zip(en["coarse"] + en["fine"], zh["coarse"] + zh["fine"]):
        assert b["label_en"] == a["label"] and b["phrases_en"] == a["phrases"] and "label_en" not in a
    assert any("强化学习" in t["label"] for t in zh["coarse"])


def test_chinese_paper_page_without_a_model_says_how_to_get_translations(web) -> None:  # type: ignore[no-untyped-def]
    from bs4 import BeautifulSoup

    zh = BeautifulSoup(web.get("/paper/69y5fzvaAT?lang=zh").text, "html.parser")
    hint = zh.select_one(".llm-hint")
    assert hint is not None and "make llm" in hint.text and "机器翻译" in hint.text
    assert web.get("/paper/69y5fzvaAT?lang=en").text.count("llm-hint") == 0


def test_the_report_page_renders_its_body_once_per_report_and_language(corl: str, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from starlette.testclient import TestClient

    from paperatlas.web import create_app, report_views

    db = tmp_path / "corl.db"
    shutil.copyfile(corl, db)
    renders: list[str] = []
    real = report_views.body_html
    monkeypatch.setattr(
        report_views, "body_html", lambda rep, lang, **kw: renders.append(lang) or real(rep, lang, **kw)
    )
    with Library(db, embedder="hashing") as lib, TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
        first = c.get("/report?venue=CoRL").text
        assert c.get("/report?venue=CoRL").text.count("<li") == first.count("<li")
        c.get("/report?venue=CoRL&lang=zh")
        assert renders == ["en", "zh"]
        # the library changes: the page is the new report's, rendered again
        extra = tmp_path / "more.jsonl"
        extra.write_text(
            json.dumps(
                {
                    "id": "corl-new",
                    "title": "A new grasping paper",
                    "abstract": "Robots grasp.",
                    "venue": "CoRL",
                    "year": 2025,
                }
            )
            + "\n",
            encoding="utf-8",
        )
        lib.ingest([extra])
        after = c.get("/report?venue=CoRL&lang=en").text
        assert renders == ["en", "zh", "en"]
        assert "A new grasping paper" in after and "A new grasping paper" not in first


def test_the_figures_are_kept_for_the_next_process_until_the_papers_topics_or_vectors_change(
    tmp_path: Path,
) -> None:
    """A new process (the CLI's `report`, a restarted server) reads the figures back from the library's
    index folder instead of counting every paper again: the same report, its notes still translatable;
    an edited paper, a scope asked for, rebuilt topics each give fresh figures, never the kept ones."""
    db = str(tmp_path / "corl.db")
    with Library(db, embedder="hashing") as lib:
        lib.ingest(FILES[:2])
        lib.embed()
        lib.topics.build(seed=0)
        lib.ingest(FILES[2:3])  # papers added after the topic build: a note with numbers in it
        first = lib.report.build(summaries="off")
        assert first.notes and (lib.engine.index_folder("report") or tmp_path).is_dir()
    with Library(db, embedder="hashing") as lib:  # the next process: the kept figures, not the papers
        counted: list[object] = []
        real = lib.report.papers_in
        lib.report.papers_in = lambda *a: counted.append(a) or real(*a)  # type: ignore[method-assign]
        kept = lib.report.build(summaries="off")
        assert kept.to_dict() == first.to_dict() and not counted
        assert [n.translated("zh") for n in kept.notes] == [n.translated("zh") for n in first.notes]  # type: ignore[attr-defined]
        assert kept.notes[0].translated("zh") != kept.notes[0]  # type: ignore[attr-defined]
        # one paper's status edited within the same second: the key is every paper's content
        year = int(FILES[0].stem[-4:])
        raw = next(r for y, r in RAW.values() if y == year and r["status"] != "Oral")
        edited = tmp_path / FILES[0].name
        edited.write_text(json.dumps([{**raw, "status": "Oral"}]), encoding="utf-8")
        assert lib.ingest([edited]).updated == 1
        fresh = lib.report.build(summaries="off")
        assert counted and fresh.types != first.types
        only = lib.report.build(years=str(year), summaries="off")
        assert only.papers < fresh.papers
        lib.topics.build(seed=0, k=3)  # within the same second, as likely as not
        assert len(lib.report.build(summaries="off").themes) == 3
