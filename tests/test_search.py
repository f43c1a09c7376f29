"""Search with the hashing embedder: query safety (fuzzed), phrases, filters, snippets, modes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperatlas import Library
from paperatlas.errors import PaperatlasError
from paperatlas.search.engine import MODES, SearchSettings
from paperatlas.search.query import MAX_TERMS, fts5_match, parse, phrase_filter
from paperatlas.search.snippets import highlight
from paperatlas.store.vector_cache import VectorCache

from conftest import EXAMPLES

PAPERS = [
    {
        "id": "p1",
        "title": "Graph neural networks for molecule property prediction",
        "abstract": "We predict molecular properties with message passing graph networks.",
        "venue": "NeurIPS",
        "year": 2023,
        "status": "Oral",
    },
    {
        "id": "p2",
        "title": "Diffusion models for protein design",
        "abstract": "A denoising diffusion model generates protein backbones; graph networks score them.",
        "venue": "ICLR",
        "year": 2024,
        "status": "Poster",
    },
    {
        "id": "p3",
        "title": "Scaling laws for language models",
        "abstract": "Loss falls as a power law in parameters, data and compute.",
        "venue": "NeurIPS",
        "year": 2024,
        "status": "Spotlight",
    },
    {
        "id": "p4",
        "title": "Unsafe <script>alert('x')</script> & friends",
        "abstract": "An abstract with <b>markup</b> & ampersands about networks of graph neural models.",
        "venue": "ICML",
        "year": 2024,
        "status": "Poster",
    },
]


def _make(path: Path, keyword_index: str = "bm25s") -> Library:
    f = path.parent / "papers.jsonl"
    f.write_text("\n".join(json.dumps(p) for p in PAPERS), encoding="utf-8")
    lib = Library(
        path,
        embedder="hashing",
        search_settings=SearchSettings(keyword_index=keyword_index),
        vector_cache=VectorCache(path.parent / "vectors.sqlite"),
    )
    lib.ingest([f, *EXAMPLES])
    lib.embed()
    return lib


@pytest.fixture(scope="module", params=["bm25", "bm25s", "fts5"])
def lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Library:
    lib = _make(tmp_path_factory.mktemp(request.param) / "lib.db", request.param)
    yield lib
    lib.close()


# -- query parsing ----------------------------------------------------------------------
def test_parse_treats_operators_and_symbols_as_words() -> None:
    q = parse('graph AND (neural OR "message passing" NEAR/3 mol* -x')
    assert q.terms == ["graph", "and", "neural", "or", "message", "passing", "near", "3", "mol", "x"]
    assert q.phrases == [["message", "passing"]]
    assert parse('"unbalanced quote graph').phrases == []
    assert parse('"one"').phrases == []  # a one-word phrase is just a word
    assert parse("").empty and parse('  ()*"" ').empty and parse("\x00").empty


def test_parse_bounds_long_input() -> None:
    q = parse(" ".join(f"w{i}" for i in range(5000)))
    assert len(q.terms) == MAX_TERMS
    assert len(parse("a" * 50_000).text) == 10_000


def test_fts5_match_quotes_every_term() -> None:
    m = fts5_match(parse('a" OR b) NEAR(c*'))
    assert m == '"a" OR "or" OR "b" OR "near" OR "c"'


def test_phrase_filter_is_word_sequence() -> None:
    q = parse('"graph neural" networks')
    assert phrase_filter(q, "Graph  Neural networks")
    assert not phrase_filter(q, "graph of neural networks")
    assert not phrase_filter(q, "subgraph neuralnet")
    assert phrase_filter(parse("no phrase"), "anything")


# -- safety: anything a user types -------------------------------------------------------
NASTY = [
    '"',
    '""',
    "'",
    "(",
    ")",
    "((",
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR/2",
    "*",
    "^",
    "-",
    ":",
    "title:",
    "{",
    "}",
    "[",
    "]",
    "\\",
    "\x00",
    "🧬",
    "👩‍🔬",
    "ﬁ",
    "ß",
    "İ",
    "\u200b",
    "\ufeff",
    "graph",
    "neural",
    "simulators",
    "%",
    "_",
    ";",
    "--",
    "/*",
    "NULL",
    "\n",
    "\t",
]

query_text = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(NASTY), max_size=30).map(" ".join),
    st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=5)), max_size=20).map("".join),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=query_text, mode=st.sampled_from(MODES), offset=st.integers(0, 30))
def test_fuzz_search_never_raises(lib: Library, text: str, mode: str, offset: int) -> None:
    hits = lib.search(text, mode=mode, limit=5, offset=offset)
    assert len(hits) <= 5
    for h in hits:
        assert "<script" not in h.snippet.html()


@pytest.mark.parametrize(
    "text",
    [
        "x" * 10_000,
        ("graph " * 2000)[:10_000],
        "🧬" * 3000,
        '"' * 999,
        "(" * 500 + "graph",
        "graph\x00neural",
        "AND OR NOT NEAR",
        '"graph neural" AND "',
        "*",
        "NEAR(graph neural, 2)",
        "title:graph",
        "'; DROP TABLE papers; --",
        " ".join(["a"] * 10_000),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_hostile_queries(lib: Library, text: str, mode: str) -> None:
    hits = lib.search(text, mode=mode, limit=10, venue="NeurIPS", exclude=["p1"])
    assert all(h.paper.venue == "NeurIPS" and h.paper.id != "p1" for h in hits)


# -- ranking, phrases, filters -----------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_finds_the_obvious_paper(lib: Library, mode: str) -> None:
    assert lib.search("diffusion protein design", mode=mode, limit=3)[0].paper.id == "p2"


def test_hybrid_ranks_record_both_lists(lib: Library) -> None:
    hit = lib.search("graph neural networks molecule", mode="hybrid", limit=1)[0]
    assert hit.paper.id == "p1"
    assert set(hit.ranks) == {"keyword", "semantic"}


def test_phrase_search(lib: Library) -> None:
    ids = [h.paper.id for h in lib.search('"graph networks"', mode="keyword")]
    assert sorted(ids) == ["p1", "p2"]  # both say "graph networks" in that order
    ids = [h.paper.id for h in lib.search('"graph neural"', mode="hybrid")]
    assert sorted(ids) == ["p1", "p4"]  # p2 has both words, not as a phrase
    assert lib.search('"neural graph"', mode="semantic") == [] or all(
        phrase_filter(parse('"neural graph"'), h.paper.title + " " + h.paper.abstract)
        for h in lib.search('"neural graph"', mode="semantic")
    )
    assert lib.search('"controllable user simulators"', limit=3)[0].paper.venue == "NeurIPS"


@pytest.mark.parametrize("mode", MODES)
def test_filters(lib: Library, mode: str) -> None:
    q = "graph networks"
    assert {h.paper.venue for h in lib.search(q, mode=mode, venue="neurips", limit=50)} == {"NeurIPS"}
    assert {h.paper.year for h in lib.search(q, mode=mode, year=2024, limit=50)} == {2024}
    assert [h.paper.id for h in lib.search(q, mode=mode, status="oral", limit=50)] == ["p1"]
    assert lib.search(q, mode=mode, venue="NeurIPS", year=2023, status="Poster") == []
    ids = [h.paper.id for h in lib.search(q, mode=mode, limit=50)]
    kept = [h.paper.id for h in lib.search(q, mode=mode, limit=50, exclude=["p1", "p2"])]
    assert "p1" in ids and "p2" in ids
    # the library is smaller than the limit: exclusion removes exactly those two
    assert set(kept) == set(ids) - {"p1", "p2"}
    assert lib.search(q, mode=mode, venue="No Such Venue") == []


@pytest.mark.parametrize("mode", MODES)
def test_pages_are_slices_of_one_ranking(lib: Library, mode: str) -> None:
    full = [h.paper.id for h in lib.search("graph model learning", mode=mode, limit=12)]
    page = [h.paper.id for h in lib.search("graph model learning", mode=mode, limit=4, offset=4)]
    assert page == full[4:8]


def test_unknown_mode_and_empty_query(lib: Library) -> None:
    with pytest.raises(PaperatlasError, match="use one of"):
        lib.search("graph", mode="fuzzy")
    assert lib.search("", mode="hybrid") == [] and lib.search("   ", mode="semantic") == []


def test_semantic_needs_embeddings_but_hybrid_falls_back(tmp_path: Path) -> None:
    lib = Library(tmp_path / "x.db", embedder="hashing")
    lib.ingest(EXAMPLES)
    with pytest.raises(PaperatlasError) as e:
        lib.search("user simulators", mode="semantic")
    assert "paperatlas embed" in e.value.fix
    hits = lib.search("user simulators", mode="hybrid")
    assert hits and all(set(h.ranks) == {"keyword"} for h in hits)
    lib.close()


def test_index_follows_library_changes(tmp_path: Path) -> None:
    lib = _make(tmp_path / "c.db")
    assert lib.search("zebrafish", mode="keyword") == []
    f = tmp_path / "more.jsonl"
    f.write_text(json.dumps({"id": "z1", "title": "Zebrafish fin regrowth", "abstract": "Fins regrow."}))
    lib.ingest(f)
    assert [h.paper.id for h in lib.search("zebrafish", mode="keyword")] == ["z1"]
    lib.embed()
    assert lib.search("zebrafish fin regrowth", mode="semantic", limit=1)[0].paper.id == "z1"
    lib.close()


def test_similar_excludes_the_paper_itself(lib: Library) -> None:
    hits = lib.similar("p1", limit=3)
    assert hits and all(h.paper.id != "p1" for h in hits)
    assert hits[0].score >= hits[-1].score


# -- snippets ----------------------------------------------------------------------------
def test_snippet_escapes_html_and_marks_stems() -> None:
    s = highlight("Simulators <b>simulate</b> & a simulator's world.", ["simulators"], whole=True)
    assert "<b>" not in s and "&lt;b&gt;" in s and "&amp;" in s
    # stems match: simulators / simulate / simulator all stem to "simul"
    assert s.count("<mark>") == 3 and "<mark>Simulators</mark>" in s and "<mark>simulator</mark>&#x27;s" in s
    assert highlight("a <mark> tag", ["mark"], whole=True) == "a &lt;<mark>mark</mark>&gt; tag"


def test_snippet_window_centres_on_matches() -> None:
    text = "filler " * 100 + "the rare zebrafish term " + "padding " * 100
    s = highlight(text, ["zebrafish"], width=120)
    assert "<mark>zebrafish</mark>" in s and s.startswith("… ") and s.endswith(" …")
    assert len(s) < 200
    assert highlight("no match here", ["zebrafish"]) == "no match here"


def test_search_snippets_are_safe_html(lib: Library) -> None:
    hits = lib.search("markup ampersands graph", mode="keyword", limit=5)
    h = next(h for h in hits if h.paper.id == "p4")
    assert "&lt;b&gt;" in h.snippet.html() and "<b>" not in h.snippet.html() and "<mark>" in h.snippet.html()


@pytest.mark.parametrize("index", ["bm25", "bm25s", "fts5"])
def test_a_papers_keywords_are_keyword_searchable(tmp_path: Path, index: str) -> None:
    """Authors' keywords name what a paper is about in words its abstract may not use."""
    src = tmp_path / "k.jsonl"
    rows = [
        {
            "id": "a",
            "title": "Stable training of deep nets",
            "abstract": "We rescale gradients per layer.",
            "keywords": ["optimisation", "normalisation"],
        },
        {"id": "b", "title": "Counting birds from audio", "abstract": "Recordings of forest birdsong are tagged."},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with Library(tmp_path / "k.db", embedder="hashing", search_settings=SearchSettings(keyword_index=index)) as lib:
        lib.ingest([src])
        assert [h.paper.id for h in lib.search("normalisation", "keyword")] == ["a"]
        if index != "fts5":  # fts5 reads the store's own full-text table, which always holds keywords
            lib.engine.settings.index_keywords = False
            lib.engine.indexes._kw = None
            assert not lib.search("normalisation", "keyword")


def test_a_hybrid_score_does_not_change_with_how_deep_the_lists_go(tmp_path: Path) -> None:
    lib = _make(tmp_path / "lib.db", "bm25")
    try:
        lib.engine.settings.depth = 3  # so a 12-hit page fetches deeper lists than a 3-hit one

        def top3(limit: int) -> list[tuple[str, float]]:
            return [(h.paper.id, round(h.score, 6)) for h in lib.search("graph model learning", limit=limit)][:3]

        assert top3(3) == top3(12)
        # min-max scales each list by its weakest candidate, so the same papers score differently
        lib.engine.settings.norm = "minmax"
        assert top3(3) != top3(12)
    finally:
        lib.close()


def test_a_snippet_is_text_and_spans_each_surface_writes_its_way() -> None:
    from paperatlas.search.snippets import snippet

    text = "We adapt <b>protein</b> language models with low-rank adapters; proteins fold. " + "filler " * 60
    s = snippet(text, ["protein", "adapters"], width=120)
    marked = [s.text[a:b] for a, b in s.marks]
    assert marked == ["adapt", "protein", "adapters", "proteins"]  # by stem
    assert s.html().count("<mark>") == 4 and "&lt;b&gt;" in s.html()  # HTML only where a page asks for it
    assert s.text.endswith(" …") and "<mark>" not in s.text
    assert s.to_dict() == {"text": s.text, "marks": [list(m) for m in s.marks]}
    far = snippet("filler " * 80 + "a protein at the end", ["protein"], width=60)
    ((a, b),) = far.marks
    assert far.text.startswith("… ") and far.text[a:b] == "protein"
