"""Topics: phrases, labels, clustering, layout, the stored model, related reasons, CLI and map HTML.

Fast: a synthetic five-theme library with the hashing embedder (deterministic, instant),
plus label checks on real ICLR abstracts when the shared data is present.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import VENUE_PAPERS, need
from paperatlas import Library, Paper
from paperatlas.cli import cli
from paperatlas.topics import related_reason
from paperatlas.topics.cluster import auto_kmeans, candidate_ks, kmeans, relabel, split_fine
from paperatlas.topics.labels import label_classes, paper_phrases, phrase_matrix
from paperatlas.topics.layout import NeighborGraph, NeighborLayout, knn, neighbor_preservation
from paperatlas.topics.map import render_map_html
from paperatlas.topics.phrases import candidate_keys, is_label_worthy, pick_diverse, runs, surface_forms
from paperatlas.topics.pipeline import TopicPipeline

BANNED = (
    "we propose",
    "in this paper",
    "state of the art",
    "state-of-the-art",
    "results show",
    "this work",
    "propose",
    "paper",
    "novel",
    "experiments",
    "demonstrate",
    "outperform",
    "existing",
)

THEMES = {
    "diffusion": [
        "diffusion models",
        "image generation",
        "denoising score matching",
        "text-to-image synthesis",
        "latent diffusion",
        "classifier-free guidance",
    ],
    "rl": [
        "reinforcement learning",
        "policy gradient",
        "reward shaping",
        "offline reinforcement learning",
        "exploration bonus",
        "Markov decision processes",
    ],
    "graphs": [
        "graph neural networks",
        "message passing",
        "node classification",
        "graph transformers",
        "oversmoothing",
        "molecular graphs",
    ],
    "llm": [
        "large language models",
        "instruction tuning",
        "chain-of-thought prompting",
        "in-context learning",
        "LLMs",
        "hallucination detection",
    ],
    "privacy": [
        "differential privacy",
        "federated learning",
        "membership inference attacks",
        "private training",
        "secure aggregation",
        "client heterogeneity",
    ],
}
BOILERPLATE = [
    "In this paper, we propose a novel method.",
    "Experimental results show that our approach achieves state-of-the-art performance.",
    "Extensive experiments demonstrate the effectiveness of this work.",
    "We propose a simple and efficient framework.",
    "Code is available.",
]


def synthetic_papers(per_theme: int = 24, seed: int = 0) -> list[dict]:
    """Abstracts that mix one theme's phrases with shared boilerplate."""
    rng = np.random.default_rng(seed)
    out = []
    for theme, phrases in THEMES.items():
        for i in range(per_theme):
            picks = rng.choice(phrases, size=4, replace=False)
            body = " ".join(f"We study {p} and its relation to {q}." for p, q in zip(picks[:2], picks[2:]))
            boiler = " ".join(rng.choice(BOILERPLATE, size=2, replace=False))
            out.append(
                {
                    "id": f"{theme}/{i}",
                    "title": f"On {picks[0]} with {picks[1]}",
                    "abstract": f"{boiler} {body} Finally, {picks[0]} again.",
                    "venue": "SynthConf" if i % 2 else "OtherConf",
                    "year": 2024 + i % 2,
                    "theme": theme,
                }
            )
    return out


@pytest.fixture(scope="module")
def synth_lib(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("topics")
    src = tmp / "papers.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in synthetic_papers()), encoding="utf-8")
    lib = Library(tmp / "lib.db", embedder="hashing")
    lib.ingest([src])
    lib.embed()
    model = lib.topics.build(seed=0)
    yield lib, model
    lib.close()


def label_text(labels: list[str]) -> str:
    return " | ".join(labels).lower()


# -- phrases --------------------------------------------------------------------------------
def test_phrases_break_at_boilerplate() -> None:
    text = (
        "In this paper, we propose a novel diffusion model for protein structure prediction. "
        "State-of-the-art results show that our method outperforms existing work."
    )
    keys = set(candidate_keys(text))
    assert "diffusion model" in keys and "protein structure prediction" in keys
    for bad in (
        "we propose",
        "in this paper",
        "state of the art",
        "state-of-the-art",
        "results show",
        "propose",
        "paper",
        "method",
        "novel diffusion",
    ):
        assert bad not in keys, bad
    assert runs("Large Language Models (LLMs) and GFlowNets.") == [
        ["Large", "Language", "Models"],
        ["LLMs"],
        ["GFlowNets"],
    ]


def test_surface_forms_keep_acronyms_and_lowercase_words() -> None:
    texts = ["Large Language Models are here. We study large language models.", "LLMs and LLMs again. LLMs."]
    forms = surface_forms(texts, {"large language model", "llm"})
    assert forms == {"large language model": "large language models", "llm": "LLMs"}


def test_pick_diverse_prefers_the_longer_phrase_and_skips_repeats() -> None:
    ranked = [
        ("diffusion", 3.0),
        ("model", 2.9),
        ("diffusion model", 2.5),
        ("image", 2.0),
        ("llm", 1.9),
        ("large language model", 1.8),
        ("text", 1.0),
    ]
    counts = {"diffusion": 10, "diffusion model": 8, "image": 5, "llm": 4, "large language model": 4, "text": 2}
    got = pick_diverse(ranked, 3, counts)
    assert got[0] == "diffusion model"  # upgraded from "diffusion"
    assert "model" not in got  # too vague on its own
    assert not ({"llm", "large language model"} <= set(got))  # an acronym and its expansion never both
    assert not is_label_worthy("neural network") and is_label_worthy("graph neural network")


# -- labels ------------------------------------------------------------------------------------
def test_class_tfidf_labels_name_each_theme() -> None:
    rows = synthetic_papers()
    texts = [r["title"] + ". " + r["abstract"] for r in rows]
    themes = list(THEMES)
    y = np.array([themes.index(r["theme"]) for r in rows])
    labels = label_classes(phrase_matrix(texts), texts, y, len(themes))
    for theme, lab in zip(themes, labels):
        assert 2 <= len(lab.phrases) <= 4, lab
        assert set(p.lower() for p in lab.phrases) & set(p.lower() for p in THEMES[theme]), (theme, lab.phrases)
        assert not any(b in label_text(lab.phrases) for b in BANNED), lab.phrases


def test_labels_of_real_iclr_areas_are_readable_and_clean() -> None:
    path = need(VENUE_PAPERS)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [r for r in map(json.loads, f) if r.get("primary_area")]
    areas = sorted({r["primary_area"] for r in rows})
    texts = [r["title"] + ". " + r["abstract"] for r in rows]
    y = np.array([areas.index(r["primary_area"]) for r in rows])
    pm = phrase_matrix(texts, min_df=3)
    labels = dict(zip(areas, label_classes(pm, texts, y, len(areas))))
    for area, lab in labels.items():
        assert 2 <= len(lab.phrases) <= 4, (area, lab.phrases)
        text = label_text(lab.phrases)
        assert not any(re.search(rf"\b{re.escape(b)}\b", text) for b in BANNED), (area, lab.phrases)
    assert "reinforcement learning" in label_text(labels["reinforcement learning"].phrases)
    assert "causal" in label_text(labels["causal reasoning"].phrases)
    assert "optimization" in label_text(labels["optimization"].phrases)
    own = paper_phrases(pm)
    assert all(len(p) <= 5 for p in own) and sum(map(len, own)) > 3 * len(own)


# -- clustering and layout -----------------------------------------------------------------------
def blobs(n_per: int = 60, k: int = 4, d: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d)) * 6
    y = np.repeat(np.arange(k), n_per)
    return (centers[y] + rng.normal(size=(len(y), d))).astype(np.float32), y


def test_kmeans_is_seeded_and_silhouette_finds_k() -> None:
    x, y = blobs()
    assert np.array_equal(kmeans(x, 4, seed=3), kmeans(x, 4, seed=3))
    cl = auto_kmeans(x, candidate_ks(len(x), 2, 10), seed=0)
    assert cl.k == 4 and set(cl.scores) >= {2, 4, 10}
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, cl.labels) > 0.99
    assert np.bincount(cl.labels).tolist() == sorted(np.bincount(cl.labels).tolist(), reverse=True)
    assert relabel(np.array([5, 5, 2, 7, 7, 7])).tolist() == [1, 1, 2, 0, 0, 0]
    fine, parents = split_fine(x, cl.labels, seed=0, k_max=4)
    assert len(parents) == fine.max() + 1 and all(parents[f] == c for f, c in zip(fine, cl.labels))


def test_knn_is_exact_and_layout_keeps_neighbours() -> None:
    x, _ = blobs(n_per=50, k=5, d=16)
    idx, dist = knn(x, 5, block=37)
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    assert np.array_equal(np.sort(idx, axis=1), np.sort(np.argsort(d2, axis=1)[:, :5], axis=1))
    y1 = NeighborLayout(seed=1, n_epochs=150).fit_transform(x)
    y2 = NeighborLayout(seed=1, n_epochs=150).fit_transform(x)
    assert y1.shape == (250, 2) and np.array_equal(y1, y2)
    chance = 10 / 250
    assert neighbor_preservation(x, y1, k=10) > 5 * chance
    z = NeighborGraph.build(x, 10).embed(dims=5, min_dist=0.0, n_epochs=100)
    assert z.shape == (250, 5) and np.isfinite(z).all()


def test_pipeline_recovers_themes_and_is_deterministic() -> None:
    rows = synthetic_papers()
    texts = [r["title"] + ". " + r["abstract"] for r in rows]
    from paperatlas.embed.hashing import HashingEmbedder

    x = HashingEmbedder(256).embed(texts)
    ids = [r["id"] for r in rows]
    a = TopicPipeline(seed=7, k_min=3, k_max=8).fit(ids, x, texts)
    b = TopicPipeline(seed=7, k_min=3, k_max=8).fit(ids, x, texts)
    assert np.array_equal(a.coarse, b.coarse) and np.array_equal(a.fine, b.fine)
    assert np.array_equal(a.xy, b.xy) and [t.label for t in a.topics] == [t.label for t in b.topics]
    from sklearn.metrics import normalized_mutual_info_score

    assert normalized_mutual_info_score([r["theme"] for r in rows], a.coarse) > 0.8
    assert np.abs(a.xy).max() <= 1.0


# -- the stored model, related reasons, CLI --------------------------------------------------------
def test_build_stores_topics_and_labels_are_clean(synth_lib) -> None:
    lib, model = synth_lib
    status = lib.topics.status()
    assert status["built"] and not status["stale"] and status["papers"] == 120
    coarse = lib.topics.at_level("coarse")
    fine = lib.topics.at_level("fine")
    assert len(coarse) == model.meta["k"]["coarse"] >= 2 and len(fine) >= len(coarse)
    assert sum(t.size for t in coarse) == 120 == sum(t.size for t in fine)
    for t in coarse + fine:
        assert 1 <= len(t.phrases) <= 4 and t.label
        assert not any(b in t.label.lower() for b in BANNED), t.label
        assert t.central and all(lib.get(c) for c in t.central)
    assert {t.parent for t in fine} <= {t.topic for t in coarse}
    placed = lib.store.topics.paper_topics()
    assert len(placed) == 120 and all(-1 <= v["x"] <= 1 and -1 <= v["y"] <= 1 for v in placed.values())


def test_rebuild_with_same_seed_is_identical(synth_lib) -> None:
    lib, model = synth_lib
    before = lib.store.topics.paper_topics()
    labels = [t.label for t in lib.topics.at_level("fine")]
    again = lib.topics.build(seed=0)
    assert lib.store.topics.paper_topics() == before and [t.label for t in lib.topics.at_level("fine")] == labels
    assert np.array_equal(again.xy, model.xy)


def test_related_reason_names_shared_phrases() -> None:
    a = Paper("a", "Diffusion models for protein design", "We propose diffusion models. In this paper we study it.")
    b = Paper("b", "Protein design with score-based diffusion models", "We propose it. In this paper, results.")
    assert related_reason(a, b) == "shares: diffusion models, protein design"
    c = Paper("c", "Bandits with heavy tails", "Regret bounds for bandits.")
    assert related_reason(a, c) == ""


def test_similar_hits_carry_reasons(synth_lib) -> None:
    lib, _ = synth_lib
    hits = lib.similar("diffusion/0", limit=5)
    assert len(hits) == 5 and all(h.reason for h in hits)
    assert any(h.reason.startswith("shares: ") for h in hits)
    assert all(h.to_dict()["reason"] == h.reason for h in hits)


def test_cli_topics_json_shape(synth_lib) -> None:
    lib, _ = synth_lib
    runner = CliRunner()
    r = runner.invoke(cli, ["--db", lib.path, "topics", "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["level"] == "coarse" and d["stale"] is False and d["papers"] == 120
    t = d["topics"][0]
    assert set(t) == {"level", "topic", "size", "label", "phrases", "central", "parent", "x", "y"}
    assert [x["size"] for x in d["topics"]] == sorted((x["size"] for x in d["topics"]), reverse=True)
    r = runner.invoke(cli, ["--db", lib.path, "topics", "--level", "fine", "--json"], catch_exceptions=False)
    assert all(x["parent"] is not None for x in json.loads(r.output)["topics"])
    r = runner.invoke(cli, ["--db", lib.path, "topics", "build", "--json", "--seed", "0"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert set(json.loads(r.output)) >= {"papers", "k", "seconds"}


def test_cli_topics_without_a_build_says_how(tmp_path: Path) -> None:
    Library(tmp_path / "empty.db").close()  # an existing library without topics (a missing one is refused)
    r = CliRunner().invoke(cli, ["--db", str(tmp_path / "empty.db"), "topics"])
    assert r.exit_code == 1 and "paperatlas topics build" in r.output


# -- the map ---------------------------------------------------------------------------------------
def test_map_data_is_column_oriented(synth_lib) -> None:
    lib, _ = synth_lib
    lib.readers.set_feedback("me", ["rl/3"], "like")
    d = lib.topics.map_data(reader="me")
    n = len(d["ids"])
    assert n == 120
    for col in ("title", "venue", "year", "url", "authors", "x", "y", "coarse", "fine", "phrases"):
        assert len(d[col]) == n, col
    assert set(d["venues"]) == {"SynthConf", "OtherConf"}
    assert d["saved"] == [d["ids"].index("rl/3")]
    assert all(0 <= j < len(d["vocab"]) for ph in d["phrases"] for j in ph)
    assert {t["id"] for t in d["topics"]["coarse"]} == set(d["coarse"])
    assert len(lib.topics.map_data(venue="SynthConf")["ids"]) == 60


def test_map_data_links_only_http_urls(synth_lib, tmp_path: Path) -> None:
    lib, _ = synth_lib
    f = tmp_path / "urls.jsonl"
    old = {r["id"]: r for r in synthetic_papers()}
    f.write_text(
        json.dumps({**old["rl/4"], "url": "javascript:alert(1)"})
        + "\n"
        + json.dumps({**old["rl/5"], "url": "https://example.org/rl5"})
        + "\n",
        encoding="utf-8",
    )
    lib.ingest([f])
    d = lib.topics.map_data()
    url = dict(zip(d["ids"], d["url"]))
    assert url["rl/4"] == "" and url["rl/5"] == "https://example.org/rl5"


def test_map_html_is_self_contained(synth_lib, tmp_path: Path) -> None:
    lib, _ = synth_lib
    out = tmp_path / "atlas.html"
    r = CliRunner().invoke(cli, ["--db", lib.path, "map", "--out", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    page = out.read_text(encoding="utf-8")
    # nothing is fetched: no external script, stylesheet, image or font
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*[\"']?\s*(https?:)?//", page, re.I)
    assert not re.search(r"@import|url\(\s*[\"']?https?:", page)
    assert "createScatterplot" in page and 'id="atlas-data"' in page
    data = re.search(r'<script id="atlas-data" type="application/json">(.*?)</script>', page, re.S)
    assert data and len(json.loads(data.group(1))["ids"]) == 120
    # paper text cannot close the data element early
    assert page.count("</script>") == 3


def test_map_html_escapes_hostile_titles(tmp_path: Path) -> None:
    lib = Library(tmp_path / "x.db", embedder="hashing")
    rows = synthetic_papers(per_theme=6)
    rows[0]["title"] = "</script><script>window.__pwned=1</script> diffusion"
    src = tmp_path / "p.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    lib.ingest([src])
    lib.embed()
    lib.topics.build(seed=0, k=3)
    page = render_map_html(lib.topics.map_data())
    assert "</script><script>window.__pwned" not in page and "\\u003c/script>" in page
    web_page = render_map_html(lib.topics.map_data(), inline=False)
    assert 'src="/map/assets/atlas.js"' in web_page and "atlas-data" not in web_page
    lib.close()


def test_web_map_routes(synth_lib) -> None:
    pytest.importorskip("starlette")
    from paperatlas.web.app import create_app, request_once

    lib, _ = synth_lib
    app = create_app(lib)
    status, headers, body = request_once(app, "/map")
    assert status == 200, body[:300]
    csp = [v for k, v in headers if k.lower() == "content-security-policy"]
    assert len(csp) == 1 and "'unsafe-eval'" in csp[0] and "blob:" in csp[0]
    assert b'data-src="/map.json"' in body and b"/map/assets/regl-scatterplot.min.js" in body
    status, _, body = request_once(app, "/map.json?venue=SynthConf")
    assert status == 200 and len(json.loads(body)["ids"]) == 60
    status, headers, body = request_once(app, "/map/assets/atlas.js")
    assert status == 200 and b"paperatlasMap" in body
    assert request_once(app, "/map/assets/secrets.txt")[0] == 404
    # other pages keep the strict site-wide policy
    _, headers, _ = request_once(app, "/stats")
    assert all("'unsafe-eval'" not in v for k, v in headers if k.lower() == "content-security-policy")


def test_map_page_in_chinese(synth_lib, tmp_path: Path) -> None:
    """The web map (?lang=zh) and `map --lang zh` come with Chinese controls and script strings."""
    pytest.importorskip("starlette")
    from paperatlas.web.app import create_app, request_once

    lib, _ = synth_lib
    status, headers, body = request_once(create_app(lib), "/map?lang=zh")
    page = body.decode("utf-8")
    assert status == 200 and '<html lang="zh-CN">' in page and "<title>paperatlas 主题地图</title>" in page
    assert 'placeholder="搜索标题、作者、关键短语"' in page and ">子主题</button>" in page
    strings = json.loads(re.search(r'<script id="atlas-i18n" type="application/json">(.*?)</script>', page).group(1))
    assert strings["{n} papers selected"] == "已选中 {n} 篇论文"
    out = tmp_path / "atlas.html"
    r = CliRunner().invoke(cli, ["--db", lib.path, "map", "--out", str(out), "--lang", "zh"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    offline = out.read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in offline and 'id="atlas-i18n"' in offline and ">重置</button>" in offline
    english = request_once(create_app(lib), "/map")[2].decode("utf-8")
    assert '<html lang="en">' in english and "atlas-i18n" not in english and ">reset</button>" in english


def test_map_data_is_kept_for_the_next_process_until_a_paper_or_the_topics_change(tmp_path: Path) -> None:
    """A new process (the CLI's `map`, a restarted server) reads the map's paper columns back from the
    library's index folder instead of every paper from the store; an edited title, a venue asked
    for, rebuilt topics each give a fresh one, never the kept one."""
    db = tmp_path / "x.db"
    rows = synthetic_papers(per_theme=6)
    src = tmp_path / "p.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with Library(db, embedder="hashing") as lib:
        lib.ingest([src])
        lib.embed()
        lib.topics.build(seed=0, k=3)
        first = lib.topics.map_data()
        kept = lib.engine.index_folder("map")
        assert kept is not None and (kept / "map.json").is_file()
    with Library(db, embedder="hashing") as lib:  # the next process: the kept columns, not the store's papers
        calls: list[object] = []
        real = lib.store.get_papers
        lib.store.get_papers = lambda ids: calls.append(ids) or real(ids)  # type: ignore[method-assign]
        assert lib.topics.map_data() == first and not calls
        # the same second, one title edited: the key is every paper's content, not only the clock
        edited = {**rows[0], "title": "A title edited after the map was kept"}
        src.write_text(json.dumps(edited) + "\n", encoding="utf-8")
        lib.ingest([src])
        d = lib.topics.map_data()
        assert dict(zip(d["ids"], d["title"]))[rows[0]["id"]] == edited["title"] and calls
        only = lib.topics.map_data(venue="SynthConf")
        assert set(only["ids"]) < set(d["ids"]) and len(only["ids"]) == len(rows) // 2
        assert lib.topics.map_data(reader="nobody")["saved"] == []
        lib.topics.build(seed=0, k=4)  # within the same second as the first build, as likely as not
        assert len(lib.topics.map_data()["topics"]["coarse"]) == len(lib.topics.at_level("coarse")) != 3
