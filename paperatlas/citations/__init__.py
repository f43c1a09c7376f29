"""Citations as `lib.citations`: each paper's OpenAlex work, who cites whom inside the library, counts.

`enrich()` looks every paper up in OpenAlex: by DOI, then by arXiv id (the arXiv DOI
`10.48550/arXiv.ID` that OpenAlex indexes), both batched with the `|` OR filter (50 per request),
then by title (a search; accepted only at a title similarity of TITLE_THRESHOLD or more and, when
both are known, a year no more than one apart). What was found, how, and how sure is stored per
paper, with the cited-by count and its history, the referenced and related works. Records are
reused until they are `max_age_days` old, so a second run asks only about new papers, and everything
shown afterwards is read from the library, offline.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from ..contrib import Filter, Sort
from ..i18n import N_
from ..store.citations import CitationRecord
from ..store.semantic_scholar import S2Record

if TYPE_CHECKING:
    from .semantic_scholar import S2Report
    from ..core import LibraryCore
    from ..models import Hit, Paper
    from ..http_client import HttpClient, Response

BATCH = 50  # ids per OR filter: the API's cap on one filter's values
TITLE_THRESHOLD = 0.92  # SequenceMatcher ratio of the normalised titles; below it a search hit is not taken
MAX_AGE_DAYS = 30
RISING_YEARS = 2  # citation velocity: citations in this year and the one before
LINK_KINDS = ("cocited", "coupled", "cites", "cited_by")
SELECT = "id,doi,display_name,publication_year,cited_by_count,counts_by_year,referenced_works,related_works,ids"
_ARXIV_NEW = re.compile(r"^\d{4}\.\d{4,5}$")
_ARXIV_OLD = re.compile(r"^[a-z\-]+(?:\.[A-Z]{2})?/\d{7}$")
_ARXIV_IN = re.compile(r"(?:arxiv\.org/(?:abs|pdf)/|arxiv:)(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})", re.I)


@dataclass
class EnrichReport:
    """What one `enrich` run did."""

    looked_up: int = 0
    skipped_fresh: int = 0
    matched: dict[str, int] = field(default_factory=dict)  # method -> papers
    unmatched: int = 0
    requests: int = 0
    retries: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        found = sum(self.matched.values())
        by = ", ".join(f"{n} by {m}" for m, n in sorted(self.matched.items()))
        s = f"{found} of {self.looked_up} papers matched in OpenAlex" + (f" ({by})" if by else "")
        s += f", {self.unmatched} not found"
        if self.skipped_fresh:
            s += f", {self.skipped_fresh} already fresh"
        return s + f" ({self.requests} request{'s' if self.requests != 1 else ''}, {self.seconds:.1f} s)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "looked_up": self.looked_up,
            "skipped_fresh": self.skipped_fresh,
            "matched": dict(self.matched),
            "unmatched": self.unmatched,
            "requests": self.requests,
            "retries": self.retries,
            "seconds": round(self.seconds, 3),
            "notes": self.notes,
            "summary": self.summary(),
        }


@dataclass
class AuthorPapers:
    """A researcher's works in OpenAlex as far as this library is concerned."""

    author: str
    works: int  # their works OpenAlex lists
    own: list[str]  # library papers that are their works
    cited: list[str]  # library papers their works cite, most cited first
    votes: dict[str, int] = field(default_factory=dict)  # cited paper -> how many of their works cite it

    def to_dict(self) -> dict[str, Any]:
        return {
            "author": self.author,
            "works": self.works,
            "own": self.own,
            "cited": [{"id": pid, "by": self.votes.get(pid, 0)} for pid in self.cited],
        }


def _parse_page(resp: Response) -> dict[str, Any]:
    from ..sources.base import parse_json

    data = parse_json(resp)
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError("no `results` list in the answer")
    return data


def paper_doi(p: Paper) -> str:
    from ..sources.openalex import bare_doi

    d = bare_doi(p.extra.get("doi"))
    if not d and "doi.org/" in (p.url or ""):
        d = bare_doi(p.url)
    return d


def paper_arxiv(p: Paper) -> str:
    for v in (p.extra.get("arxiv_id"), p.extra.get("arxiv")):
        s = str(v or "").strip()
        if _ARXIV_NEW.match(s) or _ARXIV_OLD.match(s):
            return s
    m = _ARXIV_IN.search(p.url or "")
    if m:
        return m.group(1)
    m = re.match(r"^10\.48550/arxiv\.(.+)$", paper_doi(p))
    if m:
        return m.group(1)
    return p.id if _ARXIV_NEW.match(p.id) else ""


def title_similarity(a: str, b: str) -> float:
    """How alike two titles are once normalised (case, accents, punctuation, spacing): 0..1."""
    from ..ingest.clean import normalize_key

    ka, kb = normalize_key(a), normalize_key(b)
    if not ka or not kb:
        return 0.0
    return SequenceMatcher(None, ka, kb).ratio()


def blend(content: Sequence[tuple[str, float]], links: dict[str, float], weight: float) -> list[tuple[str, float]]:
    """Content neighbours (id, cosine) blended with citation neighbours (id, strength): each
    strength is scaled by the largest, so `weight` is the cosine one full citation link is worth.
    Papers linked only by citations join with their link score alone."""
    if weight <= 0 or not links:
        return list(content)
    top = max(links.values())
    score = {pid: s for pid, s in content}
    for pid, s in links.items():
        score[pid] = score.get(pid, 0.0) + weight * s / top
    return sorted(score.items(), key=lambda kv: -kv[1])


def _parse_results(resp: Response) -> list[dict[str, Any]]:
    from ..sources.base import parse_json
    from ..sources.openalex import work_id

    data = parse_json(resp)
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError("no `results` list in the answer")
    return [w for w in data["results"] if isinstance(w, dict) and work_id(w.get("id"))]


def _record(pid: str, work: dict[str, Any], method: str, score: float) -> CitationRecord:
    from ..sources.openalex import work_links

    links = work_links(work)
    return CitationRecord(
        pid,
        links["openalex_id"],
        True,
        method,
        round(score, 4),
        links["cited_by_count"],
        links["counts_by_year"],
        links["referenced_works"],
        links["related_works"],
    )


class Citations:
    """The citation graph of the library's papers, from OpenAlex.

    Example:
        >>> lib.citations.enrich(all=True).summary()  # doctest: +SKIP
        '412 of 418 papers matched in OpenAlex (380 by doi, 20 by arxiv, 12 by title), 6 not found (...)'
        >>> lib.citations.paper_fields("h4185992fcd6e189")["cited_by"]  # doctest: +SKIP
        ['h0c2d...']
    """

    def __init__(self, lib: LibraryCore) -> None:
        self._lib = lib
        self._store = lib.store

    # -- enrich ------------------------------------------------------------------------------
    def enrich(
        self,
        ids: Sequence[str] | None = None,
        base_url: str | None = None,
        client: HttpClient | None = None,
        mailto: str | None = None,
        refresh: bool = False,
        max_age_days: int = MAX_AGE_DAYS,
        progress: Callable[[int, int], None] | None = None,
    ) -> EnrichReport:
        """Look the papers `ids` (default: every paper) up in OpenAlex and store what was found.

        Papers looked up less than `max_age_days` ago are skipped unless `refresh`. Each batch of
        answers is stored as it arrives, so a failure keeps what came before (a re-run skips it).
        Raises FetchError when the service cannot be reached."""
        from ..http_client import HttpClient
        from ..sources.base import get_parsed
        from ..sources.openalex import DEFAULT_BASE, bare_doi, mailto_default

        import time

        start = time.monotonic()
        client = client or HttpClient(delay=0.2)
        before = dict(client.stats)
        base = (base_url or DEFAULT_BASE).rstrip("/")
        mail = (mailto if mailto is not None else mailto_default()).strip()
        wanted = list(dict.fromkeys(ids)) if ids is not None else self._store.paper_ids()
        report = EnrichReport()
        if not refresh:
            cutoff = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=max_age_days)).strftime("%Y-%m-%dT%H:%M:%SZ")
            seen = self._store.citations.fetched_at(wanted)
            fresh = {pid for pid, at in seen.items() if at >= cutoff}
            report.skipped_fresh = len(fresh)
            wanted = [pid for pid in wanted if pid not in fresh]
        papers = self._store.get_papers(wanted)
        todo = [papers[pid] for pid in wanted if pid in papers]
        report.looked_up = len(todo)
        done = 0

        def params(extra: dict[str, Any]) -> dict[str, Any]:
            return {**extra, "select": SELECT, **({"mailto": mail} if mail else {})}

        def finish(records: list[CitationRecord]) -> None:
            nonlocal done
            self._store.citations.save(records)
            for r in records:
                if r.matched:
                    report.matched[r.method] = report.matched.get(r.method, 0) + 1
                else:
                    report.unmatched += 1
            done += len(records)
            if progress:
                progress(done, len(todo))

        try:
            # by DOI, then by arXiv id: one request per 50 papers
            left = list(todo)
            for method, key_of in (
                ("doi", paper_doi),
                ("arxiv", lambda p: f"10.48550/arxiv.{paper_arxiv(p)}".lower() if paper_arxiv(p) else ""),
            ):
                keyed = [(p, key_of(p)) for p in left]
                keyed = [(p, k) for p, k in keyed if k and "|" not in k and "," not in k]
                found: set[str] = set()
                for i in range(0, len(keyed), BATCH):
                    batch = keyed[i : i + BATCH]
                    _, works = get_parsed(
                        client,
                        f"{base}/works",
                        _parse_results,
                        f"openalex {method} look-up",
                        params({"filter": "doi:" + "|".join(k for _, k in batch), "per-page": BATCH}),
                    )
                    by_doi = {bare_doi(w.get("doi")): w for w in works or [] if bare_doi(w.get("doi"))}
                    records = []
                    for p, k in batch:
                        w = by_doi.get(k)
                        if w is not None:
                            records.append(_record(p.id, w, method, 1.0))
                            found.add(p.id)
                    finish(records)
                left = [p for p in left if p.id not in found]
            # then by title, one search each
            for p in left:
                record = self._by_title(client, base, p, params)
                finish([record])
        finally:
            report.seconds = time.monotonic() - start
            report.requests = client.stats["requests"] - before.get("requests", 0)
            report.retries = client.stats["retries"] - before.get("retries", 0)
        return report

    def _by_title(
        self, client: HttpClient, base: str, p: Paper, params: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> CitationRecord:
        from ..ingest.clean import normalize_key
        from ..sources.base import get_parsed

        title = (p.title or "").strip()
        if p.title_derived or len(normalize_key(title)) < 12:  # too short to tell papers apart by
            return CitationRecord(p.id, matched=False, method="title")
        # the search syntax reads , | ! and quotes as operators: a title is searched as plain words
        words = re.sub(r"[^\w\s-]", " ", title)[:300]
        _, works = get_parsed(
            client,
            f"{base}/works",
            _parse_results,
            "openalex title look-up",
            params({"filter": f"title.search:{words}", "per-page": 5}),
        )
        best: tuple[float, dict[str, Any]] | None = None
        for w in works or []:
            score = title_similarity(title, str(w.get("display_name") or w.get("title") or ""))
            year = w.get("publication_year")
            if p.year and isinstance(year, int) and abs(year - p.year) > 1:
                continue
            if best is None or score > best[0]:
                best = (score, w)
        if best is None or best[0] < TITLE_THRESHOLD:
            return CitationRecord(p.id, matched=False, method="title", score=round(best[0], 4) if best else None)
        return _record(p.id, best[1], "title", best[0])

    # -- Semantic Scholar --------------------------------------------------------------------
    def enrich_s2(
        self,
        ids: Sequence[str] | None = None,
        base_url: str | None = None,
        client: HttpClient | None = None,
        api_key: str | None = None,
        refresh: bool = False,
        max_age_days: int = MAX_AGE_DAYS,
        progress: Callable[[int, int], None] | None = None,
    ) -> S2Report:
        """Look the papers `ids` (default: every paper) up in Semantic Scholar by DOI or arXiv id:
        TL;DR, external ids, counts, and who cites them and whom they cite, each link with S2's
        influential mark and the library paper at its other end. Stored per paper as it arrives
        (a failure keeps what came before); papers looked up less than `max_age_days` ago are
        skipped unless `refresh`. Raises FetchError when the service cannot be reached."""
        from ..http_client import HttpClient

        import time

        from .semantic_scholar import S2_DELAY, S2Client, S2Report, s2_record

        start = time.monotonic()
        client = client or HttpClient(delay=S2_DELAY)
        before = dict(client.stats)
        s2 = S2Client(client, base_url, api_key)
        wanted = list(dict.fromkeys(ids)) if ids is not None else self._store.paper_ids()
        report = S2Report()
        if not refresh:
            cutoff = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=max_age_days)).strftime("%Y-%m-%dT%H:%M:%SZ")
            seen = self._store.s2.fetched_at(wanted)
            wanted = [pid for pid in wanted if seen.get(pid, "") < cutoff]
        everything = self._store.get_papers(self._store.paper_ids())
        by_doi = {d: pid for pid, p in everything.items() if (d := paper_doi(p))}
        by_arxiv = {a: pid for pid, p in everything.items() if (a := paper_arxiv(p))}

        def library_of(doi: str, arxiv: str) -> str | None:
            return by_doi.get(doi) or by_arxiv.get(arxiv) or (self._store.resolve_id(arxiv) if arxiv else None)

        todo = [everything[pid] for pid in wanted if pid in everything]
        try:
            for n, p in enumerate(todo, 1):
                doi, arxiv = paper_doi(p), paper_arxiv(p)
                key = f"DOI:{doi}" if doi else f"ARXIV:{arxiv}" if arxiv else ""
                if not key:
                    report.no_id += 1
                    continue
                report.looked_up += 1
                found = s2.paper(key)
                if found is None:
                    self._store.s2.save([S2Record(p.id, matched=False)])
                    report.unmatched += 1
                else:
                    rec = s2_record(
                        p.id,
                        found,
                        s2.links(found["paperId"], "citations"),
                        s2.links(found["paperId"], "references"),
                        library_of,
                    )
                    self._store.s2.save([rec])
                    report.matched += 1
                    report.influential += sum(1 for li in rec.links if li.influential and li.other_paper)
                if progress:
                    progress(n, len(todo))
        finally:
            report.seconds = time.monotonic() - start
            report.requests = client.stats["requests"] - before.get("requests", 0)
        return report

    # -- reading -----------------------------------------------------------------------------
    def paper_fields(self, paper_id: str) -> dict[str, Any]:
        """The OpenAlex fields (`_openalex_fields`) and, after `enrich --semantic-scholar`, S2's:
        its TL;DR and ids, and the library papers that cite it influentially, which `cited_by`
        lists first."""
        out = self._openalex_fields(paper_id)
        s2 = self._store.s2.get(paper_id)
        if s2 is None or not s2.matched:
            return out
        influential = [pid for pid in self._live(self._store.s2.influential_citers(paper_id)) if pid != paper_id]
        citers = [li.other_paper for li in s2.links if li.direction == "cited_by" and li.other_paper]
        cited_by = list(dict.fromkeys([*influential, *out.get("cited_by", []), *self._live(citers)]))
        out.update(
            cited_by=[pid for pid in cited_by if pid != paper_id],
            influential_cited_by=influential,
            semantic_scholar={
                "paper_id": s2.s2_id,
                "tldr": s2.tldr,
                "tldr_model": s2.tldr_model,
                "external_ids": s2.external_ids,
                "citation_count": s2.citation_count,
                "influential_citation_count": s2.influential_count,
                "fetched_at": s2.fetched_at,
            },
        )
        return out

    def _openalex_fields(self, paper_id: str) -> dict[str, Any]:
        """What `show --json`, the paper page and MCP add for a paper: its OpenAlex id and counts,
        and the library papers it cites and that cite it ({} when it was never looked up)."""
        r = self._store.citations.get(paper_id)
        for alias in self._store.aliases_of(paper_id) if r is None else []:
            r = self._store.citations.get(alias)  # looked up before it was merged into this paper
            if r is not None:
                break
        if r is None:
            return {}
        if not r.matched:
            return {"openalex_id": "", "cited_by_count": None, "references": [], "cited_by": []}
        refs = self._store.citations.papers_of_works(r.referenced_works)
        references = sorted(set(self._live(refs.values())) - {paper_id})
        cited_by = [pid for pid in self._live(self._store.citations.citing_papers(r.openalex_id)) if pid != paper_id]
        return {
            "openalex_id": r.openalex_id,
            "cited_by_count": r.cited_by_count,
            "counts_by_year": r.counts_by_year,
            "references": references,
            "cited_by": cited_by,
            "references_count": len(r.referenced_works),
            "match": {"method": r.method, "score": r.score, "fetched_at": r.fetched_at},
        }

    def _live(self, ids: Iterable[str]) -> list[str]:
        """The ids as the library knows them now: a paper merged into another since it was looked up
        counts as that one, a paper no longer there not at all (order kept, no repeats)."""
        out: dict[str, None] = {}
        for pid in ids:
            now = self._store.resolve_id(pid)
            if now:
                out[now] = None
        return list(out)

    def has_counts(self) -> bool:
        """Whether any paper has a cited-by count yet (`enrich` has found one): the orders by
        citations change nothing before."""
        return bool(self._store.citations.most_cited(1))

    def citation_counts(self, paper_ids: Sequence[str]) -> dict[str, float]:
        """paper id -> OpenAlex cited-by count, for sorting (papers without one are left out)."""
        return {k: float(v) for k, v in self._store.citations.cited_by_counts(paper_ids).items()}

    def rising(self, paper_ids: Sequence[str], years: int = RISING_YEARS) -> dict[str, float]:
        """paper id -> citations in the last `years` calendar years, this one included (citation velocity)."""
        since = dt.date.today().year - years + 1
        return {k: float(v) for k, v in self._store.citations.recent_citations(paper_ids, since).items()}

    @staticmethod
    def filters() -> list[Filter]:
        # static: the CLI's --help lists the filters before any library is open
        return [
            Filter(
                "min_citations",
                int,
                "only papers OpenAlex counts at least this many citations for (after `paperatlas enrich`)",
                "citations",
                lambda lib, n: (
                    None
                    if n is None
                    else {pid for pid, c in lib.citations.citation_counts(lib.store.paper_ids()).items() if c >= n}
                ),
                minimum=0,
                metavar="N",
                example="10",
            )
        ]

    @staticmethod
    def sorts() -> list[Sort]:
        return [
            Sort(
                "citations",
                "most cited first (OpenAlex cited-by count; run `paperatlas enrich` first)",
                "citations",
                lambda lib, ids: lib.citations.citation_counts(ids),
                N_("most cited"),
                lambda lib: lib.citations.has_counts(),
            ),
            Sort(
                "rising",
                f"most cited in the last {RISING_YEARS} years first (citation velocity; after `paperatlas enrich`)",
                "citations",
                lambda lib, ids: lib.citations.rising(ids),
                N_("rising"),
                lambda lib: lib.citations.has_counts(),
            ),
        ]

    def decorate(self, hits: Sequence[Hit]) -> None:
        """Add each hit's cited-by count under `extras["citations"]` (where hits carry extras)."""
        counts = self._store.citations.cited_by_counts([h.paper.id for h in hits])
        for h in hits:
            extras = getattr(h, "extras", None)
            if isinstance(extras, dict) and h.paper.id in counts:
                extras["citations"] = {"cited_by_count": counts[h.paper.id]}

    def citation_neighbours(self, paper_id: str, kinds: Sequence[str] = LINK_KINDS) -> dict[str, float]:
        """Library papers linked to `paper_id` through citations, each with a strength: how many
        library papers cite both (`cocited`) plus how many references the two share (`coupled`)
        plus 1 when it cites the other (`cites`) or the other cites it (`cited_by`); `kinds` picks
        which of these count."""
        r = self._store.citations.get(paper_id)
        if r is None or not r.matched:
            return {}
        cs = self._store.citations
        out: dict[str, float] = {}

        def add(pid: str, w: float) -> None:
            if pid != paper_id:
                out[pid] = out.get(pid, 0.0) + w

        citers = cs.citing_papers(r.openalex_id) if r.openalex_id else []
        refs_of_citers = cs.references_of(citers)
        work_paper = cs.papers_of_works([w for ws in refs_of_citers.values() for w in ws] + r.referenced_works)
        if "cocited" in kinds:
            for ws in refs_of_citers.values():
                for w in set(ws):
                    if w in work_paper:
                        add(work_paper[w], 1.0)
        if "coupled" in kinds:
            for pid, n in cs.papers_citing_any(r.referenced_works).items():
                add(pid, float(n))
        if "cited_by" in kinds:
            for pid in citers:
                add(pid, 1.0)
        if "cites" in kinds:
            for w in r.referenced_works:
                if w in work_paper:
                    add(work_paper[w], 1.0)
        return out

    def neighbourhood(self, paper_id: str, most: int = 12) -> dict[str, Any]:
        """A small map of a paper's citation neighbours in the library, laid out on a circle around
        it: {"center", "nodes": [{id, title, year, relation, strength, x, y}], "edges": [[a, b]]}
        with x, y in 0..1 ({} when it has none). `relation`: cites | cited_by | linked (co-cited or
        sharing references)."""
        import math

        fields = self.paper_fields(paper_id)
        links = self.citation_neighbours(paper_id)
        if not links:
            return {}
        cites, cited_by = set(fields.get("references") or []), set(fields.get("cited_by") or [])
        chosen = sorted(links, key=lambda pid: (-links[pid], pid))[:most]
        papers = {p.id: p for p in self._lib.get_many(chosen)}
        chosen = [pid for pid in chosen if pid in papers]
        nodes = []
        for i, pid in enumerate(chosen):
            angle = 2 * math.pi * i / max(1, len(chosen)) - math.pi / 2
            rel = "cites" if pid in cites else "cited_by" if pid in cited_by else "linked"
            nodes.append(
                {
                    "id": pid,
                    "title": papers[pid].title,
                    "year": papers[pid].year,
                    "relation": rel,
                    "strength": links[pid],
                    "x": round(0.5 + 0.38 * math.cos(angle), 4),
                    "y": round(0.5 + 0.38 * math.sin(angle), 4),
                }
            )
        inside = set(chosen) | {paper_id}
        edges = [[a, b] for a, b in self._store.citations.graph() if a in inside and b in inside]
        return {"center": paper_id, "nodes": nodes, "edges": edges}

    def author_papers(
        self,
        author: str,
        base_url: str | None = None,
        client: HttpClient | None = None,
        mailto: str | None = None,
        max_pages: int = 25,
    ) -> AuthorPapers:
        """A researcher's own works from OpenAlex (an OpenAlex author id or ORCID) and the library
        papers they make a profile of: the works themselves where the library has them, and the
        library papers those works cite, most cited by them first. Papers not in the library are
        counted, not stored. Matching uses the library's OpenAlex ids (`enrich` or `fetch openalex`
        first) and DOIs. Raises SourceArgsError for an id that is neither, FetchError offline."""
        from ..http_client import HttpClient
        from ..sources.base import get_parsed
        from ..sources.openalex import DEFAULT_BASE, author_filter, bare_doi, mailto_default, work_id, work_links

        flt = author_filter(author)
        client = client or HttpClient(delay=0.2)
        base = (base_url or DEFAULT_BASE).rstrip("/")
        mail = (mailto if mailto is not None else mailto_default()).strip()
        works: list[dict[str, Any]] = []
        cursor: str | None = "*"
        seen: set[str] = set()
        pages = 0
        while cursor and cursor not in seen and pages < max_pages:
            seen.add(cursor)
            pages += 1
            params = {"filter": flt, "per-page": 200, "cursor": cursor, "select": SELECT}
            if mail:
                params["mailto"] = mail
            resp, data = get_parsed(client, f"{base}/works", _parse_page, f"openalex works of {author}", params)
            works += [w for w in data["results"] if isinstance(w, dict) and work_id(w.get("id"))]
            nxt = (data.get("meta") or {}).get("next_cursor")
            cursor = nxt if isinstance(nxt, str) and nxt else None
        cs = self._store.citations
        own_ids = [work_id(w.get("id")) for w in works]
        by_work = cs.papers_of_works(own_ids)
        dois = {bare_doi(w.get("doi")) for w in works if bare_doi(w.get("doi"))}
        own = set(self._live(by_work.values()))
        if dois:
            for p in self._store.get_papers(self._store.paper_ids()).values():
                if paper_doi(p) in dois:
                    own.add(p.id)
        votes: dict[str, int] = {}
        for w in works:
            for ref_pid in self._live(cs.papers_of_works(work_links(w)["referenced_works"]).values()):
                if ref_pid not in own:
                    votes[ref_pid] = votes.get(ref_pid, 0) + 1
        cited = sorted(votes, key=lambda pid: (-votes[pid], pid))
        return AuthorPapers(author, len(works), sorted(own), cited, votes)

    def neighbours(self) -> list[tuple[str, str]]:
        """Every (citing, cited) pair of library papers."""
        return self._store.citations.graph()

    def most_cited(self, limit: int = 10) -> list[tuple[str, int]]:
        return self._store.citations.most_cited(limit)

    def record_fetched(self, works: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store the links of works that `fetch openalex` brought in as papers (paper id, work)."""
        self._store.citations.save([_record(pid, w, "fetched", 1.0) for pid, w in works])
