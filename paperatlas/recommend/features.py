"""Candidate features: the arxiv-sanity-lite TF-IDF matrix plus the library's embeddings.

Built once per library version and kept by `lib.recommend` (Recommend.corpus); the fitted TF-IDF part (~5 s
at 8k papers) is also saved beside the library (`<db>.index/recommend-tfidf/`), so a
new process (a CLI call, a server worker) loads it in ~0.1 s.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..files import swap_in
from ..models import Paper
from .base import Corpus
from .saved import fingerprint

# arxiv-sanity-lite compute.py defaults (HEAD): 20k features, min_df 5, max_df 0.1, 1-2 grams,
# sublinear tf, English stop words, tokens that start with a letter.
TFIDF_OPTIONS: dict[str, Any] = dict(
    input="content",
    encoding="utf-8",
    decode_error="replace",
    strip_accents="unicode",
    lowercase=True,
    analyzer="word",
    stop_words="english",
    token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b",
    ngram_range=(1, 2),
    max_features=20000,
    norm="l2",
    use_idf=True,
    smooth_idf=True,
    sublinear_tf=True,
)
STATUS_PRIOR = {"oral": 2.0, "spotlight": 1.0}
_WORD = re.compile(r"[a-z][a-z0-9_]+")


def tfidf_text(title: str, abstract: str, authors: Sequence[str]) -> str:
    """The text arxiv-sanity-lite vectorises: title, abstract and author names (the `svm` baseline's)."""
    return " ".join([title, abstract, " ".join(authors)])


KEYWORD_REPEAT = 2  # see with_keywords


def with_keywords(text: str, keywords: Sequence[str]) -> str:
    """The text the library's own recommenders vectorise: arxiv-sanity's (`tfidf_text`) plus the
    authors' keywords, counted twice, since the authors chose them to name the paper's topics.
    On the ACM-CR tuning readers keywords x1 / x2 / x3 gave +0.009 / +0.015 / +0.011 nDCG@10."""
    kw = " ".join(keywords)
    return " ".join([text, *([kw] * KEYWORD_REPEAT)]) if kw else text


def make_vectorizer(n_docs: int) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    # arxiv-sanity's min_df=5 / max_df=0.1 assume a large corpus; on a few hundred papers
    # they would leave almost no features, so small libraries keep every word.
    big = n_docs >= 2000
    return TfidfVectorizer(**TFIDF_OPTIONS, min_df=5 if big else 1, max_df=0.1 if big else 0.5)


def _fit_tfidf(texts: list[str], n: int) -> tuple[Any, Any]:
    vec = make_vectorizer(n)
    try:
        return vec, vec.fit_transform(texts).astype(np.float32).tocsr()
    except ValueError:  # empty vocabulary (an empty or stop-word-only library): keep every token
        from sklearn.feature_extraction.text import TfidfVectorizer

        vec = TfidfVectorizer(**{**TFIDF_OPTIONS, "stop_words": None}, min_df=1, max_df=1.0)
        return vec, vec.fit_transform(texts + ["paper"]).astype(np.float32).tocsr()[:n]


class FittedVectorizer:
    """A fitted TF-IDF vectoriser as the cache holds it: vocabulary and weights at once, the
    scikit-learn object (whose import alone takes about a second) only when a text must be
    transformed. A command that reads stored features and never vectorises a phrase skips it."""

    def __init__(self, params: dict[str, Any], vocab: list[str], idf: np.ndarray) -> None:
        self.params = params
        self.vocabulary_ = {t: i for i, t in enumerate(vocab)}
        self.idf_ = idf
        self._names = np.array(vocab, dtype=object)
        self._fitted: Any = None

    def get_feature_names_out(self) -> np.ndarray:
        return self._names

    def get_params(self) -> dict[str, Any]:
        return {**TFIDF_OPTIONS, **self.params}

    def transform(self, docs: Sequence[str]) -> Any:
        if self._fitted is None:
            from sklearn.feature_extraction.text import TfidfVectorizer

            vec = TfidfVectorizer(**self.get_params())
            vec.vocabulary_ = self.vocabulary_
            vec.idf_ = self.idf_
            self._fitted = vec
        return self._fitted.transform(docs)


class TfidfCache:
    """The fitted TF-IDF matrix and vocabulary of one library version, in plain files (npz,
    npy, JSON: nothing that unpickles) beside the library. Fitting takes ~5 s at 8k papers;
    loading ~0.1 s, so `paperatlas recommend` and each `serve` worker skip the refit."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def variant(self, name: str) -> TfidfCache:
        """A cache for another text variant, in a sibling folder (a save replaces its whole folder)."""
        return TfidfCache(self.folder.with_name(f"{self.folder.name}-{name}") if self.folder else None)

    @staticmethod
    def key(texts: Sequence[str]) -> dict[str, Any]:
        """Exactly what the fit depends on: the texts (hashed) and the options."""
        h = hashlib.sha1()
        for t in texts:
            h.update(t.encode("utf-8", "surrogatepass"))
            h.update(b"\x00")
        return {"texts": h.hexdigest(), "n": len(texts), "options": repr(sorted(TFIDF_OPTIONS.items()))}

    def load(self, texts: Sequence[str]) -> tuple[Any, Any] | None:
        if self.folder is None:
            return None
        n = len(texts)
        try:
            if json.loads((self.folder / "key.json").read_text(encoding="utf-8")) != self.key(texts):
                return None
            import scipy.sparse as sp

            x = sp.load_npz(self.folder / "tfidf.npz").astype(np.float32).tocsr()
            vocab = json.loads((self.folder / "vocab.json").read_text(encoding="utf-8"))
            idf = np.load(self.folder / "idf.npy", allow_pickle=False)
            params = json.loads((self.folder / "params.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError):
            return None
        if x.shape != (n, len(vocab)) or len(idf) != len(vocab):
            return None
        return FittedVectorizer(params, vocab, idf), x

    def save(self, texts: Sequence[str], vec: Any, x: Any) -> None:
        """Write to a temporary folder, then swap it in (a reader never sees half a cache)."""
        if self.folder is None:
            return
        import scipy.sparse as sp

        def write(tmp: Path) -> None:
            sp.save_npz(tmp / "tfidf.npz", x)
            (tmp / "vocab.json").write_text(json.dumps([str(t) for t in vec.get_feature_names_out()]), encoding="utf-8")
            np.save(tmp / "idf.npy", np.asarray(vec.idf_))
            # what differs from TFIDF_OPTIONS (min_df, max_df; no stop words in the fallback)
            params = {k: vec.get_params()[k] for k in ("stop_words", "min_df", "max_df")}
            (tmp / "params.json").write_text(json.dumps(params), encoding="utf-8")
            (tmp / "key.json").write_text(json.dumps(self.key(texts)), encoding="utf-8")

        swap_in(self.folder, write)  # a read-only folder: recommendations work, the next process refits


def build_corpus(
    ids: list[str],
    titles: list[str],
    abstracts: list[str],
    authors: list[list[str]],
    emb: np.ndarray | None = None,
    statuses: Sequence[str] | None = None,
    keywords: list[list[str]] | None = None,
    embed_query: Callable[[str], np.ndarray] | None = None,
    venues: Sequence[str] | None = None,
    years: Sequence[int | None] | None = None,
    cache: TfidfCache | None = None,
) -> Corpus:
    """Fit the TF-IDF features over these papers (or load them from `cache`) and wrap
    everything in a Corpus. When some papers have keywords, two spaces are fitted: the
    library's (keywords included) and arxiv-sanity's own, which only `svm` reads (so it is
    fitted when `svm` first asks)."""
    n = len(ids)
    kws = keywords or [[] for _ in ids]
    baseline = [tfidf_text(t, a, au) for t, a, au in zip(titles, abstracts, authors)]
    texts = [with_keywords(b, k) for b, k in zip(baseline, kws)]
    vec, x = _cached_fit(texts, cache)
    svm_space = None
    if texts != baseline:

        def svm_space() -> tuple[Any, np.ndarray]:
            bvec, bx = _cached_fit(baseline, cache.variant("arxiv-sanity") if cache is not None else None)
            return bx, bvec.get_feature_names_out()

    vocab = vec.get_feature_names_out()
    name_tokens = {w for au in authors for a in au for w in _WORD.findall(a.lower())}
    label_mask = np.array(
        [not any(w in name_tokens for w in f.split()) and not f[-1].isdigit() for f in vocab], dtype=bool
    )
    prior = np.array([STATUS_PRIOR.get((s or "").lower(), 0.0) for s in (statuses or [""] * n)], dtype=np.float32)
    emb_mean = None
    if emb is not None:
        emb, emb_mean = center(np.asarray(emb, dtype=np.float32))
    return Corpus(
        ids=ids,
        titles=titles,
        emb=emb,
        tfidf=x,
        vocab=vocab,
        label_mask=label_mask,
        vectorizer=vec,
        prior=prior,
        keywords=kws,
        embed_query=embed_query,
        emb_mean=emb_mean,
        svm_space=svm_space,
        venues=list(venues) if venues is not None else [""] * n,
        years=np.array([int(y or 0) for y in (years if years is not None else [0] * n)], dtype=np.int64),
    )


def _cached_fit(texts: list[str], cache: TfidfCache | None) -> tuple[Any, Any]:
    loaded = cache.load(texts) if cache is not None else None
    if loaded is not None:
        return loaded
    vec, x = _fit_tfidf(texts, len(texts))
    if cache is not None:
        cache.save(texts, vec, x)
    return vec, x


def center(emb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Subtract the corpus mean and re-normalise. Sentence embeddings share a large common
    direction, so raw cosines barely separate topics; centred ones do (on the ACM-CR tuning
    readers, centring doubled nDCG@10 of embedding nearest neighbours)."""
    have = np.linalg.norm(emb, axis=1) > 0
    mean = emb[have].mean(0) if have.any() else np.zeros(emb.shape[1], np.float32)
    out = np.where(have[:, None], emb - mean, 0.0).astype(np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.ascontiguousarray(out / np.where(norms > 0, norms, 1.0)), mean.astype(np.float32)


def corpus_from_papers(
    papers: Sequence[Paper],
    vectors: tuple[list[str], np.ndarray] | None = None,
    embed_query: Callable[[str], np.ndarray] | None = None,
    cache: TfidfCache | None = None,
) -> Corpus:
    """A Corpus over these papers; `vectors` = (ids, matrix) of whatever embeddings exist."""
    ids = [p.id for p in papers]
    emb = _aligned(ids, vectors)
    corpus = build_corpus(
        ids,
        [p.title if not p.title_derived else "" for p in papers],
        [p.abstract for p in papers],
        [p.authors for p in papers],
        emb,
        [p.status for p in papers],
        [p.keywords for p in papers],
        embed_query,
        [p.venue for p in papers],
        [p.year for p in papers],
        cache,
    )
    corpus.titles = [p.title for p in papers]  # derived titles are shown, just not vectorised twice
    return corpus


def _aligned(ids: Sequence[str], vectors: tuple[list[str], np.ndarray] | None) -> np.ndarray | None:
    """The embedding of each id, in `ids` order (zero rows where a paper has none)."""
    if vectors is None or not len(vectors[0]):
        return None
    vid, mat = vectors
    if list(vid) == list(ids):  # the usual case (both in the store's order): no per-paper lookups
        return np.array(mat, dtype=np.float32)
    row = {pid: i for i, pid in enumerate(vid)}
    have = [(i, row[pid]) for i, pid in enumerate(ids) if pid in row]
    emb = np.zeros((len(ids), mat.shape[1]), dtype=np.float32)
    if have:
        dst, src = (np.array(x, dtype=np.int64) for x in zip(*have))
        emb[dst] = mat[src]
    return emb


class CorpusCache:
    """The whole corpus of one library generation (the store's data version, the embedding model and
    its vector count) in plain files beside the library: the TF-IDF matrix, the vocabulary and what
    the recommenders read of each paper. A new process (a CLI call, a server worker) then loads the
    corpus without reading every paper back from the store (1 s at 8k papers, 10 s at 100k) or
    hashing their texts; any change of papers or vectors is a new generation, so it is never stale.
    The centred embeddings are saved too (their model and count are part of the generation, and a
    paper's vector changes only with its text)."""

    FORMAT = 2

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def _key(self, version: Any) -> dict[str, Any]:
        return {"format": self.FORMAT, "version": repr(version), "options": repr(sorted(TFIDF_OPTIONS.items()))}

    def load(
        self,
        version: Any,
        vectors: Callable[[], tuple[list[str], np.ndarray] | None],
        embed_query: Callable[[str], np.ndarray] | None,
        papers: Callable[[], Sequence[Paper]],
        tfidf_cache: TfidfCache | None = None,
    ) -> Corpus | None:
        """The saved corpus of `version`, or None. `vectors` is called only when the centred
        embeddings were not saved with it; `papers` only if `svm` asks for arxiv-sanity's own text
        space (fitted from the papers' texts then, as build_corpus does)."""
        f = self.folder
        if f is None:
            return None
        try:
            if json.loads((f / "key.json").read_text(encoding="utf-8")) != self._key(version):
                return None
            import scipy.sparse as sp

            meta = json.loads((f / "meta.json").read_text(encoding="utf-8"))
            x = sp.load_npz(f / "tfidf.npz").astype(np.float32).tocsr()
            vocab = json.loads((f / "vocab.json").read_text(encoding="utf-8"))
            idf = np.load(f / "idf.npy", allow_pickle=False)
            label_mask = np.load(f / "label_mask.npy", allow_pickle=False)
            prior = np.load(f / "prior.npy", allow_pickle=False)
            params = json.loads((f / "params.json").read_text(encoding="utf-8"))
            ids, titles = meta["ids"], meta["titles"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        n = len(ids)
        if x.shape != (n, len(vocab)) or len(idf) != len(vocab) or len(label_mask) != len(vocab) or len(prior) != n:
            return None
        vec = FittedVectorizer(params, vocab, idf)
        emb: np.ndarray | None = None
        emb_mean: np.ndarray | None = None
        try:  # the centred embeddings of this generation, as saved: no alignment, no centring
            emb = np.load(f / "emb.npy", allow_pickle=False)
            emb_mean = np.load(f / "emb_mean.npy", allow_pickle=False)
            if emb.shape[0] != n or emb_mean.shape != (emb.shape[1],):
                emb = emb_mean = None
        except (OSError, ValueError):
            emb = emb_mean = None
        if emb is None:
            emb = _aligned(ids, vectors())
            if emb is not None:
                emb, emb_mean = center(emb)
        svm_space = None
        if meta.get("svm_space"):

            def svm_space() -> tuple[Any, np.ndarray]:
                by_id = {p.id: p for p in papers()}
                ps = [by_id[i] for i in ids]
                baseline = [tfidf_text(p.title if not p.title_derived else "", p.abstract, p.authors) for p in ps]
                bvec, bx = _cached_fit(baseline, tfidf_cache.variant("arxiv-sanity") if tfidf_cache else None)
                return bx, bvec.get_feature_names_out()

        corpus = Corpus(
            ids=ids,
            titles=titles,
            emb=emb,
            tfidf=x,
            vocab=vec.get_feature_names_out(),
            label_mask=label_mask,
            vectorizer=vec,
            prior=prior,
            keywords=meta["keywords"],
            embed_query=embed_query,
            emb_mean=emb_mean,
            svm_space=svm_space,
            venues=meta["venues"],
            years=np.array(meta["years"], dtype=np.int64),
        )
        if isinstance(meta.get("fingerprint"), str):
            corpus.cache["fingerprint"] = meta["fingerprint"]
        return corpus

    def save(self, version: Any, corpus: Corpus) -> None:
        """Write to a temporary folder, then swap it in (a reader never sees half a corpus)."""
        if self.folder is None:
            return
        import scipy.sparse as sp

        vec = corpus.vectorizer

        def write(tmp: Path) -> None:
            # uncompressed: decompressing took half the load at 100k papers
            sp.save_npz(tmp / "tfidf.npz", corpus.tfidf, compressed=False)
            (tmp / "vocab.json").write_text(json.dumps([str(t) for t in corpus.vocab]), encoding="utf-8")
            if corpus.emb is not None and corpus.emb_mean is not None:
                np.save(tmp / "emb.npy", np.asarray(corpus.emb, dtype=np.float32))
                np.save(tmp / "emb_mean.npy", np.asarray(corpus.emb_mean, dtype=np.float32))
            np.save(tmp / "idf.npy", np.asarray(vec.idf_))
            np.save(tmp / "label_mask.npy", np.asarray(corpus.label_mask, dtype=bool))
            np.save(tmp / "prior.npy", np.asarray(corpus.prior, dtype=np.float32))
            params = {k: vec.get_params()[k] for k in ("stop_words", "min_df", "max_df")}
            (tmp / "params.json").write_text(json.dumps(params), encoding="utf-8")
            meta = {
                "ids": corpus.ids,
                "titles": corpus.titles,
                "keywords": [list(k) for k in corpus.keywords],
                "venues": list(corpus.venues),
                "years": [int(y) for y in (corpus.years if corpus.years is not None else [0] * len(corpus))],
                "svm_space": corpus.svm_space is not None,
                # the features' hash (saved.py): its inputs are fixed by the generation, so a process
                # that loads them need not hash 100 MB again
                "fingerprint": fingerprint(corpus),
            }
            (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
            (tmp / "key.json").write_text(json.dumps(self._key(version)), encoding="utf-8")

        swap_in(self.folder, write)  # a read-only folder: the next process builds the corpus again
