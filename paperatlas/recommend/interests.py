"""The reader profile: a few labelled interests that summarise a long like history.

Each interest is a group of liked papers with key phrases (its label), phrases the
reader added and phrases the reader muted. The default recommender ranks from this
profile, so editing it (remove an interest, add or mute a phrase) changes the ranking.

The profile is a plain JSON dict stored on the reader, and it is *updated
incrementally* (the VISTA idea: summarise the history into K interest vectors that
are kept, not recomputed): a new like joins the nearest interest, or starts a new
one when it is far from all of them; the likes are re-clustered only when the
history has doubled since the last clustering, and user edits survive that.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import Corpus

PROFILE_VERSION = 1
MAX_INTERESTS = 8
JOIN_QUANTILE = 0.25  # a new like joins its nearest interest if it is in the closest quarter of the corpus
Profile = dict[str, Any]


def empty_profile() -> Profile:
    return {"version": PROFILE_VERSION, "interests": [], "clustered_at": 0, "next_id": 1}


def choose_k(n: int) -> int:
    """How many interests for n likes: one per ~3 likes at first, growing like sqrt(n), at most 8."""
    if n <= 2:
        return 1
    return max(1, min(MAX_INTERESTS, round(math.sqrt(n / 1.5)), n // 2))


def vectors(corpus: Corpus, rows: np.ndarray) -> np.ndarray:
    """Row vectors for clustering: embeddings, or dense TF-IDF where the library has none."""
    if corpus.emb is not None:
        return corpus.emb[rows]
    return np.asarray(corpus.tfidf[rows].todense(), dtype=np.float32)


def _normalise(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n > 0, n, 1.0)


def spherical_kmeans(x: np.ndarray, k: int, seed: int = 0, iters: int = 25) -> np.ndarray:
    """Cluster labels of unit vectors by cosine (k-means++ start, deterministic for a seed)."""
    n = x.shape[0]
    k = max(1, min(k, n))
    if k == 1:
        return np.zeros(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    centers = [x[int(rng.integers(n))]]
    for _ in range(1, k):
        d = 1.0 - np.max(x @ np.stack(centers).T, axis=1)
        d = np.clip(d, 0, None) ** 2
        p = d / d.sum() if d.sum() > 0 else np.full(n, 1.0 / n)
        centers.append(x[int(rng.choice(n, p=p))])
    c = np.stack(centers)
    labels = np.full(n, -1)
    for _ in range(iters):
        new = np.argmax(x @ c.T, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            m = labels == j
            c[j] = _normalise(x[m].sum(0)) if m.any() else x[int(rng.integers(n))]
    return labels


def key_phrases(corpus: Corpus, rows: Sequence[int], n: int = 5, muted: Sequence[str] = ()) -> list[str]:
    """Readable key phrases of a group of papers: shared author keywords first, then the TF-IDF
    terms with the highest mean weight in the group (bigrams preferred, author names skipped)."""
    rows = list(rows)
    if not rows:
        return []
    muted_set = {m.lower() for m in muted}
    out: list[str] = []
    kw = Counter(k.strip().lower() for r in rows for k in set(corpus.keywords[r]) if k.strip())
    for k, c in kw.most_common():
        if c >= 2 and k not in muted_set and len(k) <= 40:
            out.append(k)
        if len(out) >= 2:
            break
    w = np.asarray(corpus.tfidf[rows].mean(axis=0)).ravel() * corpus.label_mask
    bigram = corpus.cache.get("bigram")
    if bigram is None:
        bigram = corpus.cache["bigram"] = np.array([" " in str(v) for v in corpus.vocab], dtype=bool)
    w = w * np.where(bigram, 1.3, 1.0)
    for i in np.argsort(-w)[: 10 * n]:
        if w[i] <= 0 or len(out) >= n:
            break
        term = str(corpus.vocab[i])
        # "simulation based" then "based inference": n-grams that share a word say the same thing twice
        if term in muted_set or any(term in o or o in term or set(term.split()) & set(o.split()) for o in out):
            continue
        out.append(term)
    return out


def _label(phrases: Sequence[str]) -> str:
    return " · ".join(phrases[:3]) if phrases else "(no key phrases)"


def _new_interest(profile: Profile, papers: list[str], corpus: Corpus) -> dict[str, Any]:
    iid = f"i{profile.get('next_id', 1)}"
    profile["next_id"] = profile.get("next_id", 1) + 1
    it: dict[str, Any] = {
        "id": iid,
        "papers": papers,
        "added": [],
        "muted": [],
        "removed": False,
        "label_locked": False,
    }
    relabel(it, corpus)
    return it


def relabel(it: dict[str, Any], corpus: Corpus) -> None:
    rows = corpus.rows(it.get("papers", []))
    it["phrases"] = key_phrases(corpus, rows, muted=it.get("muted", []))
    if not it.get("label_locked"):
        it["label"] = _label(it["phrases"] or it.get("added", []))


def liked_in_profile(profile: Profile) -> set[str]:
    return {p for it in profile.get("interests", []) for p in it.get("papers", [])}


def sync(profile: Profile | None, corpus: Corpus, likes: Sequence[str], seed: int = 0) -> tuple[Profile, bool]:
    """Bring the profile up to date with the reader's likes. Returns (profile, changed)."""
    changed = profile is None or profile.get("version") != PROFILE_VERSION
    prof: Profile = empty_profile() if changed else profile  # type: ignore[assignment]
    prof = {**prof, "interests": [dict(i) for i in prof.get("interests", [])]}
    liked = [p for p in dict.fromkeys(likes) if p in corpus.pos]
    liked_set = set(liked)
    for it in prof["interests"]:  # an unliked paper leaves its interest
        kept = [p for p in it.get("papers", []) if p in liked_set]
        if kept != it.get("papers", []):
            it["papers"] = kept
            changed = True
    removed_papers = {p for it in prof["interests"] if it.get("removed") for p in it["papers"]}
    active = [p for p in liked if p not in removed_papers]
    auto = [it for it in prof["interests"] if not it.get("removed") and it.get("papers")]
    n = len(active)
    if n and (not auto or n >= 2 * max(1, prof.get("clustered_at", 0))) and n != prof.get("clustered_at"):
        _recluster(prof, corpus, active, seed)
        return prof, True
    known = liked_in_profile(prof)
    new = [p for p in active if p not in known]
    if new:
        _assign(prof, corpus, new)
        changed = True
    # interests that lost all their papers and have no phrases are gone
    before = len(prof["interests"])
    prof["interests"] = [it for it in prof["interests"] if it.get("papers") or it.get("added")]
    if changed or len(prof["interests"]) != before:
        for it in prof["interests"]:
            relabel(it, corpus)
        changed = True
    return prof, changed


def _assign(prof: Profile, corpus: Corpus, new: list[str]) -> None:
    """Add new likes one by one: to the nearest active interest, or to a new one if far from all.

    "Far" is judged against the corpus, not by a cosine threshold (which would depend on the
    embedding model): the like joins when it is among the JOIN_QUANTILE papers closest to
    that interest's centroid, or within twice the share of the corpus that its members span."""
    for pid in new:
        its = [it for it in prof["interests"] if not it.get("removed") and it.get("papers")]
        v = vectors(corpus, corpus.rows([pid]))[0]
        if its:
            cents = np.stack([_normalise(vectors(corpus, corpus.rows(it["papers"])).sum(0)) for it in its])
            sims = cents @ v
            j = int(np.argmax(sims))
            cs = _corpus_sims(corpus, cents[j])
            closer = float((cs > sims[j]).mean())
            # ...or when it is no farther out than twice the interest's own farthest member
            members = cs[corpus.rows(its[j]["papers"])]
            spread = float((cs > members.min()).mean())
            n_active = sum(1 for it in prof["interests"] if not it.get("removed"))
            if closer <= max(JOIN_QUANTILE, 2 * spread) or n_active >= MAX_INTERESTS:
                its[j]["papers"] = its[j]["papers"] + [pid]
                continue
        prof["interests"].append(_new_interest(prof, [pid], corpus))


def _corpus_sims(corpus: Corpus, c: np.ndarray) -> np.ndarray:
    if corpus.emb is not None:
        return corpus.emb @ c
    return np.asarray(corpus.tfidf @ c).ravel()


def _recluster(prof: Profile, corpus: Corpus, active: list[str], seed: int) -> None:
    """Cluster the active likes afresh; carry the reader's edits over to the new interests."""
    rows = corpus.rows(active)
    labels = spherical_kmeans(_normalise(vectors(corpus, rows)), choose_k(len(active)), seed)
    old = [it for it in prof["interests"] if not it.get("removed")]
    keep = [it for it in prof["interests"] if it.get("removed") or not it.get("papers")]
    fresh: list[dict[str, Any]] = []
    for j in sorted(set(labels.tolist())):
        papers = [active[i] for i in np.flatnonzero(labels == j)]
        it = _new_interest(prof, papers, corpus)
        # inherit phrases, mutes and a renamed label from the old interest it overlaps most
        best = max(old, key=lambda o: len(set(o.get("papers", [])) & set(papers)), default=None)
        if best is not None and set(best.get("papers", [])) & set(papers):
            it["added"] = list(best.get("added", []))
            it["muted"] = list(best.get("muted", []))
            if best.get("label_locked"):
                it["label"], it["label_locked"] = best["label"], True
            relabel(it, corpus)
        fresh.append(it)
    fresh.sort(key=lambda it: -len(it["papers"]))
    prof["interests"] = fresh + keep
    prof["clustered_at"] = len(active)


# -- edits (each returns a new profile dict) ----------------------------------------------------
def find(prof: Profile, interest_id: str) -> dict[str, Any] | None:
    return next((it for it in prof.get("interests", []) if it["id"] == interest_id), None)


def add_phrase(prof: Profile, corpus: Corpus, phrase: str, interest_id: str | None = None) -> Profile:
    """Add a phrase to an interest, or (no id) make it a new interest of its own."""
    prof = {**prof, "interests": [dict(i) for i in prof.get("interests", [])]}
    phrase = re.sub(r"\s+", " ", phrase).strip()
    if interest_id:
        it = find(prof, interest_id)
        if it is None:
            raise KeyError(interest_id)
        if phrase not in it.get("added", []):
            it["added"] = it.get("added", []) + [phrase]
        relabel(it, corpus)
    else:
        it = _new_interest(prof, [], corpus)
        it["added"] = [phrase]
        it["label"], it["label_locked"] = phrase, True
        prof["interests"].append(it)
    return prof


def remove_phrase(prof: Profile, corpus: Corpus, interest_id: str, phrase: str) -> Profile:
    """Drop an added phrase, or mute a key phrase (its term then stops counting for that interest)."""
    prof = {**prof, "interests": [dict(i) for i in prof.get("interests", [])]}
    it = find(prof, interest_id)
    if it is None:
        raise KeyError(interest_id)
    if phrase in it.get("added", []):
        it["added"] = [p for p in it["added"] if p != phrase]
    else:
        it["muted"] = list(dict.fromkeys(it.get("muted", []) + [phrase.lower()]))
    relabel(it, corpus)
    if not it.get("papers") and not it.get("added"):
        prof["interests"] = [i for i in prof["interests"] if i["id"] != interest_id]
    return prof


def set_removed(prof: Profile, interest_id: str, removed: bool = True) -> Profile:
    prof = {**prof, "interests": [dict(i) for i in prof.get("interests", [])]}
    it = find(prof, interest_id)
    if it is None:
        raise KeyError(interest_id)
    it["removed"] = removed
    return prof


def rename(prof: Profile, interest_id: str, label: str) -> Profile:
    prof = {**prof, "interests": [dict(i) for i in prof.get("interests", [])]}
    it = find(prof, interest_id)
    if it is None:
        raise KeyError(interest_id)
    it["label"], it["label_locked"] = label.strip(), bool(label.strip())
    return prof
