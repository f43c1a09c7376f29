"""Recommend: personal recommendations, the readable profile, triage, reading groups and digests.

The CLI, the web pages and the HTTP API all call this object (`lib.recommend`), so they stay thin.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..contrib import SearchRequest
from ..errors import NotFound, PaperatlasError
from ..i18n import gettext, ngettext
from ..models import Hit, Paper
from ..readers import ReaderArg, Readers
from ..store.personal import Reader
from . import digest as digest_mod
from . import groups as groups_mod
from . import interests, saved, triage
from .saved import SavedScores
from .base import DEFAULT_RECOMMENDER, RECOMMENDERS, Corpus, Scored, Signals, mask, rank
from .features import CorpusCache, TfidfCache, corpus_from_papers
from .own import Trimmed, with_own_papers

if TYPE_CHECKING:
    from ..core import LibraryCore
    from ..llm import Llm


BUILD_NOTICE = 2000  # papers from which building the recommendation features takes seconds


def library_share(scores: np.ndarray, rows: Sequence[int]) -> list[float]:
    """The score a reader sees: the share of the library that ranks below each row, in [0, 1].

    The recommender's own number is a sum of standardised parts (similarity, recency, dislikes…):
    its scale changes with every like, and it is negative for most of the library, so a raw
    `-0.412` says nothing to a reader. 0.97 says "above 97 % of your library", keeps the order,
    and means the same thing under every recommender."""
    s = np.asarray(scores, dtype=np.float64)
    n = len(s)
    if n <= 1:
        return [1.0] * len(rows)
    ordered = np.sort(s)
    below = np.searchsorted(ordered, s[np.asarray(rows, dtype=np.int64)], side="left") if len(rows) else []
    return [round(float(b) / (n - 1), 4) for b in below]


class Recommend:
    """Recommendations for the library's readers.

    Example:
        >>> lib.readers.set_feedback("me", [some_id], "like")  # doctest: +SKIP
        >>> lib.recommend.for_reader("me", limit=5)  # doctest: +SKIP
    """

    def __init__(self, lib: LibraryCore, readers: Readers, llm: Llm | None = None) -> None:
        self._lib = lib
        self._store = lib.store
        self._readers = readers
        self._llm = llm  # digests show a TL;DR of each paper (stored, or extractive: nothing is sent)
        # the features of one library version (TF-IDF + embeddings): built once, shared by every request
        self._corpus: tuple[Any, Corpus] | None = None
        self._corpus_lock = threading.Lock()
        # reader id -> (the corpus and own papers it was built from, the corpus grown by those papers)
        self._own_corpora: dict[int, tuple[Corpus, Any, Corpus]] = {}
        self._vstate = threading.local()

    def _version(self, emb_id: str) -> tuple[Any, ...]:
        """(data_version, model, vector count): both counts scan a table (tens of ms at 100k papers, on
        every request), so they are re-read only when the store's O(1) change token moved."""
        token = self._store.change_token()
        st = self._vstate  # per thread: each thread has its own connection and token
        if getattr(st, "token", None) != (token, emb_id):
            st.version = (self._store.data_version(), emb_id, self._store.vector_count(emb_id))
            st.token = (token, emb_id)
        return st.version

    def corpus(self) -> Corpus:
        """The recommenders' view of the library, cached until papers or vectors change."""
        lib = self._lib
        emb_id = lib.embedder.id
        version = self._version(emb_id)
        cached = self._corpus
        if cached is not None and cached[0] == version:
            return cached[1]
        with self._corpus_lock:
            cached = self._corpus
            if cached is not None and cached[0] == version:
                return cached[1]

            def vectors() -> tuple[list[str], np.ndarray] | None:
                index = lib.engine.vector_index()
                return (index.ids, index.matrix) if index is not None else None

            cache = TfidfCache(lib.engine.index_folder("recommend-tfidf"))
            query = lib.engine.query_vector if version[2] else None
            stored = CorpusCache(lib.engine.index_folder("recommend-corpus"))
            # kept across processes, so keyed by every paper's content too (data_version's
            # timestamp has a one-second resolution)
            generation = (*version, self._store.papers_signature())
            corpus = stored.load(generation, vectors, query, lib.papers, cache)
            if corpus is None:
                papers = lib.papers()
                if len(papers) >= BUILD_NOTICE and lib.on_wait is not None:  # seconds: say why we wait
                    lib.on_wait(
                        f"building the recommendation features of {len(papers):,} papers "
                        "(once after the library changes) ..."
                    )
                corpus = corpus_from_papers(papers, vectors(), query, cache)
                stored.save(generation, corpus)
            corpus.cache["saved"] = SavedScores(lib.engine.index_folder(saved.FOLDER))
            self._corpus = (version, corpus)
            return corpus

    def _signals(self, r: Reader) -> Signals:
        fb = self._store.readers.feedback(r.id)
        return Signals(
            likes=[f.paper_id for f in fb if f.kind == "like"],
            dislikes=[f.paper_id for f in fb if f.kind == "dislike"],
            choices=[(w, lo) for w, lo, _ in self._store.readers.choices(r.id)],
            preferences=r.preferences,
            profile=r.profile if r.profile.get("interests") is not None else None,
        )

    def _judged(self, r: Reader) -> set[str]:
        """Papers the reader has liked, dismissed, marked seen or met in triage."""
        out = {f.paper_id for f in self._store.readers.feedback(r.id)}
        for w, lo, _ in self._store.readers.choices(r.id):
            out.update(x for x in (w, lo) if x != triage.NEITHER)
        return out

    def _current_profile(self, r: Reader, corpus: Corpus, sig: Signals) -> dict[str, Any]:
        """The reader's profile, brought up to date with their likes (and saved when it changed)."""
        prof, changed = interests.sync(sig.profile, corpus, sig.likes)
        if changed:
            if not self._lib.read_only:  # a read-only server computes it but writes nothing
                self._store.readers.set_reader_fields(r.id, profile=prof)
            r.profile = prof
        return prof

    def scored_for(self, r: Reader, method: str = DEFAULT_RECOMMENDER) -> tuple[Corpus, Scored, Signals]:
        """The corpus, the recommender's scores of every paper for `r`, and what `r` told us.

        A reader's own papers (what they wrote, `reader_papers` contributions) count as their
        first likes: the recommender scores a copy of the corpus grown by those papers, and the
        scores of the library's rows come back."""
        corpus = self.corpus()
        sig = self._signals(r)
        sig.profile = self._current_profile(r, corpus, sig)
        rec = RECOMMENDERS.create(method)
        grown = self._with_own_papers(r, corpus)
        if grown is None:
            return corpus, rec.fit(corpus, sig), sig
        big, own_ids = grown
        likes = own_ids + sig.likes
        # the stored profile stays the reader's stars (and their edits); their own papers join a copy
        prof, _ = interests.sync(sig.profile, big, likes)
        own_sig = Signals(likes, sig.dislikes, sig.choices, sig.preferences, prof)
        return corpus, Trimmed(rec.fit(big, own_sig), len(corpus), big.titles[len(corpus) :]), sig

    def _with_own_papers(self, r: Reader, corpus: Corpus) -> tuple[Corpus, list[str]] | None:
        """(the corpus grown by the reader's own papers, their ids in it), or None when they have none.
        Kept per reader until the corpus or their papers change."""
        for reader_papers in self._lib.contributions("reader_papers"):
            own = reader_papers(r.id)
            if own is None or not len(own):
                continue
            key = (tuple(own.keys), sum(v is not None for v in own.vectors))
            cached = self._own_corpora.get(r.id)
            if cached is not None and cached[0] is corpus and cached[1] == key:
                return cached[2], own.ids
            big = with_own_papers(corpus, own)
            self._own_corpora[r.id] = (corpus, key, big)
            return big, own.ids
        return None

    def _allowed(
        self,
        corpus: Corpus,
        venue: str | None,
        year: int | None,
        status: str | None,
        only: set[str] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> np.ndarray | None:
        ids = self._store.filter_ids(venue, year, status)
        if filters:  # any other filter of the library's table (author, session, institution, ...)
            table = self._lib.filters
            keep = table.keep(self._lib, table.check(filters))
            if keep is not None:
                ids = keep if ids is None else ids & keep
        if only is not None:
            ids = only if ids is None else ids & only
        if ids is None:
            return None
        return mask(len(corpus), corpus.rows(sorted(ids)))

    def for_reader(
        self,
        reader: ReaderArg = None,
        limit: int = 20,
        method: str = DEFAULT_RECOMMENDER,
        offset: int = 0,
        venue: str | None = None,
        year: int | None = None,
        status: str | None = None,
        include_judged: bool = False,
        since: str | None = None,
        **filters: Any,
    ) -> list[Hit]:
        """The reader's recommendations, best first, each with `reason` saying why.

        Args:
            reader: reader name (default "me") or Reader.
            limit, offset: the page.
            method: a registered recommender ("default", "svm").
            venue, year, status: only papers matching these.
            include_judged: also list papers the reader already liked, dismissed or saw.
            since: only papers added to the library at or after this ISO date.
            filters: any other filter of the library by name (`lib.filters`: author, session, ...).
        """
        r = self._readers.get(reader)
        corpus, scored, _ = self.scored_for(r, method)
        only = self._store.papers_added_since(since) if since else None
        allowed = self._allowed(corpus, venue, year, status, only, filters)
        excl = None if include_judged else mask(len(corpus), corpus.rows(sorted(self._judged(r))))
        rows = rank(scored, offset + limit, excl, allowed)[offset:]
        reasons = scored.explain(rows)
        papers = self._store.get_papers([corpus.ids[i] for i in rows])
        shown = library_share(scored.scores, rows)
        hits = [
            Hit(papers[corpus.ids[i]], s, {"recommend": offset + k + 1}, reason=why)
            for k, (i, why, s) in enumerate(zip(rows, reasons, shown))
            if corpus.ids[i] in papers
        ]
        self._lib.decorate(hits)  # the capabilities add what they know (the programme's events)
        return hits

    # -- profile ---------------------------------------------------------------------------------
    def profile(self, reader: ReaderArg = None, examples: int = 3) -> dict[str, Any]:
        """The readable profile: interests (label, key phrases, the reader's phrases, example papers),
        free-text preferences and feedback counts."""
        r = self._readers.get(reader)
        corpus = self.corpus()
        sig = self._signals(r)
        prof = self._current_profile(r, corpus, sig)
        out = []
        for it in prof.get("interests", []):
            rows = corpus.rows(it.get("papers", []))
            ex: list[str] = []
            if len(rows):
                v = interests.vectors(corpus, rows)
                c = v.sum(0)
                order = np.argsort(-(v @ c))[:examples]
                ex = [corpus.ids[rows[i]] for i in order]
            papers = self._lib.get_many(ex)
            out.append(
                {
                    "id": it["id"],
                    "label": it.get("label", ""),
                    "phrases": it.get("phrases", []),
                    "added": it.get("added", []),
                    "muted": it.get("muted", []),
                    "removed": bool(it.get("removed")),
                    "papers": len(it.get("papers", [])),
                    "examples": [{"id": p.id, "title": p.title} for p in papers],
                }
            )
        return {
            "reader": r.name,
            "preferences": r.preferences,
            "interests": out,
            "likes": len(sig.likes),
            "dislikes": len(sig.dislikes),
            "choices": len(sig.choices),
            # what the reader wrote (import-reader --author / --bibtex): read as their first likes
            "own_papers": sum(len(own) for f in self._lib.contributions("reader_papers") if (own := f(r.id))),
        }

    def edit_profile(
        self,
        reader: ReaderArg = None,
        *,
        remove: str | None = None,
        restore: str | None = None,
        add_phrase: str | None = None,
        interest: str | None = None,
        remove_phrase: str | None = None,
        rename: str | None = None,
        preferences: str | None = None,
    ) -> dict[str, Any]:
        """Edit the profile; returns the readable profile after the edit.

        Args:
            remove / restore: an interest id to switch off (its likes stop counting) or back on.
            add_phrase: a phrase to add to `interest`, or, without `interest`, a new interest of its own.
            remove_phrase: drop an added phrase of `interest`, or mute one of its key phrases.
            rename: a new label for `interest`.
            preferences: the free-text preferences ("more theory, fewer benchmark papers").
        """
        r = self._readers.get(reader)
        corpus = self.corpus()
        prof = self._current_profile(r, corpus, self._signals(r))
        try:
            if remove:
                prof = interests.set_removed(prof, remove, True)
            if restore:
                prof = interests.set_removed(prof, restore, False)
            if add_phrase is not None:
                if not add_phrase.strip():
                    raise PaperatlasError("an empty phrase", "give a few words, e.g. 'diffusion models'")
                prof = interests.add_phrase(prof, corpus, add_phrase, interest)
            if remove_phrase is not None:
                if not interest:
                    raise PaperatlasError("which interest?", "pass the interest id (see `paperatlas profile`)")
                prof = interests.remove_phrase(prof, corpus, interest, remove_phrase)
            if rename is not None:
                if not interest:
                    raise PaperatlasError("which interest?", "pass the interest id (see `paperatlas profile`)")
                prof = interests.rename(prof, interest, rename)
        except KeyError as e:
            raise NotFound(
                f"no interest {e.args[0]!r} in {r.name}'s profile",
                "`paperatlas profile --reader NAME` lists the interest ids",
            ) from None
        self._store.readers.set_reader_fields(r.id, preferences=preferences, profile=prof)
        return self.profile(r.name)  # read back: the preferences just changed

    # -- triage ----------------------------------------------------------------------------------
    def triage_pair(
        self, reader: ReaderArg = None, venue: str | None = None, year: int | None = None
    ) -> tuple[Paper, Paper] | None:
        """The next "A or B?" pair for the reader (None when fewer than two unjudged papers are left).
        Deterministic for a given history, so a page reload shows the same pair."""
        r = self._readers.get(reader)
        corpus = self.corpus()
        sig = self._signals(r)
        cand = ~mask(len(corpus), corpus.rows(sorted(self._judged(r))))
        allowed = self._allowed(corpus, venue, year, None)
        if allowed is not None:
            cand &= allowed
        if sig.likes or sig.dislikes or sig.preferences.strip():
            sig.profile = self._current_profile(r, corpus, sig)
        rng = np.random.default_rng([r.id, len(sig.choices)])
        pair = triage.next_pair(corpus, sig, cand, rng)
        if pair is None:
            return None
        a, b = self._lib.get_many([corpus.ids[pair[0]], corpus.ids[pair[1]]])
        return a, b

    def triage_choose(self, reader: ReaderArg, winner: str, loser: str) -> None:
        """Record "winner over loser" (both stop appearing in triage and recommendations)."""
        r = self._readers.get(reader)
        w, lo = self._lib.get(winner).id, self._lib.get(loser).id
        if w == lo:
            raise PaperatlasError("a paper cannot beat itself", "pass two different paper ids")
        self._store.readers.add_choice(r.id, w, lo)

    def triage_neither(self, reader: ReaderArg, a: str, b: str) -> None:
        """Record "neither A nor B": both rank below a neutral paper (and stop appearing in triage)."""
        r = self._readers.get(reader)
        ids = list(dict.fromkeys([self._lib.get(a).id, self._lib.get(b).id]))
        for pid in ids:
            self._store.readers.add_choice(r.id, triage.NEITHER, pid)

    # -- groups ----------------------------------------------------------------------------------
    def group_list(
        self,
        readers: Sequence[str],
        n: int = 10,
        method: str = "nash",
        venue: str | None = None,
        year: int | None = None,
        *,
        depth: int | None = None,
    ) -> dict[str, Any]:
        """A list of n papers for a reading group, fair to every member (Nash welfare of Borda scores).

        Returns {"method", "papers": [Hit, with reason naming each member's rank], "members": [{reader,
        share, satisfaction, in_their_top}], "compare": the same member stats for the other method}.
        """
        if method not in groups_mod.METHODS:
            raise PaperatlasError(f"unknown group method {method!r}", f"use one of: {', '.join(groups_mod.METHODS)}")
        names = list(dict.fromkeys(x.strip() for x in readers if x.strip()))
        if not names:  # one reader is a group too: their own list, ranked the same way
            raise PaperatlasError(gettext("a group needs at least one reader"), gettext("pass --readers a,b[,c...]"))
        rs = [self._readers.get(x, create=False) for x in names]
        corpus = self.corpus()
        allowed = self._allowed(corpus, venue, year, None)
        if depth is None:
            depth = groups_mod.default_depth(len(corpus), n)
        # A paper any member has judged (liked, disliked, seen) is left out for everyone: were it kept,
        # its missing rank for that member would tell the others what the member liked.
        excl = mask(len(corpus), corpus.rows(sorted(set().union(*(self._judged(r) for r in rs)))))
        if allowed is not None:
            excl |= ~allowed
        pts = []
        for r in rs:
            _, scored, _ = self.scored_for(r)
            pts.append(groups_mod.borda(scored.scores, excl, depth))
        points = np.stack(pts)
        chosen = groups_mod.select(points, n, method, excl)
        other = "sum" if method == "nash" else "nash"
        stats = groups_mod.member_stats(points, chosen)
        other_stats = groups_mod.member_stats(points, groups_mod.select(points, n, other, excl))
        papers = self._store.get_papers([corpus.ids[j] for j in chosen])
        hits = []
        for k, j in enumerate(chosen):
            ranks = {r.name: int(depth - points[i, j] + 1) for i, r in enumerate(rs) if points[i, j] > 0}
            why = ", ".join(f"{name} #{rk}" for name, rk in sorted(ranks.items(), key=lambda kv: kv[1]))
            hits.append(
                Hit(
                    papers[corpus.ids[j]],
                    float(points[:, j].sum()),
                    {"group": k + 1},
                    reason=gettext("in the top {depth} of: {who}", depth=depth, who=why)
                    if why
                    else gettext("in nobody's top {depth}", depth=depth),
                )
            )
        return {
            "method": method,
            "papers": hits,
            "members": [{"reader": r.name, **s} for r, s in zip(rs, stats)],
            "compare": {other: [{"reader": r.name, **s} for r, s in zip(rs, other_stats)]},
        }

    # -- digest ----------------------------------------------------------------------------------
    def digest(
        self,
        reader: ReaderArg = None,
        since: str | None = None,
        limit: int = 20,
        format: str = "markdown",
        link: str = "",
    ) -> str:
        """Recommended papers the reader has not seen or judged (added since `since`), rendered
        as markdown, html or atom."""
        if format not in digest_mod.FORMATS:
            raise PaperatlasError(f"unknown digest format {format!r}", f"use one of: {', '.join(digest_mod.FORMATS)}")
        r = self._readers.get(reader)
        hits = self.for_reader(r, limit=limit, since=since)
        sub = (
            ngettext(
                "{n} paper you have not seen, added since {date}",
                "{n} papers you have not seen, added since {date}",
                len(hits),
                date=since,
            )
            if since
            else ngettext("{n} paper you have not seen", "{n} papers you have not seen", len(hits))
        )
        updated = self._store.papers_added_at([h.paper.id for h in hits]) if format == "atom" else None
        # what a digest lists before the recommendations, e.g. the programme's changes to the reader's
        # agenda: (reader name, since) -> (hits, paper id -> when), from each capability that offers news
        for digest_news in self._lib.contributions("digest_news"):
            news, when = digest_news(r.name, since or "")
            if updated is not None:
                updated.update(when)
            told = {h.paper.id for h in news}  # a paper in the news is not listed again below it
            hits = news + [h for h in hits if h.paper.id not in told]
        return digest_mod.render(
            hits,
            format,
            gettext("paperatlas digest for {reader}", reader=r.name),
            sub,
            f"urn:paperatlas:digest:{r.name}",
            updated,
            link,
            tldrs=self._digest_tldrs(hits),
        )

    def _digest_tldrs(self, hits: list[Hit]) -> dict[str, str]:
        """paper id -> the TL;DR a digest shows: a stored machine one in the reader's language (marked with
        its model), else the abstract's contribution sentence. Nothing is sent to a model here."""
        llm = self._llm
        if llm is None or not hits:
            return {}
        from ..i18n import current

        lang = "zh" if (current() or "").startswith("zh") else "en"
        stored = llm.stored_tldrs([h.paper.id for h in hits], lang)
        out: dict[str, str] = {}
        for h in hits:
            g = stored.get(h.paper.id)
            if g is not None:
                out[h.paper.id] = g.text + " " + gettext("(machine-generated by {model})", model=g.model)
            else:
                text = llm.tldr(h.paper.id, "en", mode="extractive").text
                if text and text != h.paper.title:
                    out[h.paper.id] = text
        return out

    def saved_search_feed(self, reader: ReaderArg, name_or_id: str | int, limit: int = 20, link: str = "") -> str:
        """An Atom feed of a saved search's results that the reader has not seen or judged."""
        r = self._readers.get(reader)
        ss = next(
            (
                s
                for s in self._store.readers.saved_searches(r.id)
                if s["name"] == name_or_id or s["id"] == name_or_id or str(s["id"]) == str(name_or_id)
            ),
            None,
        )
        if ss is None:
            raise NotFound(f"no saved search {name_or_id!r} for {r.name}", "save the search first")
        # every filter the search was saved with (a feed that dropped one would silently widen)
        req = SearchRequest.from_params(ss["params"], self._lib.filters, query=ss["query"])
        hits = self._lib.search(
            ss["query"], req.mode, limit, exclude=sorted(self._judged(r)), sort=req.sort or None, **req.filters
        )
        updated = self._store.papers_added_at([h.paper.id for h in hits])
        return digest_mod.atom(
            hits, f"paperatlas: {ss['name']} ({r.name})", f"urn:paperatlas:search:{r.name}:{ss['id']}", updated, link
        )
