"""Recommendations (issue 6): recommenders, profile, triage, groups, digests, import, CLI, eval."""

from __future__ import annotations

import gzip
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas_lab.eval import recommend as ev
from paperatlas.recommend import RECOMMENDERS, Signals, groups, interests, preferences, triage
from paperatlas.recommend.base import rank

TOPICS = {
    "diffusion": ["diffusion", "denoising", "score", "generative", "image", "sampler", "noise", "likelihood"],
    "bandits": ["bandit", "regret", "exploration", "arm", "reward", "confidence", "dueling", "online"],
    "graphs": ["graph", "node", "message", "passing", "edge", "molecule", "neighbourhood", "gnn"],
}
COMMON = ["we", "propose", "method", "results", "show", "model", "paper", "learning", "study", "new"]


def _papers(per_topic: int = 20, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for t, words in TOPICS.items():
        for i in range(per_topic):
            body = " ".join(rng.choice(words, 25).tolist() + rng.choice(COMMON, 10).tolist())
            extra = " benchmark evaluation suite dataset leaderboard" if i % 4 == 0 else " theorem proof bound"
            out.append(
                {
                    "id": f"{t}-{i}",
                    "title": f"{t.title()} study {i}: {' '.join(rng.choice(words, 3))}",
                    "abstract": body + extra,
                    "venue": "TestConf",
                    "year": 2026,
                    "status": "Oral" if i == 0 else "Poster",
                    "authors": [f"Author {t} {i % 3}"],
                }
            )
    return out


@pytest.fixture
def topic_lib(tmp_path: Path) -> Library:
    f = tmp_path / "papers.jsonl"
    f.write_text("\n".join(json.dumps(p) for p in _papers()), encoding="utf-8")
    lib = Library(tmp_path / "t.db", embedder="hashing")
    lib.ingest([f])
    lib.embed()
    yield lib
    lib.close()


def _topic(pid: str) -> str:
    return pid.split("-")[0]


# -- pure parts ---------------------------------------------------------------------------------
def test_preferences_parse_signs_and_phrases() -> None:
    assert preferences.parse("more theory, fewer benchmark papers") == [(1, "theory"), (-1, "benchmark")]
    assert preferences.parse("I love graph neural networks; no robotics") == [
        (1, "graph neural networks"),
        (-1, "robotics"),
    ]
    assert preferences.parse("") == []


def test_nash_welfare_is_fairer_than_sum_to_a_minority_member() -> None:
    # members 0 and 1 agree on papers 0-9; member 2 likes only papers 10-19
    pts = np.zeros((3, 20))
    pts[0, :10] = pts[1, :10] = np.arange(100, 90, -1)
    pts[2, 10:] = np.arange(100, 90, -1)
    s = groups.select(pts, 6, "sum")
    nash = groups.select(pts, 6, "nash")
    assert all(j < 10 for j in s)  # the sum hands every slot to the majority
    sat_nash = groups.member_stats(pts, nash)
    assert min(m["satisfaction"] for m in sat_nash) > 0.2
    assert abs(sum(m["share"] for m in sat_nash) - 1.0) < 1e-9
    assert min(m["satisfaction"] for m in groups.member_stats(pts, s)) == 0.0


def test_borda_is_truncated_and_skips_excluded() -> None:
    b = groups.borda(np.array([0.1, 0.9, 0.5, 0.7]), np.array([False, True, False, False]), depth=2)
    assert b.tolist() == [0.0, 0.0, 1.0, 2.0]


def test_metrics() -> None:
    assert ev.ndcg_at([1, 2, 3], {1}, 10) == 1.0
    assert abs(ev.ndcg_at([5, 1], {1, 2}, 10) - (1 / np.log2(3)) / (1 + 1 / np.log2(3))) < 1e-9
    assert ev.recall_at([1, 2, 3], {3, 4}, 100) == 0.5
    excl = np.array([True, False, False, False])
    assert ev.reciprocal_rank(np.array([9.0, 1.0, 3.0, 2.0]), {3}, excl) == 0.5


def test_triage_posterior_learns_the_direction_of_the_answers() -> None:
    rng = np.random.default_rng(0)
    z = rng.normal(size=(200, 8))
    true = np.zeros(8)
    true[0] = 1.0
    pairs = [tuple(rng.choice(200, 2, replace=False)) for _ in range(40)]
    choices = [(a, b) if z[a] @ true > z[b] @ true else (b, a) for a, b in pairs]
    mu, cov = triage.posterior(z, choices)
    assert mu[0] > 3 * np.abs(mu[1:]).max()
    assert np.trace(cov) < 8.0  # answers shrink the uncertainty


def test_triage_topic_scores_put_the_winning_topic_first() -> None:
    from paperatlas.recommend.features import build_corpus

    # three tight topics in embedding space; the reader always prefers topic 0
    rng = np.random.default_rng(1)
    centres = np.eye(3, 16)
    emb = np.concatenate([c + 0.1 * rng.normal(size=(30, 16)) for c in centres]).astype(np.float32)
    ids = [f"p{i}" for i in range(90)]
    corpus = build_corpus(ids, ids, ["text"] * 90, [[]] * 90, emb)
    m = triage.memberships(corpus, 3)
    assert np.allclose(m.sum(1), 1.0) and (m.max(1) > 0.9).mean() > 0.9  # one topic per paper
    choices = [(f"p{i}", f"p{30 + i}") for i in range(3)] + [(f"p{i + 3}", f"p{60 + i}") for i in range(3)]
    old = triage.CLUSTERS
    triage.CLUSTERS = 3
    try:
        u = triage.utility(corpus, choices)
        assert u[:30].min() > u[30:].max()  # every topic-0 paper above every other paper
        pair = triage.select_pair(corpus, choices, np.ones(90, dtype=bool), np.random.default_rng(0))
        assert pair is not None and pair[0] != pair[1]
    finally:
        triage.CLUSTERS = old


def test_metadata_profile_prefers_liked_venue_series_and_years() -> None:
    from paperatlas.recommend.default import Weights, metadata_profile, venue_series
    from paperatlas.recommend.features import build_corpus

    assert venue_series("SIGIR '18") == venue_series("SIGIR '19") == "sigir"
    venues = ["SIGIR '18", "SIGIR '19", "CHI '19", "CHI '05", ""]
    years = [2018, 2019, 2019, 2005, None]
    ids = [f"m{i}" for i in range(5)]
    corpus = build_corpus(ids, ids, ["text words"] * 5, [[]] * 5, venues=venues, years=years)
    parts = metadata_profile(corpus, np.array([0]), np.ones(1, np.float32), Weights())
    assert parts["venue"][1] > parts["venue"][2]  # same series as the like
    assert parts["year"][2] > parts["year"][3]  # 2019 is closer to 2018 than 2005
    assert parts["venue"][4] == 0.0 and parts["year"][4] == 0.0  # unknown venue / year: neutral
    # a single-venue, single-year list: the terms vanish (no harm)
    one = build_corpus(ids, ids, ["text words"] * 5, [[]] * 5, venues=["ICLR"] * 5, years=[2024] * 5)
    assert all(not v.any() for v in metadata_profile(one, np.array([0, 1]), np.ones(2, np.float32), Weights()).values())


def test_eval_and_product_pick_triage_pairs_with_the_same_function(topic_lib: Library, monkeypatch) -> None:
    calls: list[str] = []
    real = triage.next_pair

    def spy(corpus, signals, candidates, rng, recommender=None):
        calls.append("x")
        return real(corpus, signals, candidates, rng, recommender)

    monkeypatch.setattr(triage, "next_pair", spy)
    topic_lib.recommend.triage_pair("spy")
    assert calls == ["x"]
    corpus = topic_lib.recommend.corpus()
    areas = np.array([_topic(pid) for pid in corpus.ids], dtype=object)
    reader = ev.make_reader(0, areas, sorted(TOPICS))
    ch = ev._triage_choices(corpus, reader, 4, 0, "bandit")
    assert len(calls) == 5 and len(ch) == 4 and len({p for a, b, _ in ch for p in (a, b)}) == 8


def test_neither_answers_push_their_topic_down(topic_lib: Library) -> None:
    corpus = topic_lib.recommend.corpus()
    u = triage.utility(corpus, [(triage.NEITHER, "bandits-1"), (triage.NEITHER, "bandits-2")])
    assert u is not None
    is_bandit = np.array([_topic(pid) == "bandits" for pid in corpus.ids])
    assert u[is_bandit].mean() < u[~is_bandit].mean()
    # the product records it, and neither paper comes back in triage
    topic_lib.recommend.triage_neither("nei", "graphs-1", "graphs-2")
    assert [c[:2] for c in topic_lib.store.readers.choices(topic_lib.readers.get("nei").id)] == [
        ("", "graphs-1"),
        ("", "graphs-2"),
    ]
    pair = topic_lib.recommend.triage_pair("nei")
    assert pair is not None and not {"graphs-1", "graphs-2"} & {p.id for p in pair}


def test_simulated_reader_says_neither_only_without_a_liked_paper() -> None:
    reader = ev.SimReader(0, ["x"], ["y"], np.array([1, -1, 0, 0]))
    rng = np.random.default_rng(0)
    answers = [reader.answer(2, 3, rng, neither=True) for _ in range(200)]
    share = sum(a == [(-1, 2), (-1, 3)] for a in answers) / len(answers)
    assert 0.75 < share < 0.95  # CHOICE_ACCURACY of the time
    assert all(len(reader.answer(0, 2, rng, neither=True)) == 1 for _ in range(50))  # a liked paper is chosen
    assert len(reader.answer(2, 3, rng)) == 1  # a forced choice without `neither`


# -- recommenders on a three-topic library --------------------------------------------------------
@pytest.mark.parametrize("method", ["default", "svm"])
def test_likes_bring_their_topic_first(topic_lib: Library, method: str) -> None:
    topic_lib.readers.set_feedback("a", ["bandits-1", "bandits-2", "bandits-3"], "like")
    hits = topic_lib.recommend.for_reader("a", limit=8, method=method)
    assert [_topic(h.paper.id) for h in hits].count("bandits") >= 7
    assert not {"bandits-1", "bandits-2", "bandits-3"} & {h.paper.id for h in hits}  # judged papers are hidden
    assert all(h.reason for h in hits)


def test_cold_start_lists_orals_first(topic_lib: Library) -> None:
    hits = topic_lib.recommend.for_reader("new", limit=3)
    assert {h.paper.status for h in hits} == {"Oral"}
    assert "no likes yet" in hits[0].reason


def test_explanations_name_a_liked_paper_and_a_phrase(topic_lib: Library) -> None:
    topic_lib.readers.set_feedback("a", ["graphs-1", "graphs-2"], "like")
    why = topic_lib.recommend.for_reader("a", limit=1)[0].reason
    liked_titles = {topic_lib.get(i).title for i in ("graphs-1", "graphs-2")}
    assert "because you liked" in why and any(t[:30] in why for t in liked_titles)
    assert "matches '" in why


def test_svm_ignores_dislikes_like_arxiv_sanity(topic_lib: Library) -> None:
    corpus = topic_lib.recommend.corpus()
    svm = RECOMMENDERS.create("svm")
    a = svm.fit(corpus, Signals(likes=["graphs-1", "graphs-2"])).scores
    b = svm.fit(corpus, Signals(likes=["graphs-1", "graphs-2"], dislikes=["graphs-5", "graphs-6"])).scores
    assert np.allclose(a, b)


def test_dislikes_push_similar_papers_down(topic_lib: Library) -> None:
    corpus = topic_lib.recommend.corpus()
    rec = RECOMMENDERS.create("default")
    likes = ["graphs-1", "diffusion-1"]
    base = rec.fit(corpus, Signals(likes=likes)).scores
    neg = rec.fit(corpus, Signals(likes=likes, dislikes=["diffusion-2", "diffusion-3"])).scores
    d = np.array([_topic(i) == "diffusion" for i in corpus.ids])
    g = np.array([_topic(i) == "graphs" for i in corpus.ids])
    # relative to graph papers, diffusion papers lose ground
    assert (neg[d].mean() - neg[g].mean()) < (base[d].mean() - base[g].mean()) - 0.5


def test_preferences_text_steers_the_ranking(topic_lib: Library) -> None:
    topic_lib.readers.set_feedback("p", ["diffusion-1", "diffusion-2"], "like")
    before = [h.paper.id for h in topic_lib.recommend.for_reader("p", limit=6)]
    topic_lib.recommend.edit_profile("p", preferences="fewer benchmark papers")
    after = topic_lib.recommend.for_reader("p", limit=6)
    bench = lambda pid: "benchmark" in topic_lib.get(pid).abstract  # noqa: E731
    assert sum(map(bench, [h.paper.id for h in after])) < sum(map(bench, before))
    assert sum(map(bench, before)) >= 1


# -- the profile is what ranks --------------------------------------------------------------------
def test_profile_has_labelled_interests_and_removing_one_changes_the_ranking(topic_lib: Library) -> None:
    topic_lib.readers.set_feedback(
        "r", ["graphs-1", "graphs-2", "graphs-3", "bandits-1", "bandits-2", "bandits-3"], "like"
    )
    prof = topic_lib.recommend.profile("r")
    assert len(prof["interests"]) >= 2
    for it in prof["interests"]:
        assert it["label"] and it["phrases"] and it["examples"]
    graph_interest = next(it for it in prof["interests"] if _topic(it["examples"][0]["id"]) == "graphs")
    assert any(w in " ".join(graph_interest["phrases"]) for w in TOPICS["graphs"])
    before = [_topic(h.paper.id) for h in topic_lib.recommend.for_reader("r", limit=10)]
    assert "graphs" in before
    topic_lib.recommend.edit_profile("r", remove=graph_interest["id"])
    after = [_topic(h.paper.id) for h in topic_lib.recommend.for_reader("r", limit=10)]
    assert after.count("graphs") < before.count("graphs") and after.count("bandits") >= 8
    topic_lib.recommend.edit_profile("r", restore=graph_interest["id"])
    assert [_topic(h.paper.id) for h in topic_lib.recommend.for_reader("r", limit=10)] == before


def test_adding_a_phrase_creates_an_interest_that_ranks(topic_lib: Library) -> None:
    topic_lib.readers.set_feedback("s", ["bandits-1", "bandits-2"], "like")
    assert "diffusion" not in [_topic(h.paper.id) for h in topic_lib.recommend.for_reader("s", limit=5)]
    prof = topic_lib.recommend.edit_profile("s", add_phrase="denoising diffusion sampler")
    assert any(it["added"] == ["denoising diffusion sampler"] for it in prof["interests"])
    hits = topic_lib.recommend.for_reader("s", limit=10)
    assert "diffusion" in [_topic(h.paper.id) for h in hits]
    assert any("denoising diffusion sampler" in h.reason for h in hits)


def test_profile_updates_incrementally_and_keeps_edits(topic_lib: Library) -> None:
    corpus = topic_lib.recommend.corpus()
    likes = ["graphs-1", "graphs-2", "graphs-3", "bandits-1", "bandits-2", "bandits-3"]
    prof, changed = interests.sync(None, corpus, likes)
    assert changed and prof["clustered_at"] == 6
    ids_before = [it["id"] for it in prof["interests"]]
    prof = interests.add_phrase(prof, corpus, "regret bounds", prof["interests"][0]["id"])
    # one more like near an interest: assigned in place, no re-clustering
    prof2, changed = interests.sync(prof, corpus, likes + ["graphs-4"])
    assert changed and [it["id"] for it in prof2["interests"]] == ids_before
    assert sum("graphs-4" in it["papers"] for it in prof2["interests"]) == 1
    # a like far from every interest starts a new one
    prof3, _ = interests.sync(prof2, corpus, likes + ["graphs-4", "diffusion-1"])
    assert any(it["papers"] == ["diffusion-1"] for it in prof3["interests"])
    # the history doubled: re-clustered, and the added phrase survived
    more = likes + [f"graphs-{i}" for i in range(4, 10)] + ["diffusion-1"]
    prof4, _ = interests.sync(prof3, corpus, more)
    assert prof4["clustered_at"] == len(more)
    assert any("regret bounds" in it["added"] for it in prof4["interests"])
    # an unliked paper leaves the profile
    prof5, _ = interests.sync(prof4, corpus, more[1:])
    assert more[0] not in interests.liked_in_profile(prof5)


# -- triage ---------------------------------------------------------------------------------------
def test_triage_pairs_are_distinct_new_and_answers_personalise(topic_lib: Library) -> None:
    seen = set()
    for _ in range(8):
        a, b = topic_lib.recommend.triage_pair("t")
        assert a.id != b.id and not {a.id, b.id} & seen
        assert topic_lib.recommend.triage_pair("t")[0].id == a.id  # same history, same pair
        seen |= {a.id, b.id}
        # this reader prefers graph papers, else anything
        win, lose = (b, a) if _topic(b.id) == "graphs" and _topic(a.id) != "graphs" else (a, b)
        topic_lib.recommend.triage_choose("t", win.id, lose.id)
    corpus = topic_lib.recommend.corpus()
    choices = [(w, lo) for w, lo, _ in topic_lib.store.readers.choices(topic_lib.readers.get("t").id)]
    if any(_topic(w) == "graphs" for w, _ in choices):
        hits = topic_lib.recommend.for_reader("t", limit=5)
        assert [_topic(h.paper.id) for h in hits].count("graphs") >= 3
    assert triage.utility(corpus, choices) is not None
    with pytest.raises(Exception):
        topic_lib.recommend.triage_choose("t", "graphs-1", "graphs-1")


# -- groups, digest, import ------------------------------------------------------------------------
def test_group_list_serves_every_member(topic_lib: Library) -> None:
    topic_lib.readers.set_feedback("g1", ["graphs-1", "graphs-2"], "like")
    topic_lib.readers.set_feedback("g2", ["graphs-3", "graphs-4"], "like")
    topic_lib.readers.set_feedback("g3", ["bandits-1", "bandits-2"], "like")
    res = topic_lib.recommend.group_list(["g1", "g2", "g3"], n=6)
    assert len(res["papers"]) == 6
    topics = [_topic(h.paper.id) for h in res["papers"]]
    assert "bandits" in topics and "graphs" in topics
    assert {m["reader"] for m in res["members"]} == {"g1", "g2", "g3"}
    assert all(m["satisfaction"] > 0 for m in res["members"])
    assert "sum" in res["compare"]
    # no paper a member judged is listed: its missing rank would tell the others what they liked
    assert not {h.paper.id for h in res["papers"]} & {
        "graphs-1",
        "graphs-2",
        "graphs-3",
        "graphs-4",
        "bandits-1",
        "bandits-2",
    }
    one = topic_lib.recommend.group_list(["g1", "g1"], n=3)  # a group of one is that reader's own list
    assert [m["reader"] for m in one["members"]] == ["g1"] and len(one["papers"]) == 3
    with pytest.raises(Exception, match="at least one reader"):
        topic_lib.recommend.group_list([" "], n=3)


def test_digest_formats_list_only_unjudged_papers(topic_lib: Library) -> None:
    topic_lib.readers.set_feedback("d", ["graphs-1"], "like")
    topic_lib.readers.set_feedback("d", ["graphs-2"], "seen")
    md = topic_lib.recommend.digest("d", limit=5, format="markdown")
    assert md.startswith("# paperatlas digest for d") and "Why:" in md
    assert "`graphs-2`" not in md and "`graphs-1`" not in md
    html = topic_lib.recommend.digest("d", limit=5, format="html")
    assert "<ol>" in html and "&lt;" not in html.split("<body>")[0]
    feed = ET.fromstring(topic_lib.recommend.digest("d", limit=5, format="atom"))
    ns = {"a": "http://www.w3.org/2005/Atom"}
    entries = feed.findall("a:entry", ns)
    assert len(entries) == 5
    assert all(e.find("a:id", ns).text.startswith("urn:paperatlas:paper:") for e in entries)
    assert "graphs-2" not in {e.find("a:id", ns).text.rsplit(":", 1)[1] for e in entries}
    assert topic_lib.recommend.digest("d", since="2999-01-01", format="markdown").count("\n1. ") == 0


def test_saved_search_feed(topic_lib: Library) -> None:
    r = topic_lib.readers.get("f")
    topic_lib.store.readers.save_search(r.id, "bandits", "regret bandit", {})
    feed = ET.fromstring(topic_lib.recommend.saved_search_feed("f", "bandits", limit=3))
    assert len(feed.findall("{http://www.w3.org/2005/Atom}entry")) == 3


def test_import_reader_matches_ids_titles_and_reports_the_rest(topic_lib: Library, tmp_path: Path) -> None:
    t1 = topic_lib.get("graphs-1").title
    t2 = topic_lib.get("bandits-2").title
    bib = tmp_path / "me.bib"
    bib.write_text(
        "@inproceedings{a, title={" + t1.upper() + "}, year={2026}}\n"
        "@article{b, title={" + t2[:-1] + "}, year={2026}}\n"
        "@article{c, title={A Paper That Is Not In The Library At All}, year={2020}}\n",
        encoding="utf-8",
    )
    rep = topic_lib.readers.import_file("imp", bib)
    assert {pid for _, pid, _ in rep.matched} == {"graphs-1", "bandits-2"}
    assert rep.unmatched == ["A Paper That Is Not In The Library At All"]
    assert {p.id for p in topic_lib.readers.liked("imp")} == {"graphs-1", "bandits-2"}
    lst = tmp_path / "list.txt"
    lst.write_text("diffusion-3\nno such paper anywhere here\n", encoding="utf-8")
    rep = topic_lib.readers.import_file("imp2", lst)
    assert [m[1] for m in rep.matched] == ["diffusion-3"] and len(rep.unmatched) == 1


# -- CLI ------------------------------------------------------------------------------------------
def test_cli_reader_commands(topic_lib: Library, runner) -> None:
    db = topic_lib.path
    topic_lib.close()

    def run(*args: str, code: int = 0):
        res = runner.invoke(cli, ["--db", db, *args])
        assert res.exit_code == code, res.output
        return res.output

    assert "API token" in run("readers", "add", "cl")
    run("like", "graphs-1", "graphs-2", "--reader", "cl")
    run("dislike", "bandits-1", "--reader", "cl")
    recs = json.loads(run("recommend", "--reader", "cl", "--limit", "5", "--json"))
    assert len(recs) == 5 and all(r["reason"] for r in recs)
    assert json.loads(run("recommend", "--reader", "cl", "--method", "svm", "--json"))
    prof = json.loads(run("profile", "--reader", "cl", "--json"))
    iid = prof["interests"][0]["id"]
    run("profile", "--reader", "cl", "add-phrase", "regret bounds")
    out = json.loads(run("profile", "remove", iid, "--reader", "cl", "--json"))
    assert next(i for i in out["interests"] if i["id"] == iid)["removed"]
    run("profile", "preferences", "more theory", "--reader", "cl")
    assert json.loads(run("profile", "--reader", "cl", "--json"))["preferences"] == "more theory"
    run("profile", "remove", "nope", "--reader", "cl", code=1)
    pair = json.loads(run("triage", "--reader", "cl", "--json"))
    run("triage", "choose", pair[0]["id"], pair[1]["id"], "--reader", "cl")
    run("tag", "to-read", "graphs-3", "--reader", "cl")
    assert "graphs-3" in run("tag", "to-read", "--reader", "cl")
    run("note", "graphs-3", "check the proof", "--reader", "cl")
    assert "check the proof" in run("note", "graphs-3", "--reader", "cl")
    run("like", "bandits-4", "--reader", "cl2")
    grp = json.loads(run("group", "--readers", "cl,cl2", "--n", "4", "--json"))
    assert len(grp["papers"]) == 4 and len(grp["members"]) == 2
    text = " ".join(run("group", "--readers", "cl,cl2", "--n", "4").split())
    assert "How this list serves each member (fair to every member)" in text and "members (nash)" not in text
    assert re.search(r"cl2: \d of the 4 papers (is|are) among their top picks; the list is \d+% as good", text), text
    assert "<feed" in run("digest", "--reader", "cl", "--format", "atom", "--limit", "3")
    assert [r["name"] for r in json.loads(run("readers", "--json"))] == ["cl", "cl2"]


# -- evaluation harness on a miniature ACM-CR -------------------------------------------------------
def test_acm_eval_runs_every_recommender_on_a_fixed_pool(tmp_path: Path) -> None:
    papers = _papers(per_topic=15)
    data = tmp_path / "acm"
    data.mkdir()
    with gzip.open(data / "corpus.jsonl.gz", "wt", encoding="utf-8") as f:
        for p in papers:
            f.write(
                json.dumps(
                    {
                        "_id": p["id"],
                        "title": p["title"],
                        "text": p["abstract"],
                        "keywords": "",
                        "year": "2020",
                        "venue": "X",
                    }
                )
                + "\n"
            )
    cites = [{"paper_doi": f"c{t}", "title": t, "cited_in_collection": [f"{t}-{i}" for i in range(8)]} for t in TOPICS]
    (data / "citations.jsonl").write_text("\n".join(json.dumps(c) for c in cites), encoding="utf-8")
    pool = ev.acm_pool(data, size=30)
    assert len(pool) == 30 and pool == ev.acm_pool(data, size=30)  # fixed for every run
    assert {f"{t}-{i}" for t in TOPICS for i in range(8)} <= {r["id"] for r in pool}
    rep = ev.run_acm(data, embedder="hashing", seeds=[0, 1], pool_size=30)
    res = rep["results"]
    assert set(res) == {"tune", "test", "all"}
    assert set(res["all"]) == set(RECOMMENDERS.names())
    for m in res["all"].values():
        assert 0 <= m["ndcg@10"] <= 1 and 0 <= m["mrr"] <= 1
        assert m["recall@100"] == 1.0  # the pool has only 30 papers: everything is in the top 100
    assert "ACM-CR" in ev.format_report(rep)


def test_simulated_readers_and_groups_harness(topic_lib: Library) -> None:
    corpus = topic_lib.recommend.corpus()
    areas = np.array([_topic(i) for i in corpus.ids], dtype=object)
    monkeypatch_min = ev.SIM_MIN_AREA
    try:
        ev.SIM_MIN_AREA = 10
        res = ev.evaluate_simulated(corpus, areas, seeds=[0, 1], events=(0, 5))
        assert set(res) == set(ev.simulated_variants())
        for m in res.values():
            assert set(m) == {"p@10 after 0", "p@10 after 5"}
        grp = ev.evaluate_groups(corpus, areas, seeds=[0, 1], n=4)
        assert set(grp) == {"nash", "sum"}
        assert grp["nash"]["min satisfaction"] >= 0
    finally:
        ev.SIM_MIN_AREA = monkeypatch_min


def test_make_reader_is_independent_of_recommenders() -> None:
    areas = np.array(["a"] * 50 + ["b"] * 50 + ["c"] * 50, dtype=object)
    r1 = ev.make_reader(3, areas, ["a", "b", "c"])
    r2 = ev.make_reader(3, areas, ["a", "b", "c"])
    assert r1.liked_areas == r2.liked_areas and np.array_equal(r1.utility, r2.utility)
    assert not set(r1.liked_areas) & set(r1.disliked_areas)


def test_rank_respects_exclude_and_allowed() -> None:
    class S:
        scores = np.array([5.0, 4.0, 3.0, 2.0])

    assert rank(S(), 3, exclude=np.array([True, False, False, False])) == [1, 2, 3]
    assert rank(S(), 3, allowed=np.array([False, False, True, True])) == [2, 3]


def test_tfidf_features_are_saved_and_reloaded_exactly(
    topic_lib: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import paperatlas.recommend.features as features

    first = topic_lib.recommend.corpus()
    folder = Path(str(topic_lib.store.path) + ".index") / "recommend-tfidf"
    assert (folder / "key.json").is_file() and (folder / "tfidf.npz").is_file()
    fits: list[int] = []
    real_fit = features._fit_tfidf
    monkeypatch.setattr(features, "_fit_tfidf", lambda texts, n: fits.append(n) or real_fit(texts, n))
    again = Library(topic_lib.store.path, embedder="hashing")  # as a new process would: loads, no refit
    second = again.recommend.corpus()
    assert fits == []
    assert (first.tfidf != second.tfidf).nnz == 0 and list(first.vocab) == list(second.vocab)
    a, b = (c.vectorizer.transform(["bandit regret graph"]) for c in (first, second))
    assert (a != b).nnz == 0
    # an edited abstract changes the texts: the next process refits
    f = tmp_path / "edit.jsonl"
    f.write_text(
        json.dumps(
            {
                "id": "graphs-1",
                "title": "Graph edit",
                "abstract": "A brand new abstract about message passing on molecule graphs.",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    again.ingest([f])
    third = Library(topic_lib.store.path, embedder="hashing")
    third.recommend.corpus()
    assert len(fits) == 1
    third.close()
    again.close()


def test_keywords_reach_the_library_space_but_not_arxiv_sanitys() -> None:
    from paperatlas.recommend.features import build_corpus
    from paperatlas.recommend.svm import SvmRecommender

    ids = [f"k{i}" for i in range(6)]
    abstracts = ["we study ranking of documents"] * 3 + ["we study images of cats"] * 3
    keywords = [["zebrafish"], [], [], [], [], ["zebrafish"]]
    corpus = build_corpus(ids, ids, abstracts, [[]] * 6, keywords=keywords)
    assert "zebrafish" in set(corpus.vocab)
    x, vocab = corpus.arxiv_sanity()
    assert "zebrafish" not in set(vocab) and x.shape[0] == 6
    # the keyword ties k0 to k5 for `default`'s features only; the faithful svm never sees it
    sims = (corpus.tfidf @ corpus.tfidf[0].T).toarray().ravel()
    assert sims[5] > sims[4]
    faithful = SvmRecommender().fit(corpus, Signals(likes=["k0"]))
    assert "zebrafish" not in faithful.explain([5])[0]
    same_text = SvmRecommender(library_text=True).fit(corpus, Signals(likes=["k0"]))
    assert same_text.scores[5] > same_text.scores[4] and faithful.scores[5] == pytest.approx(faithful.scores[4])
    # no keywords anywhere: one space, shared
    plain = build_corpus(ids, ids, abstracts, [[]] * 6)
    assert plain.svm_space is None and plain.arxiv_sanity()[0] is plain.tfidf
    assert corpus.svm_space is not None and corpus.arxiv_sanity()[0] is x  # fitted once, then kept


def test_arxiv_sanity_space_is_cached_in_its_own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import paperatlas.recommend.features as features

    ids = [f"c{i}" for i in range(4)]
    args = (ids, ids, ["ranking documents", "ranking images", "cats and dogs", "dogs"], [[]] * 4)
    kw = [["zebrafish"], [], [], ["zebrafish"]]
    folder = tmp_path / "lib.db.index" / "recommend-tfidf"
    first = features.build_corpus(*args, keywords=kw, cache=features.TfidfCache(folder))
    x1, v1 = first.arxiv_sanity()
    assert (folder / "key.json").is_file() and (folder.with_name("recommend-tfidf-arxiv-sanity") / "key.json").is_file()
    fits: list[int] = []
    real_fit = features._fit_tfidf
    monkeypatch.setattr(features, "_fit_tfidf", lambda texts, n: fits.append(n) or real_fit(texts, n))
    second = features.build_corpus(*args, keywords=kw, cache=features.TfidfCache(folder))
    x2, v2 = second.arxiv_sanity()
    assert fits == [] and (x1 != x2).nnz == 0 and list(v1) == list(v2) and "zebrafish" not in set(v2)
