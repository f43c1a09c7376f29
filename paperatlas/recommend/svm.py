"""`svm`: the arxiv-sanity-lite recommender, reproduced as its serve.py runs it.

TF-IDF (features.py, compute.py's settings, over title, abstract and authors: no
keywords, as arxiv has none), a LinearSVC with C=0.01 and balanced class weights,
liked papers positive and every other paper negative (dislikes are not used:
arxiv-sanity has none), ranked by the decision function.

`SvmRecommender(library_text=True)` reads the library's TF-IDF (keywords included)
instead; the evaluation shows it beside the faithful one, so the keywords' share of
`default`'s lead is visible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..i18n import gettext
from .base import RECOMMENDERS, Corpus, PriorScored, Scored, Signals

SVM_C = 0.01  # serve.py: "C = 0.01 # sensible default, i think"


@dataclass
class SvmScored:
    scores: np.ndarray
    corpus: Corpus
    weights: np.ndarray
    liked_rows: np.ndarray
    x: Any  # the TF-IDF matrix it was fitted on
    vocab: np.ndarray

    def explain(self, rows: Sequence[int]) -> list[str]:
        x = self.x
        out = []
        liked = x[self.liked_rows]
        for r in rows:
            xr = x[r]
            contrib = xr.multiply(self.weights).tocsr()
            words = []
            if contrib.nnz:
                order = np.argsort(-contrib.data)[:3]
                words = [
                    w
                    for w in (str(self.vocab[contrib.indices[i]]) for i in order if contrib.data[i] > 0)
                    if len(w) >= 3
                ]
            sims = (liked @ xr.T).toarray().ravel()
            why = []
            if len(sims):
                why.append(
                    gettext(
                        "closest to a paper you liked: {title!r}",
                        title=self.corpus.titles[self.liked_rows[int(np.argmax(sims))]],
                    )
                )
            if words:
                why.append(gettext("shares the words {words}", words=", ".join(words)))
            out.append(gettext("; ").join(why))
        return out


class SvmRecommender:
    """arxiv-sanity-lite's `svm_rank` with the reader's likes as the tag."""

    name = "svm"

    def __init__(self, C: float = SVM_C, library_text: bool = False) -> None:
        self.C = C
        self.library_text = library_text

    def fit(self, corpus: Corpus, signals: Signals) -> Scored:
        from sklearn import svm

        liked = corpus.rows(signals.likes)
        n = len(corpus)
        if len(liked) == 0 or len(liked) == n:  # arxiv-sanity returns nothing without positives
            return PriorScored(corpus.prior.copy())
        y = np.zeros(n, dtype=np.float32)
        y[liked] = 1.0
        clf = svm.LinearSVC(class_weight="balanced", verbose=False, max_iter=10000, tol=1e-6, C=self.C)
        x, vocab = (corpus.tfidf, corpus.vocab) if self.library_text else corpus.arxiv_sanity()
        clf.fit(x, y)
        s = clf.decision_function(x).astype(np.float32)
        return SvmScored(s, corpus, clf.coef_[0].astype(np.float32), liked, x, vocab)


RECOMMENDERS.register("svm", SvmRecommender)
