"""A compact BM25 index over a term-major sparse matrix, built in batches and saved beside the library.

Scores are those of bm25s' "lucene" variant (idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
tf part = tf / (tf + k1 (1 - b + b dl / avgdl))), so the numbers match it; the
differences are practical: the build streams the library in batches (a million
abstracts never sit in memory as token lists), and the arrays are saved as .npy
files that a restart maps from disk instead of re-tokenising everything.

    >>> idx = Bm25Index(); idx.build([("a", "Graph networks", False, "Message passing.")])
    >>> idx.search(parse("graph"), 5)  # doctest: +SKIP
    [('a', 0.28...)]
"""

from __future__ import annotations

import json
import re
import threading
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ..index.numpy import top_k
from .cjk import has_cjk, split_cjk
from .query import Query

Doc = tuple[str, str, bool, str]  # (id, title, title_derived, abstract)

# scikit-learn / bm25s word pattern: runs of 2+ word characters
TOKEN = re.compile(r"(?u)\b\w\w+\b")


def tokens(text: str) -> list[str]:
    """The words of `text`, as written (callers lowercase first: the hot paths lowercase once per
    document); a CJK run (no spaces between words) gives its character bigrams instead (search/cjk.py).
    Text without CJK characters gives exactly TOKEN's words."""
    rest, grams = split_cjk(text)
    words = TOKEN.findall(rest)
    return words + grams if grams else words


#: bm25s' English stop words (bm25s.stopwords.STOPWORDS_EN, which tests/test_startup.py compares with):
#: copied, because importing bm25s for them loads scipy.sparse with it, longer than a keyword search
STOPWORDS_EN = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there"
    " these they this to was will with"
).split()


@cache  # asked per search, per snippet and per source an answer is given: read once
def english_stopwords() -> frozenset[str]:
    return frozenset(STOPWORDS_EN)


class Analyzer:
    """Text -> terms: lowercase, 2+ character words, English stop words out, Snowball stems.

    A word -> term-id map caches the stemming, which is most of the cost."""

    def __init__(self, stem: bool = True) -> None:
        self.stopwords = english_stopwords()
        self.stem = stem
        self._stemmer: Any = None
        if stem:
            import Stemmer

            self._stemmer = Stemmer.Stemmer("english")
        self.vocab: dict[str, int] = {}  # term -> id
        self._word: dict[str, int] = {}  # surface word -> term id (-1: stop word)

    def _term(self, word: str) -> str:
        if not self._stemmer or not word.isascii() and has_cjk(word):  # a CJK bigram is its own term
            return word
        return self._stemmer.stemWord(word)

    def terms(self, text: str) -> set[str]:
        """The distinct terms of `text` (lowercased, stop words out, stemmed): the words BM25 matches it by."""
        return {self._term(w) for w in tokens(text.lower()) if w not in self.stopwords}

    def _learn(self, word: str, grow: bool = True) -> int:
        """Term id of a word not seen before (-1: a stop word, or unknown when not `grow`)."""
        if word in self.stopwords:
            t = -1
        else:
            term = self._term(word)
            t = self.vocab.get(term, -1)
            if t < 0:
                if not grow:
                    return -1
                t = self.vocab[term] = len(self.vocab)
        self._word[word] = t
        return t

    def ids(self, text: str, grow: bool = True) -> list[int]:
        """Term ids of `text` in order (unknown terms get new ids when `grow`, else are dropped)."""
        wmap, out = self._word, []
        for w in tokens(text.lower()):
            t = wmap.get(w)
            if t is None:
                t = self._learn(w, grow)
            if t >= 0:
                out.append(t)
        return out

    def counts(self, title: str, abstract: str, title_weight: int) -> tuple[dict[int, int], int]:
        """(term id -> frequency, length) of a document whose title counts `title_weight` times.

        Counting words before mapping them to terms makes the Python loop run once
        per distinct word, not once per token: this is the hot path of a large build."""
        c = Counter(tokens(abstract.lower()))
        if title and title_weight:
            for w in tokens(title.lower()):
                c[w] += title_weight
        wmap, out, length = self._word, {}, 0
        for w, n in c.items():
            t = wmap.get(w)
            if t is None:
                t = self._learn(w)
            if t >= 0:
                out[t] = out.get(t, 0) + n
                length += n
        return out, length


def field_text(title: str, derived: bool, abstract: str, title_weight: int) -> str:
    """Weight the title by repeating it; a title derived from the abstract adds no evidence."""
    if derived or not title:
        return abstract
    return " ".join([title] * title_weight + [abstract])


class Bm25Index:
    """BM25 over title (repeated `title_weight` times) + abstract; see the module docstring."""

    FILES = ("indptr.npy", "indices.npy", "data.npy", "maxs.npy")
    prune_min_docs = 20_000  # MaxScore pruning from this many documents on

    def __init__(self, k1: float = 1.2, b: float = 0.75, title_weight: int = 3, stem: bool = True) -> None:
        self.k1, self.b, self.title_weight, self.stem = float(k1), float(b), int(title_weight), stem
        self.analyzer = Analyzer(stem)
        self.n = 0
        self.ids: list[str] = []
        self.indptr = np.zeros(1, np.int64)
        self.indices = np.zeros(0, np.int32)
        self.data = np.zeros(0, np.float32)
        self.maxs = np.zeros(0, np.float32)  # each term's highest score: the bound MaxScore prunes with
        self._buffers = threading.local()

    @property
    def signature(self) -> str:
        """What the saved arrays depend on besides the documents."""
        return f"bm25-lucene k1={self.k1} b={self.b} tw={self.title_weight} stem={int(self.stem)} cjk2 v3"

    def __len__(self) -> int:
        return self.n

    # -- build ----------------------------------------------------------------------------
    def build(self, docs: Sequence[Doc]) -> None:
        self.build_batches([docs])

    def build_batches(self, batches: Iterable[Sequence[Doc]]) -> list[str]:
        """Index documents arriving in batches; returns their ids in order."""
        an = self.analyzer
        terms = array("i")  # term id of each (doc, term) pair, doc-major
        tfs = array("f")
        uniq = array("i")  # distinct terms per doc
        lengths = array("f")  # tokens per doc (stop words excluded, as bm25s counts)
        ids: list[str] = []
        for batch in batches:
            for pid, title, derived, abstract in batch:
                c, length = an.counts("" if derived else title, abstract, self.title_weight)
                terms.extend(c.keys())
                tfs.extend(c.values())
                uniq.append(len(c))
                lengths.append(length)
                ids.append(pid)
        self.ids = ids
        self._finish(
            np.frombuffer(terms, np.int32),
            np.frombuffer(tfs, np.float32),
            np.frombuffer(uniq, np.int32),
            np.frombuffer(lengths, np.float32),
        )
        return ids

    def _finish(self, terms: np.ndarray, tfs: np.ndarray, uniq: np.ndarray, lengths: np.ndarray) -> None:
        n, v = len(uniq), len(self.analyzer.vocab)
        self.n = n
        if n == 0 or len(terms) == 0:
            self.indptr, self.indices, self.data = (
                np.zeros(v + 1, np.int64),
                np.zeros(0, np.int32),
                np.zeros(0, np.float32),
            )
            self.maxs = np.zeros(v, np.float32)
            return
        docs = np.repeat(np.arange(n, dtype=np.int32), uniq)
        df = np.bincount(terms, minlength=v).astype(np.float64)
        idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
        avgdl = float(lengths.mean()) or 1.0
        norm = (self.k1 * (1 - self.b + self.b * lengths / avgdl)).astype(np.float32)
        scores = idf[terms] * tfs / (tfs + norm[docs])
        order = np.argsort(terms, kind="stable")  # term-major; docs stay ascending within a term
        self.indices = docs[order]
        self.data = scores[order].astype(np.float32)
        self.indptr = np.zeros(v + 1, np.int64)
        np.cumsum(np.bincount(terms, minlength=v), out=self.indptr[1:])
        self.maxs = np.maximum.reduceat(self.data, self.indptr[:-1]) if v else np.zeros(0, np.float32)

    # -- persistence --------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name, arr in zip(self.FILES, (self.indptr, self.indices, self.data, self.maxs)):
            np.save(folder / name, arr)
        (folder / "vocab.json").write_text(json.dumps(self.analyzer.vocab, ensure_ascii=False), encoding="utf-8")
        (folder / "meta.json").write_text(json.dumps({"n": self.n, "signature": self.signature}), encoding="utf-8")

    def load(self, folder: Path, ids: list[str]) -> bool:
        """Map saved arrays (read-only, paged in on use) for documents `ids`, in build order;
        False when absent or built differently."""
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            if meta.get("signature") != self.signature or meta.get("n") != len(ids):
                return False
            arrays = [np.load(folder / name, mmap_mode="r") for name in self.FILES]
            vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        self.indptr, self.indices, self.data, self.maxs = arrays
        self.analyzer.vocab = vocab
        self.analyzer._word = {}
        self.n = int(meta["n"])
        self.ids = ids
        return True

    # -- search ---------------------------------------------------------------------------------
    def query_terms(self, q: Query) -> list[int]:
        return list(dict.fromkeys(self.analyzer.ids(" ".join(q.terms), grow=False)))

    def _postings(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        s, e = int(self.indptr[t]), int(self.indptr[t + 1])
        return self.indices[s:e], self.data[s:e]

    def _buffer(self) -> tuple[np.ndarray, np.ndarray]:
        """A zeroed score accumulator and seen-mask over all documents, one pair per thread
        (reset after each query by touching only what the query touched)."""
        b = self._buffers
        if getattr(b, "n", -1) != self.n:
            b.acc, b.seen, b.n = np.zeros(self.n, np.float32), np.zeros(self.n, bool), self.n
        return b.acc, b.seen

    def scores(
        self, q: Query, k: int | None = None, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(doc positions, BM25 scores) of the documents matching the query (and `allowed`).

        With `k`, MaxScore pruning: terms are taken rarest-impact first; once the best
        score a new document could still reach from the remaining terms (the sum of their
        highest scores) is below the k-th best score so far, the remaining terms only
        add to documents already found (looked up by binary search in their postings)
        instead of streaming postings that can hold most of the library ("learning",
        "model"). The top k are exactly those of a full evaluation."""
        tids = self.query_terms(q)
        if not tids or self.n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if len(tids) == 1:
            idx, dat = self._postings(tids[0])
            pos, sc = np.asarray(idx, np.int64), np.asarray(dat, np.float32)
            if allowed is not None:
                keep = allowed[pos]
                pos, sc = pos[keep], sc[keep]
            return pos, sc
        if self.n < self.prune_min_docs:
            k = None  # small library: streaming every posting is already cheap
        order = sorted(tids, key=lambda t: -float(self.maxs[t]))
        rest = np.cumsum([float(self.maxs[t]) for t in order][::-1])[::-1]  # bound from terms i..end
        acc, seen = self._buffer()
        touched: list[np.ndarray] = []  # posting slices added into acc (to reset)
        found: list[np.ndarray] = []  # new candidate docs, unique across the list
        theta, i = 0.0, 0
        try:
            for i, t in enumerate(order):
                if k is not None and found and rest[i] < theta:
                    break
                idx, dat = self._postings(t)
                acc[idx] += dat  # a term's postings hold distinct docs
                touched.append(idx)
                new = idx[~seen[idx]]
                if allowed is not None:
                    new = new[allowed[new]]
                seen[new] = True
                found.append(np.asarray(new, np.int64))
                # the k-th best can only allow a stop if it can exceed the next terms' bound,
                # and no score so far exceeds the sum of the processed terms' highest scores
                if k is not None and i + 1 < len(order) and rest[0] - rest[i + 1] >= rest[i + 1]:
                    cand = np.concatenate(found)
                    if len(cand) >= k:
                        theta = float(np.partition(acc[cand], len(cand) - k)[len(cand) - k])
            else:
                i = len(order)
            cand = np.concatenate(found) if found else np.zeros(0, np.int64)
            out = acc[cand].astype(np.float32)
            if i < len(order) and len(cand):
                # non-essential terms: only candidates that can still reach the k-th best
                # score get their remaining terms looked up
                keep = out + np.float32(rest[i]) >= theta
                cand, out = cand[keep], out[keep]
                srt = np.argsort(cand)
                cand, out = cand[srt], out[srt]
                for t in order[i:]:
                    idx, dat = self._postings(t)
                    if not len(idx) or not len(cand):
                        continue
                    j = np.minimum(np.searchsorted(idx, cand), len(idx) - 1)
                    hit = np.asarray(idx[j]) == cand
                    out[hit] += np.asarray(dat[j[hit]])
        finally:
            for idx in touched:
                acc[idx] = 0.0
                seen[idx] = False
        return cand, out

    def search(self, q: Query, k: int, allowed: np.ndarray | None = None) -> list[tuple[str, float]]:
        """Top-k (id, score); `allowed` is a bool mask over build order."""
        pos, sc = self.scores(q, k, allowed)
        best = top_k(sc, k)
        return [(self.ids[pos[i]], float(sc[i])) for i in best]

    def score_positions(self, q: Query, positions: Sequence[int]) -> np.ndarray:
        """BM25 of these documents (0 where no term matches)."""
        out = np.zeros(len(positions), np.float32)
        if not len(positions):
            return out
        want = np.asarray(positions, np.int64)
        for t in self.query_terms(q):
            s, e = self.indptr[t], self.indptr[t + 1]
            post = self.indices[s:e]
            j = np.searchsorted(post, want)  # postings are sorted by doc position
            j = np.minimum(j, len(post) - 1) if len(post) else j
            found = (len(post) > 0) & (np.asarray(post[j]) == want) if len(post) else np.zeros(len(want), bool)
            out[found] += np.asarray(self.data[s:e])[j[found]]
        return out
