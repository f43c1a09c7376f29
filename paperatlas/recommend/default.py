"""`default`: the multi-interest recommender; its ranking is read off the reader's profile.

Score of a candidate = sum of standardised components:

* interests (the profile, several per reader: the VISTA idea): each active interest
  scores the candidate by its nearest member paper and its recency-weighted centroid,
  in embedding space and in TF-IDF keyword space (muted phrases zeroed), plus the
  phrases the reader added; an interest made only of phrases scores by them. The
  best interest counts, so a small interest is served next to a large one;
* the whole positive memory: the centroid of all likes (recent likes weigh more,
  long half-life);
* negative memory: the nearest "not interested" paper, recent ones weighing more
  (short half-life: separate positive and negative memories, the Walk2Pers idea);
* A/B choices: the topic scores learnt by triage (a Bradley-Terry model over topic
  memberships, triage.py); winners act as a weak extra interest, losers as weak
  dismissals (`choice_weight`);
* a metadata profile: how close a paper's year is to the liked papers' years, and
  how many likes share its venue series ("SIGIR '18" ~ "SIGIR '19"); both terms are
  constant, hence zero, on a single-venue, single-year list;
* free-text preferences: each signed phrase's embedding and keyword similarity
  (the Omni-Reward / PLUS idea).

Its keyword space is the library's TF-IDF, which reads the authors' keywords (x2,
features.py: +0.015 nDCG@10 on the ACM-CR tuning readers); `svm` keeps arxiv-sanity's
own text. Weights were tuned on the ACM-CR tuning readers and the simulated tuning
readers only (eval/recommend.py says which; docs/recommend.md has the numbers). On
the ACM-CR tuning readers the classifier dominates: pseudo-relevance feedback,
reciprocal-rank fusion, BM25 keyword similarity, a keyword/venue block or
LSA/whitened embeddings in the classifier, other C values and negative samples,
bagging, hub-corrected centroids, a kNN-graph walk and MMR diversification all
stayed within +-0.01 nDCG@10 of it; the metadata profile added +0.005 (0.3789 ->
0.3836), kept as cheap and harmless.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import interests as interests_mod
from . import preferences, saved, triage
from ..i18n import N_, gettext
from ..index.numpy import top_k
from .base import RECOMMENDERS, Corpus, PriorScored, Scored, Signals, zscore


@dataclass
class Weights:
    learned: float = 2.0  # the classifier over TF-IDF + embeddings (likes vs. hard and random negatives)
    interests: float = 0.0  # the best interest's score (below); 0 on the tuning data, which still
    # leaves interests deciding the positives, the phrases, the labels and the explanations
    knn_emb: float = 0.5  # per interest: nearest member, embeddings
    knn_kw: float = 0.5  # per interest: nearest member, TF-IDF
    cent_emb: float = 0.5  # per interest: centroid, embeddings
    cent_kw: float = 0.5  # per interest: centroid, TF-IDF
    all_emb: float = 0.75  # all likes' centroid, embeddings
    all_kw: float = 0.5  # all likes' centroid, TF-IDF
    phrase: float = 1.0  # added phrases, relative to a full interest
    neg: float = 0.5
    triage: float = 3.0  # the A/B choices' topic scores (triage.py)
    pref: float = 0.6
    half_life_pos: float = 200.0  # events; older likes fade slowly
    half_life_neg: float = 30.0  # dismissals fade faster: tastes change
    recency_penalty: float = 0.1  # a fully faded memory loses this much cosine
    choice_weight: float = 0.3  # a triage winner counts as this much of a like, a loser of a dismissal
    hard_negatives: int = 1000  # unlabelled papers the profile scores highest, as negatives
    random_negatives: int = 1000  # plus this many random unlabelled papers
    dislike_weight: float = 3.0  # an explicit "not interested" outweighs an unlabelled negative
    svm_c: float = 0.01
    year: float = 1.0  # metadata profile: closeness of a paper's year to the liked papers' years
    venue: float = 0.25  # metadata profile: share of likes in the paper's venue series
    year_bandwidth: float = 3.0  # years


def recency(n: int, half_life: float) -> np.ndarray:
    """Weights of n events, oldest first: the newest is 1, halving every `half_life` events."""
    age = np.arange(n - 1, -1, -1, dtype=np.float32)
    return np.power(0.5, age / max(half_life, 1e-6)).astype(np.float32)


def _dense(m: Any) -> np.ndarray:
    return np.asarray(m.toarray() if hasattr(m, "toarray") else m, dtype=np.float32)


def _svm_features(corpus: Corpus) -> Any:
    """[TF-IDF | embeddings] as one sparse matrix (cached on the corpus)."""
    f = corpus.cache.get("svm_features")
    if f is None:
        import scipy.sparse as sp

        f = corpus.tfidf if corpus.emb is None else sp.hstack([corpus.tfidf, sp.csr_matrix(corpus.emb)]).tocsr()
        corpus.cache["svm_features"] = f
    return f


def venue_series(venue: str) -> str:
    """ "SIGIR '18" and "SIGIR '19" are one series: drop digits and quotes, fold case."""
    return _SERIES.sub("", venue or "").strip().lower()


_SERIES = re.compile(r"[\d'’]+")


def metadata_profile(corpus: Corpus, rows: np.ndarray, ww: np.ndarray, w: Weights) -> dict[str, np.ndarray]:
    """The reader's metadata profile: how close each paper's year is to the liked papers' years
    (a kernel density) and how many likes share its venue series. Papers with no year or venue
    score neutral; on a single-venue, single-year list both terms are constant, so they vanish."""
    n, out = len(corpus), {}
    if not len(rows) or float(ww.sum()) <= 0:
        return out
    years = corpus.years
    if w.year and years is not None and len(years) == n:
        ly, lw = years[rows], ww
        known = ly > 0
        if lw[known].sum() > 0:
            uniq, inv = np.unique(years, return_inverse=True)
            d = (uniq[:, None] - ly[known][None, :]) / max(w.year_bandwidth, 1e-6)
            dens = (np.exp(-0.5 * d * d) * lw[known]).sum(1) / lw[known].sum()
            z = zscore(np.log(dens + 1e-3)[inv])
            z[years <= 0] = 0.0
            out["year"] = w.year * z
    if w.venue and len(corpus.venues) == n:
        codes = corpus.cache.get("venue_series")
        if codes is None:
            names: dict[str, int] = {}
            codes = np.array([names.setdefault(venue_series(v), len(names)) for v in corpus.venues], dtype=np.int64)
            codes = corpus.cache["venue_series"] = (codes, names.get("", -1), len(names))
        code, unknown, k = codes
        cnt = np.bincount(code[rows], weights=ww, minlength=k)
        z = zscore(np.log((cnt[code] + 0.5) / (float(ww.sum()) + 0.5)))
        z[code == unknown] = 0.0
        out["venue"] = w.venue * z
    return out


def _unit(v: np.ndarray) -> np.ndarray:
    return v / (np.linalg.norm(v) or 1.0)


@dataclass
class DefaultScored:
    scores: np.ndarray
    corpus: Corpus
    profile: dict[str, Any]
    parts: dict[str, np.ndarray] = field(default_factory=dict)  # weighted components (n,)
    pos_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    pos_sims: np.ndarray | None = None  # (n, P) similarity to each positive
    groups: list[tuple[dict[str, Any], np.ndarray]] = field(default_factory=list)  # (interest, columns of pos)
    interest_best: np.ndarray | None = None  # (n,) index into `groups` of the best interest
    kw_cents: np.ndarray | None = None  # (K, V) keyword centroid of each group
    phrase_sims: dict[str, np.ndarray] = field(default_factory=dict)
    pref_phrases: list[tuple[int, str, np.ndarray]] = field(default_factory=list)

    def explain(self, rows: Sequence[int]) -> list[str]:
        c = self.corpus
        out = []
        for r in rows:
            why: list[str] = []
            it, cols = ({}, np.arange(len(self.pos_rows)))
            if self.interest_best is not None:
                it, cols = self.groups[int(self.interest_best[r])]
            if len(cols):
                j = int(cols[int(np.argmax(self._pos_sims_row(r)[cols]))])
                why.append(gettext("because you liked {title!r}", title=_short(c.titles[self.pos_rows[j]])))
            phrase = max(it.get("added", []), key=lambda p: self.phrase_sims[p][r], default=None)
            if phrase is not None and self.phrase_sims[phrase][r] > 1.0:
                why.append(gettext("matches your phrase {phrase!r}", phrase=phrase))
            elif it and self.interest_best is not None:
                term = self._matching_term(r, int(self.interest_best[r]))
                label = it.get("label", "")
                label = gettext(label) if not it.get("id") else label  # "your likes": ours, not the reader's
                why.append(
                    gettext("matches {term!r} (interest: {label})", term=term, label=label)
                    if term
                    else gettext("interest: {label}", label=label)
                )
            for sign, p, sims in self.pref_phrases:
                if sign > 0 and sims[r] > 1.0:
                    why.append(gettext("your preference: more {phrase!r}", phrase=p))
                    break
            if "triage" in self.parts and self.parts["triage"][r] > 1.0:
                why.append(gettext("fits your A/B choices"))
            out.append(gettext("; ").join(why) or gettext("close to your profile"))
        return out

    def _pos_sims_row(self, r: int) -> np.ndarray:
        """Similarity of row r to every positive (computed here when fit() skipped the full matrix)."""
        if self.pos_sims is not None:
            return self.pos_sims[r]
        c = self.corpus
        if c.emb is not None:
            return c.emb[self.pos_rows] @ c.emb[r]
        return _dense(c.tfidf[self.pos_rows] @ c.tfidf[r].T).ravel()

    def _matching_term(self, r: int, k: int) -> str:
        if self.kw_cents is None:
            return ""
        xr = self.corpus.tfidf[r]
        if not xr.nnz:
            return ""
        contrib = xr.data * self.kw_cents[k, xr.indices] * self.corpus.label_mask[xr.indices]
        if not len(contrib) or contrib.max() <= 0:
            return ""
        for i in np.argsort(-contrib)[:8]:  # the strongest term a reader can read ("tr" is no reason)
            term = str(self.corpus.vocab[xr.indices[int(i)]])
            if contrib[i] > 0 and readable_term(term):
                return term
        return ""


def readable_term(term: str) -> bool:
    """A term worth showing as a reason: every word 3+ characters with a letter, not a bare number."""
    words = term.split()
    return bool(words) and all(len(w) >= 3 and any(ch.isalpha() for ch in w) for w in words)


def _short(title: str, n: int = 80) -> str:
    return title if len(title) <= n else title[: n - 1].rstrip() + "…"


class DefaultRecommender:
    name = "default"

    def __init__(self, weights: Weights | None = None, use_negatives: bool = True, **overrides: float) -> None:
        self.w = weights or Weights()
        for k, v in overrides.items():
            if not hasattr(self.w, k):
                raise TypeError(f"unknown weight {k!r}")
            setattr(self.w, k, v)
        self.use_negatives = use_negatives

    def fit(self, corpus: Corpus, signals: Signals) -> Scored:
        w = self.w
        n = len(corpus)
        if signals.empty or n == 0:
            return PriorScored(corpus.prior.copy())
        profile = signals.profile
        if profile is None or not isinstance(profile, dict) or "interests" not in profile:
            profile, _ = interests_mod.sync(None, corpus, signals.likes)
        emb, x = corpus.emb, corpus.tfidf
        res = DefaultScored(np.zeros(n, np.float32), corpus, profile)
        parts = res.parts

        # positives: likes outside removed interests (recency-weighted), then triage winners (weaker)
        removed = {p for it in profile.get("interests", []) if it.get("removed") for p in it.get("papers", [])}
        likes = [p for p in dict.fromkeys(signals.likes) if p in corpus.pos and p not in removed]
        winners = [wn for wn, _ in signals.choices if wn in corpus.pos and wn not in removed]
        pos_w = np.concatenate(
            [recency(len(likes), w.half_life_pos), recency(len(winners), w.half_life_pos) * w.choice_weight]
        )
        prow = corpus.rows(likes + winners)
        col_of = {p: j for j, p in enumerate(likes)}
        # negatives: "not interested" (recent ones count more), then triage losers
        dis = [p for p in dict.fromkeys(signals.dislikes) if p in corpus.pos] if self.use_negatives else []
        losers = [lo for _, lo in signals.choices if lo in corpus.pos] if self.use_negatives else []
        neg_w = np.concatenate(
            [recency(len(dis), w.half_life_neg), recency(len(losers), w.half_life_neg) * w.choice_weight]
        )
        nrow = corpus.rows(dis + losers)

        # the profile's active interests -> groups of positive columns (+ winners as one more group)
        groups: list[tuple[dict[str, Any], np.ndarray]] = []
        for it in profile.get("interests", []):
            if it.get("removed"):
                continue
            cols = np.array([col_of[p] for p in it.get("papers", []) if p in col_of], dtype=np.int64)
            if len(cols) or it.get("added"):
                groups.append((it, cols))
        known = {int(c) for _, cols in groups for c in cols}
        stray = [j for j in range(len(likes)) if j not in known]  # likes the profile has not placed
        if stray:
            groups.append(({"id": "", "label": N_("your likes")}, np.array(stray, dtype=np.int64)))
        if winners:
            groups.append(({"id": "", "label": N_("your A/B choices")}, np.arange(len(likes), len(prow))))

        # centroid query vectors: one per group with papers, and one of all positives
        def centroid(rows: np.ndarray, ww: np.ndarray, muted: Sequence[str] = ()) -> tuple[Any, np.ndarray]:
            ck = np.asarray(x[rows].multiply(ww[:, None]).sum(0), dtype=np.float32).ravel()
            for m in muted:  # a muted phrase stops counting for this interest
                j = corpus.vectorizer.vocabulary_.get(m)
                if j is not None:
                    ck[j] = 0.0
            ce = _unit((emb[rows] * ww[:, None]).sum(0)) if emb is not None else None
            return ce, _unit(ck)

        cents = [centroid(prow[cols], pos_w[cols], it.get("muted", [])) if len(cols) else None for it, cols in groups]
        all_cent = centroid(prow, pos_w) if len(prow) else None
        qk = [c[1] for c in cents if c is not None] + ([all_cent[1]] if all_cent else [])
        qe = [c[0] for c in cents if c is not None] + ([all_cent[0]] if all_cent else [])

        # one pass over each matrix: similarity to every negative and centroid at once, and to every
        # positive when the per-interest nearest-neighbour term is used (else explain() computes the
        # few rows it shows: the full (n, P) product is the costliest step for a long history)
        P, N, C = len(prow), len(nrow), len(qk)
        Pk = P if w.interests > 0 else 0
        sk = np.empty((n, Pk + N + C), np.float32)
        if Pk + N:
            sk[:, : Pk + N] = _dense(x @ x[np.concatenate([prow[:Pk], nrow])].T.toarray())
        if C:
            sk[:, Pk + N :] = _dense(x @ np.stack(qk).T)
        se = None
        if emb is not None and Pk + N + C:
            se = emb @ np.concatenate([emb[prow[:Pk]], emb[nrow]] + ([np.stack(qe)] if C else [])).T

        res.pos_rows, res.groups = prow, groups
        if Pk:
            res.pos_sims = se[:, :P] if se is not None else sk[:, :P]
        pen = w.recency_penalty * (1.0 - pos_w)[None, :]
        ke, kk = (se[:, :Pk] - pen if se is not None and Pk else None), (sk[:, :Pk] - pen if Pk else None)

        paper_part, phrase_part, kw_cents, ci = [], [], [], 0
        for (it, cols), cent in zip(groups, cents):
            comp = np.zeros(n, np.float32)
            if len(cols):
                comp += w.cent_kw * zscore(sk[:, Pk + N + ci])
                if se is not None:
                    comp += w.cent_emb * zscore(se[:, Pk + N + ci])
                if kk is not None:
                    comp += w.knn_kw * zscore(kk[:, cols].max(1))
                if ke is not None:
                    comp += w.knn_emb * zscore(ke[:, cols].max(1))
                kw_cents.append(qk[ci])
                ci += 1
            else:
                kw_cents.append(np.zeros(x.shape[1], np.float32))
            phr = None
            if it.get("added"):
                sims = [self._phrase_sims(corpus, p) for p in it["added"]]
                res.phrase_sims.update(zip(it["added"], sims))
                phr = np.max(np.stack(sims), axis=0)
                # a phrase-only interest ranks by its phrases as strongly as liked papers rank their
                # neighbours (classifier + all-likes terms); on an interest with papers, phrases refine it
                full = w.all_kw + w.learned + (w.all_emb if se is not None else 0.0)
                phr = (0.5 if len(cols) else full) * w.phrase * phr
            paper_part.append(comp)
            phrase_part.append(phr)
        if paper_part:
            papers_ = np.stack(paper_part)
            phrases_ = np.stack([p if p is not None else np.full(n, -np.inf, np.float32) for p in phrase_part])
            res.interest_best = np.argmax(papers_ + np.where(np.isfinite(phrases_), phrases_, 0.0), axis=0)
            res.kw_cents = np.stack(kw_cents)
            if w.interests:
                parts["interests"] = w.interests * papers_.max(0)
            if any(p is not None for p in phrase_part):
                parts["phrases"] = phrases_.max(0)
        if all_cent is not None:
            parts["all"] = w.all_kw * zscore(sk[:, Pk + N + C - 1])
            if se is not None:
                parts["all"] += w.all_emb * zscore(se[:, Pk + N + C - 1])

        if len(likes) and w.learned > 0:
            parts["learned"] = w.learned * self._learned(
                corpus, prow[: len(likes)], corpus.rows(dis), sum(parts.values()) if parts else np.zeros(n, np.float32)
            )
        if len(prow) and (w.year or w.venue):
            parts.update(metadata_profile(corpus, prow, pos_w, w))
        if N:
            npen = w.recency_penalty * (1.0 - neg_w)[None, :]
            negz = zscore((sk[:, Pk : Pk + N] - npen).max(1))
            if se is not None:
                negz = 0.5 * negz + 0.5 * zscore((se[:, Pk : Pk + N] - npen).max(1))
            parts["neg"] = -w.neg * negz

        if signals.choices:  # A/B choices: the Bradley-Terry utility
            u = triage.utility(corpus, signals.choices)
            if u is not None:
                parts["triage"] = w.triage * zscore(u.astype(np.float32))

        for sign, phrase in preferences.parse(signals.preferences):  # free-text preferences
            ps = self._phrase_sims(corpus, phrase)
            res.pref_phrases.append((sign, phrase, ps))
            parts["pref"] = parts.get("pref", np.zeros(n, np.float32)) + sign * w.pref * ps

        res.scores = np.sum(np.stack(list(parts.values())), axis=0) if parts else np.zeros(n, np.float32)
        return res

    def _learned(self, corpus: Corpus, pos: np.ndarray, dis: np.ndarray, prelim: np.ndarray) -> np.ndarray:
        """A linear SVM over [TF-IDF, embeddings]: likes against explicit dislikes (weighted up),
        the unlabelled papers the rest of the profile already ranks high (hard negatives) and a
        random sample. arxiv-sanity uses every other paper as a negative; the far ones are never
        support vectors, so sampling keeps its quality (better, on the ACM-CR tuning readers)
        at a fraction of the cost. Its scores are saved (saved.py): the same history on the same
        library reads them back instead of refitting."""
        w, n = self.w, len(corpus)
        taken = np.zeros(n, dtype=bool)
        taken[pos] = True
        s = prelim.astype(np.float64, copy=True)
        s[taken] = -np.inf
        hard = top_k(s, w.hard_negatives) if w.hard_negatives else np.zeros(0, np.int64)
        rng = np.random.default_rng(len(pos))  # deterministic for a given history
        rnd = rng.choice(n, min(n, w.random_negatives), replace=False)
        neg = np.setdiff1d(np.unique(np.concatenate([hard, rnd, dis]).astype(np.int64)), pos)
        if not len(neg):
            return np.zeros(n, np.float32)
        rows = np.concatenate([pos, neg])
        y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
        sw = np.where(np.isin(neg, dis), w.dislike_weight, 1.0)
        disk = saved.saved_scores(corpus)
        k = saved.key(corpus, "learned: LinearSVC balanced", rows, sw, len(pos), w.svm_c)
        out = disk.get(k, n)
        if out is not None:
            return out
        from sklearn import svm

        feats = _svm_features(corpus)
        clf = svm.LinearSVC(class_weight="balanced", C=w.svm_c, max_iter=10000, tol=1e-4)
        clf.fit(feats[rows], y, sample_weight=np.r_[np.ones(len(pos)), sw])
        out = zscore(clf.decision_function(feats).astype(np.float32))
        disk.put(k, out)
        return out

    @staticmethod
    def _phrase_sims(corpus: Corpus, phrase: str) -> np.ndarray:
        """Standardised similarity of every paper to a phrase: embedding and keyword, averaged."""
        key = "phrase_sims:" + phrase
        if key in corpus.cache:
            return corpus.cache[key]
        ev, xv = corpus.phrase_vectors(phrase)
        s = zscore(_dense(corpus.tfidf @ xv.T).ravel())
        if ev is not None and corpus.emb is not None:
            s = 0.5 * s + 0.5 * zscore(corpus.emb @ ev)
        corpus.cache[key] = s
        return s


RECOMMENDERS.register("default", DefaultRecommender)
