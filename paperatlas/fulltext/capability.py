"""The body of papers in the library: PDFs attached (or fetched), read, kept, searched and handed to
`ask` as passages with their section and page.

A PDF is kept once, under its sha256, in a folder beside the library (`<library>.files/`, or the
folder $PAPERATLAS_FILES names: a PostgreSQL deployment says where). What could not be read is
recorded per paper with the reason and the fix, and never stored as text.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import LibraryCore
from .. import settings
from ..contrib import Filter
from ..errors import IngestError, NotFound, PaperatlasError
from ..http_client import HttpClient
from ..ingest.normalize import title_key
from ..ingest.formats import Format
from ..ingest.pipeline import PreviewFile, Records
from ..models import BadRecord, IngestReport, Paper
from ..search.query import fts5_match, parse
from ..search.bm25 import english_stopwords
from ..search.floor import floor_for
from ..search.fusion import convex
from .fetch import FetchReport, fetch_many
from .vectors import EmbedReport, PassageVectors
from .reader import (
    DEFAULT_BACKEND,
    MAX_FILE_BYTES,
    REASONS,
    Document,
    FulltextError,
    identifiers,
    read_pdf,
    title_on_first_page,
)

log = logging.getLogger(__name__)
FILES_ENV = "PAPERATLAS_FILES"
MAX_FOLDER_FILES = 5000  # PDFs one `add-folder` reads (a whole disk is not a folder of papers)
# papers a folder or an ingest of PDFs embeds by meaning at once (a handful: seconds each); past
# this, their passages wait for `fulltext embed` (docs/fulltext.md: what is embedded when)
EMBED_AT_ONCE = 20
# the saved papers a fetch of a whole venue embeds at once (more: `fulltext embed --saved`)
SAVED_AT_ONCE = 200
PASSAGE_MODES = ("hybrid", "keyword")


@dataclass
class Passage:
    """A paragraph of a paper's body, with where it sits: what search shows and `ask` cites."""

    id: str  # the paper
    n: int  # the passage's number in the library (the reader page's #p-N anchor)
    page: int
    section: str
    text: str
    score: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "n": self.n, "page": self.page, "section": self.section, "text": self.text}


@dataclass
class BodyHit:
    """A paper found by a passage of its body: `search --in body`."""

    paper: Paper
    passage: Passage
    score: float

    def to_dict(self) -> dict[str, Any]:
        d = self.paper.public()
        d.update(score=round(float(self.score), 6), passage=self.passage.to_dict())
        return d


@dataclass
class FolderReport:
    """What `fulltext add-folder` did with each PDF."""

    files: int = 0
    matched: list[dict[str, Any]] = field(default_factory=list)  # {file, id, by (arxiv|doi|title), pages}
    already: list[dict[str, Any]] = field(default_factory=list)  # {file, id}: that paper was read before
    unmatched: list[dict[str, Any]] = field(default_factory=list)  # {file, title, doi?, arxiv?}
    failed: list[dict[str, Any]] = field(default_factory=list)  # {file, reason, message}
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SectionText:
    """One section as a translator (or any reader of whole sections) sees it."""

    index: int
    heading: str
    page: int
    paragraphs: list[str]


@dataclass
class AddResult:
    id: str
    state: str  # read | failed
    reason: str = ""
    message: str = ""
    fix: str = ""
    pages: int = 0
    sections: int = 0
    passages: int = 0
    captions: int = 0
    references: int = 0
    references_in_library: int = 0
    sha256: str = ""
    embedded: int = 0  # passage texts embedded by meaning now

    @property
    def ok(self) -> bool:
        return self.state == "read"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class FulltextView:
    """A paper's stored body, in the shape `fulltext show --json` and `/paper/{id}/read.json` give."""

    id: str
    title: str
    pages: int
    sections: list[dict[str, Any]]
    captions: list[dict[str, Any]]
    references: list[dict[str, Any]]
    status: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "pages": self.pages,
            "sections": [
                {
                    "index": s["idx"],
                    "heading": s["heading"],
                    "number": s["number"],
                    "page": s["page"],
                    "text": "\n\n".join(p["text"] for p in s["paragraphs"]),
                    "paragraphs": s["paragraphs"],
                }
                for s in self.sections
            ],
            "captions": self.captions,
            "references": self.references,
            "status": self.status,
        }


def section_rows(doc: Document) -> list[dict[str, Any]]:
    """A read document's sections as the store keeps them: heading, number, page, a hash of the
    text (a translation is kept per section while it holds) and each paragraph with its page."""
    return [
        {
            "heading": s.heading,
            "number": s.number,
            "page": s.page,
            "text_hash": _section_hash(s.heading, s.paragraphs),
            "paragraphs": list(zip(s.paragraph_pages, s.paragraphs)),
        }
        for s in doc.sections
    ]


def _section_hash(heading: str, paragraphs: Sequence[str]) -> str:
    return hashlib.sha256("\x00".join([heading, *paragraphs]).encode()).hexdigest()[:16]


class Fulltext:
    """`lib.fulltext`: attach, read, show, search and retrieve the body of papers."""

    def __init__(self, lib: LibraryCore) -> None:
        self.lib = lib
        self.vectors = PassageVectors(lib)

    @property
    def store(self) -> Any:
        return self.lib.store.fulltext

    # -- passages by meaning -------------------------------------------------------------------
    def embed(
        self, paper_ids: Sequence[str] | None = None, progress: Callable[[int, int], None] | None = None
    ) -> EmbedReport:
        """Embed the passages of these papers (None: every paper read) that have no vector yet:
        resumable, each batch stored in a short transaction of its own."""
        return self.vectors.embed(paper_ids, progress)

    @property
    def by_meaning(self) -> bool:
        """Whether passages are searched by meaning too (a weight above 0; keyword alone by default)."""
        return float(settings.get("fulltext_semantic_weight")) > 0

    def embed_soon(self, paper_ids: Sequence[str]) -> EmbedReport | None:
        """Embed the passages of a handful of papers now (a PDF attached by hand, a paper asked
        about); more than EMBED_AT_ONCE wait for `fulltext embed`. None: nothing was done."""
        ids = [p for p in dict.fromkeys(paper_ids) if self.has(p)]
        if not ids or len(ids) > EMBED_AT_ONCE or self.lib.read_only:
            return None
        return self._embed_quietly(ids)

    def _embed_quietly(self, ids: Sequence[str]) -> EmbedReport | None:
        """Embed on the way (after a PDF was read, before a paper is asked): when the model cannot
        run here, the text stays stored and searchable by keyword, `fulltext status` counts the
        passages without a vector, and the reason is logged; the read itself does not fail. With
        meaning weighted 0 (the default: keyword alone found more evidence, docs/fulltext.md) no
        search reads the vectors, so none is made on the way; `fulltext embed` still makes them."""
        if not self.by_meaning:
            return None
        try:
            return self.vectors.embed(ids)
        except PaperatlasError as e:
            log.warning("passages of %d papers not embedded: %s (fix: %s)", len(ids), e.message, e.fix)
            return None

    def asked_about(self, paper_id: str) -> None:
        """A question is asked of this one paper (`ask --paper`): its passages are embedded first,
        so they are found by meaning too (a contribution the language-model layer calls)."""
        self.embed_soon([paper_id])

    # -- the PDF files -------------------------------------------------------------------------
    def files_dir(self) -> Path:
        env = str(settings.get("files")).strip()
        if env:
            return Path(env).expanduser()
        if getattr(self.lib.store, "backend", "sqlite") != "sqlite" or self.lib.path == ":memory:":
            raise PaperatlasError(
                "this library has no folder beside it to keep PDFs in",
                f"set ${FILES_ENV} to a folder every host of the library can read",
            )
        return Path(self.lib.path + ".files")

    def _keep(self, data: bytes) -> str:
        """Write the PDF under its sha256 (once: the same file attached twice is kept once)."""
        sha = hashlib.sha256(data).hexdigest()
        folder = self.files_dir() / sha[:2]
        path = folder / f"{sha}.pdf"
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".part")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        return sha

    def pdf_path(self, paper_id: str) -> Path | None:
        """The stored PDF of a paper that was read, or None."""
        st = self.store.status(paper_id)
        if st is None or not st.sha256:
            return None
        try:
            path = self.files_dir() / st.sha256[:2] / f"{st.sha256}.pdf"
        except PaperatlasError:
            return None
        return path if path.exists() else None

    # -- reading -----------------------------------------------------------------------------------
    def add(self, paper_id: str, file: str | Path, check_title: bool = True, embed: bool = True) -> AddResult:
        """Attach a local PDF to a paper and read it; its passages are embedded too (`embed`)."""
        paper = self.lib.get(paper_id)
        path = Path(file).expanduser()
        try:
            size = path.stat().st_size
        except OSError as e:
            raise PaperatlasError(f"cannot read {path}: {e.strerror or e}", "check the path of the PDF") from None
        if size > MAX_FILE_BYTES:
            return self.record_failure(paper.id, FulltextError("too_large", f"{path} is {size >> 20} MB"), str(path))
        r = self.add_bytes(paper, path.read_bytes(), str(path), check_title)
        if r.ok and embed:  # a PDF attached by hand is a paper that matters: searchable by meaning at once
            rep = self.embed_soon([r.id])
            r.embedded = rep.passages if rep is not None else 0
        return r

    def add_bytes(self, paper: Paper | str, data: bytes, source: str = "", check_title: bool = True) -> AddResult:
        """Read PDF bytes as the body of `paper`: stored when they are its paper, else the reason recorded."""
        if isinstance(paper, str):
            paper = self.lib.get(paper)
        try:
            doc = read_pdf(data, DEFAULT_BACKEND)
        except FulltextError as e:
            return self.record_failure(paper.id, e, source)
        if check_title and paper.title and not title_on_first_page(paper.title, doc.first_page):
            wrong = FulltextError(
                "not_paper", f"page 1 of {source or 'the PDF'} does not carry the title {paper.title!r}"
            )
            return self.record_failure(paper.id, wrong, source)
        return self._store(paper, doc, self._keep(data), source)

    def record_failure(self, paper_id: str, e: FulltextError, source: str) -> AddResult:
        """Record why a paper's PDF was not read (its text read before, if any, stays)."""
        status = {"state": "failed", "reason": e.reason, "message": e.message, "fix": e.fix, "source": source}
        if not self.has(paper_id):  # a wrong file attached later never hides the body read before
            self.store.put_failure(paper_id, status)
        return AddResult(paper_id, "failed", e.reason, e.message, e.fix)

    def _match_references(self, paper_id: str, doc: Document) -> list[str | None]:
        keys = [title_key(r.title) if len(r.title) >= 12 else "" for r in doc.references]
        found = self.lib.store.title_matches([k for k in keys if k])
        out: list[str | None] = []
        for k in keys:
            ids = [pid for pid, _venue, _authors in found.get(k, []) if pid != paper_id] if k else []
            out.append(ids[0] if len(ids) == 1 else None)
        return out

    def _store(self, paper: Paper, doc: Document, sha: str, source: str) -> AddResult:
        sections = section_rows(doc)
        cited = self._match_references(paper.id, doc)
        refs = [{**r.to_dict(), "id": c} for r, c in zip(doc.references, cited)]
        status = {"state": "read", "sha256": sha, "pages": doc.pages, "source": source, "backend": doc.backend}
        n = self.store.put_document(paper.id, status, sections, [c.to_dict() for c in doc.captions], refs)
        return AddResult(
            paper.id,
            "read",
            pages=doc.pages,
            sections=len(sections),
            passages=n,
            captions=len(doc.captions),
            references=len(refs),
            references_in_library=sum(1 for c in cited if c),
            sha256=sha,
        )

    # -- what is stored ----------------------------------------------------------------------------
    def has(self, paper_id: str) -> bool:
        st = self.store.status(paper_id)
        return st is not None and st.state == "read"

    def show(self, paper_id: str) -> FulltextView:
        """A paper's stored body; NotFound-like error with the fix when it has none."""
        paper = self.lib.get(paper_id)
        st = self.store.status(paper.id)
        if st is None or st.state != "read":
            why = f" ({st.reason}: {st.message})" if st is not None else ""
            raise PaperatlasError(
                f"paper {paper.id} has no full text{why}",
                (st.fix + "; or " if st is not None and st.fix else "")
                + f"attach its PDF: `paperatlas fulltext add {paper.id} FILE.pdf`",
            )
        return FulltextView(
            paper.id,
            paper.title,
            st.pages,
            self.store.sections(paper.id),
            self.store.captions(paper.id),
            self.store.references(paper.id),
            st.to_dict(),
        )

    def cited_by(self, paper_id: str) -> list[str]:
        """The library papers whose reference list, read from their PDF, names this paper."""
        return self.store.citing(paper_id)

    def sections_of(self, paper_id: str) -> list[SectionText]:
        """The paper's body section by section (empty without one): what a translation works on."""
        return [
            SectionText(s["idx"], s["heading"], s["page"], [p["text"] for p in s["paragraphs"]])
            for s in self.store.sections(paper_id)
            if s["paragraphs"]
        ]

    def library_stats(self) -> dict[str, Any]:
        """What `stats` says of the full texts (a contribution the library collects): papers per
        state, and `fulltext_passages`: passages stored and how many are embedded by meaning."""
        counts = self.store.counts()
        if not counts:
            return {"fulltext": counts}
        return {
            "fulltext": counts,
            "fulltext_passages": {"passages": self.store.passage_count(), "embedded": self._embedded()},
        }

    def passages(
        self, question: str, paper_ids: Sequence[str], per_paper: int = 2, limit: int = 8, mode: str = "hybrid"
    ) -> list[Passage]:
        """The passages `ask` sends the model (a contribution the language-model layer collects);
        `mode` "keyword" ranks by words alone (what a stored FAQ or TL;DR is keyed by stays put
        when the paper's passages are embedded later)."""
        return self.retrieve(question, paper_ids, per_paper, limit, mode)

    def body_matches(
        self, question: str, limit: int = 5, venue: str | None = None, year: int | None = None
    ) -> list[Passage]:
        """The papers whose body matches a question, each by its best passage, best first: the papers
        `ask` may read besides those the search of titles and abstracts finds (a contribution)."""
        return [h.passage for h in self.hits(question, limit, venue, year)]

    def status(self) -> dict[str, Any]:
        """Counts per state (read, or the reason reading failed), with each reason's fix."""
        counts = self.store.counts()
        return {
            "papers": self.lib.count(),
            "counts": counts,
            "read": counts.get("read", 0),
            "failed": sum(n for k, n in counts.items() if k != "read"),
            "passages": self.store.passage_count(),
            "embedded": self._embedded(),
            "fixes": {k: REASONS[k] for k in counts if k in REASONS},
        }

    def _embedded(self) -> int:
        """Passages searchable by meaning (0 when the library's embedder cannot be made here)."""
        try:
            return int(self.vectors.counts()["embedded"])
        except PaperatlasError:
            return 0

    def failures(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.store.statuses("failed")]

    # -- search and retrieval --------------------------------------------------------------------
    def search(
        self, query: str, limit: int = 20, paper_ids: Sequence[str] | None = None, mode: str = "hybrid"
    ) -> list[Passage]:
        """Passages matching the query, best first; one per paper unless `paper_ids` names the papers
        to look in. By keyword (bm25 on SQLite) and, in "hybrid" mode, by meaning where passages are
        embedded: both lists fused as the papers' search fuses them (search/fusion.py, the library's
        fusion settings); passages without a vector count by their keyword score alone."""
        if mode not in PASSAGE_MODES:
            raise PaperatlasError(f"unknown passage search mode {mode!r}", f"use one of: {', '.join(PASSAGE_MODES)}")
        q = parse(query)
        stop = english_stopwords()
        terms = [t for t in q.terms if t not in stop and len(t) > 1] or q.terms
        depth = max(limit * 5, 50)
        rows = []
        if terms:
            q.terms = terms
            rows = self.store.search(fts5_match(q), terms, depth, paper_ids)
        fused = self._fuse(query, rows, depth, paper_ids) if mode == "hybrid" and query.strip() else None
        if fused is None:
            ranked = [(r, -r.score) for r in rows]
        else:
            at = {r.rowid: r for r in rows}
            missing = [int(x) for x, _ in fused if int(x) not in at]
            at.update({r.rowid: r for r in self.store.passages_by_rowid(missing)})
            ranked = [(at[int(x)], sc) for x, sc in fused if int(x) in at]
        out: list[Passage] = []
        seen: set[str] = set()
        for r, sc in ranked:
            if paper_ids is None and r.paper_id in seen:
                continue
            seen.add(r.paper_id)
            out.append(Passage(r.paper_id, r.rowid, r.page, r.section, r.text, sc))
            if len(out) >= limit:
                break
        return out

    def _fuse(
        self, query: str, rows: Sequence[Any], depth: int, paper_ids: Sequence[str] | None
    ) -> list[tuple[str, float]] | None:
        """The keyword rows and the nearest embedded passages, fused (None: nothing is embedded
        among the passages searched, so keyword alone decides). Each keyword candidate that has a
        vector gets its real cosine; one without a vector, and a meaning candidate the keyword list
        missed, count 0 in the list they are absent from. Within named papers (what `ask` reads)
        the nearest passages always join: a question's answer need not share its words."""
        w = float(settings.get("fulltext_semantic_weight"))
        if w == 0:  # keyword alone, by choice
            return None
        try:
            index = self.vectors.index_for(paper_ids)
            if not len(index):
                return None
            qv = self.vectors.query_vector(query)
        except PaperatlasError as e:  # the library's model cannot run here: keyword alone
            log.warning("passages searched by keyword only: %s", e.message)
            return None
        semantic = index.search(qv, depth)
        if paper_ids is None:
            # over the library a passage that shares no word with the query must be a clear match by
            # meaning (the papers' floor for this model; none calibrated: it is not added), so a query
            # of nonsense finds nothing rather than the nearest junk
            floor = floor_for(self.lib.embedder.id)
            kw_ids = {str(r.rowid) for r in rows}
            semantic = [(x, c) for x, c in semantic if x in kw_ids or (floor is not None and c >= floor.gate_cosine)]
        have = {x for x, _ in semantic}
        for r in rows:
            v = index.vector(str(r.rowid))
            if v is not None and str(r.rowid) not in have:
                semantic.append((str(r.rowid), float(v @ qv)))
        keyword = [(str(r.rowid), -r.score) for r in rows]
        if keyword and all(sc == 0 for _, sc in keyword):  # a LIKE scan ranks nothing: every match counts 1
            keyword = [(x, 1.0) for x, _ in keyword]
        return convex([keyword, semantic], [1 - w, w], missing=0.0, norm=self.lib.engine.settings.norm)

    def hits(
        self, query: str, limit: int = 20, venue: str | None = None, year: int | None = None, mode: str = "hybrid"
    ) -> list[BodyHit]:
        """Papers whose body matches the query, each with its best passage (section and page): by
        keyword, and by meaning where passages are embedded ("hybrid")."""
        keep = None
        if venue or year:
            keep = {p.id for p in self.lib.papers(venue=venue, year=year)} & self.store.read_ids()
        found = self.search(query, limit=limit * 5 if keep is not None else limit, paper_ids=None, mode=mode)
        if keep is not None:
            found = [x for x in found if x.id in keep]
        papers = {p.id: p for p in self.lib.get_many([x.id for x in found[:limit]])}
        return [BodyHit(papers[x.id], x, x.score) for x in found[:limit] if x.id in papers]

    def retrieve(
        self, question: str, paper_ids: Sequence[str], per_paper: int = 2, limit: int = 8, mode: str = "hybrid"
    ) -> list[Passage]:
        """The passages of these papers' bodies that best match a question, at most `per_paper`
        from each and `limit` in all, in the papers' order: what `ask` sends the model."""
        ids = [p for p in dict.fromkeys(paper_ids) if self.has(p)]
        if not ids:
            return []
        hits = self.search(question, limit=200, paper_ids=ids, mode=mode)
        by_paper: dict[str, list[Passage]] = {}
        for h in hits:
            got = by_paper.setdefault(h.id, [])
            if len(got) < per_paper:
                got.append(h)
        out: list[Passage] = []
        for pid in ids:
            out.extend(by_paper.get(pid, []))
        return out[:limit]

    # -- a folder of PDFs ---------------------------------------------------------------------------
    def match(self, doc: Document) -> tuple[str | None, str]:
        """(the library paper a PDF is, how it was told), by the arXiv id, the DOI or the title on
        its first page; (None, "") when none is."""
        ids = identifiers(doc.first_page)
        if "arxiv" in ids:
            pid = self.lib.store.resolve_id(ids["arxiv"])
            if pid:
                return pid, "arxiv"
        if "doi" in ids:
            pid = self.store.paper_by_doi(ids["doi"])
            if pid:
                return pid, "doi"
        key = title_key(doc.title)
        found = [pid for pid, _v, _a in self.lib.store.title_matches([key]).get(key, [])] if key else []
        if len(found) == 1:
            return found[0], "title"
        return None, ""

    def match_record(self, rec: dict[str, Any]) -> tuple[str | None, str]:
        """The library paper a record made from a PDF already is (by arXiv id, DOI or title)."""
        pid = self.lib.store.resolve_id(rec["id"]) if not rec["id"].startswith("pdf-") else None
        if pid:
            return pid, "arxiv"
        if rec.get("doi") and (pid := self.store.paper_by_doi(rec["doi"])):
            return pid, "doi"
        key = title_key(rec["title"])
        found = [p for p, _v, _a in self.lib.store.title_matches([key]).get(key, [])] if key else []
        return (found[0], "title") if len(found) == 1 else (None, "")

    def add_folder(self, folder: str | Path, limit: int = MAX_FOLDER_FILES, redo: bool = False) -> FolderReport:
        """Read every PDF under `folder` (a Zotero storage folder, a download folder) and attach each
        to the library paper it is; the others are listed (`unmatched`) with what they say they are."""
        root = Path(folder).expanduser()
        if not root.is_dir():
            raise PaperatlasError(f"{root} is not a folder", "give the folder that holds the PDFs")
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
        report = FolderReport(files=len(files))
        if len(files) > limit:
            report.notes.append(f"only the first {limit} of {len(files)} PDFs were read (--limit)")
            files = files[:limit]
        for f in files:
            try:
                if f.stat().st_size > MAX_FILE_BYTES:
                    raise FulltextError("too_large", f"{f.stat().st_size >> 20} MB")
                data = f.read_bytes()
                doc = read_pdf(data, DEFAULT_BACKEND)
            except (FulltextError, OSError) as e:
                reason = getattr(e, "reason", "damaged")
                report.failed.append({"file": str(f), "reason": reason, "message": str(getattr(e, "message", e))})
                continue
            pid, how = self.match(doc)
            if pid is None:
                # the paper `ingest` made of this very file (its id is the file's hash): a page 1
                # with no title to match by (a page cut from a paper) is still that paper
                made = self.lib.store.resolve_id("pdf-" + hashlib.sha256(data).hexdigest()[:12])
                pid, how = (made, "file") if made else (None, "")
            if pid is None:
                report.unmatched.append({"file": str(f), "title": doc.title, **identifiers(doc.first_page)})
                continue
            if not redo and self.has(pid):
                report.already.append({"file": str(f), "id": pid})
                continue
            r = self._store(self.lib.get(pid), doc, self._keep(data), str(f))
            report.matched.append({"file": str(f), "id": pid, "by": how, "pages": r.pages})
        matched = [m["id"] for m in report.matched]
        # the note only where meaning counts: at weight 0 (the default) every passage is searched as it
        # can be, by keyword, and `fulltext embed` would change no answer
        if matched and self.embed_soon(matched) is None and self.by_meaning:
            report.notes.append(
                f"the passages of {len(matched)} papers are searchable by keyword; "
                "`paperatlas fulltext embed --all` makes them searchable by meaning too"
            )
        return report

    # -- a PDF given to `ingest` (the library's file-reader hook) ------------------------------
    @staticmethod
    def claims_file(path: str | Path, format: str | None) -> bool:
        """A PDF is this room's to read, whatever list format was asked for the others."""
        return Path(path).suffix.lower() == ".pdf"

    @staticmethod
    def preview_file(path: str | Path) -> PreviewFile:
        return PreviewFile(
            str(path), "pdf", "a PDF: attached to the library paper it is, or made a paper from its page 1"
        )

    def ingest_files(self, paths: Sequence[str | Path], skip_bad: bool = False) -> IngestReport:
        """Papers made from PDFs ("upload your own paper"): a PDF that is a library paper already
        (its arXiv id, DOI or title) is attached to it; any other becomes a new paper, through the
        library's one write path, with its title and abstract from page 1, and its full text read.
        The report's `outcomes["pdfs"]` says what became of each file ({file, id, state, title}); with
        `skip_bad`, the files that cannot be read are listed in its `bad` and the others stored.

        Raises:
            IngestError: a file cannot be read as a paper (and `skip_bad` is False); nothing was
                stored (every file is read before anything is written), and every such file is named.
        """
        read, bad = [], []
        for path in paths:
            try:
                read.append((path, *self.record_from(path)))
            except FulltextError as e:
                fix = e.fix or "check the file"
                bad.append(BadRecord(str(path), "the PDF", f"cannot read it ({e.reason}): {e.message}", fix))
            except OSError as e:  # not there, or not readable: the file system's words, not "damaged"
                bad.append(BadRecord(str(path), "the file", str(e.strerror or e), "check the path"))
        if bad and not skip_bad:
            first = bad[0]
            more = f" (and {len(bad) - 1} more of the {len(paths)} files)" if len(bad) > 1 else ""
            raise IngestError(
                bad,
                f"{first.file}: {first.message}{more}",
                f"{first.fix}; or pass --skip-bad to store the readable PDFs and list the others",
            )
        rows, blobs, outcome = [], {}, []
        for path, rec, data in read:
            doc_id, how = self.match_record(rec)
            if doc_id is not None:
                r = self.add_bytes(doc_id, data, str(path), check_title=False)
                state = f"attached ({how})" if r.ok else r.reason
                outcome.append({"file": str(path), "id": doc_id, "state": state, "title": rec["title"]})
                continue
            rows.append((str(path), rec))
            blobs[rec["id"]] = (path, data, rec["title"])
        report = IngestReport()
        if rows:
            report = self.lib.add_papers(Records(", ".join(str(p) for p, _ in rows), "pdf", Format.JSON, rows))
            for pid, (path, data, title) in blobs.items():
                r = self.add_bytes(self.lib.store.resolve_id(pid) or pid, data, str(path), check_title=False)
                outcome.append({"file": str(path), "id": r.id, "state": "new" if r.ok else r.reason, "title": title})
        report.bad.extend(bad)
        report.outcomes["pdfs"] = outcome
        self.embed_soon([o["id"] for o in outcome])  # "upload your own paper": a handful, at once
        return report

    def record_from(self, file: str | Path) -> tuple[dict[str, Any], bytes]:
        """A paper record made from a PDF (the title, abstract, DOI and arXiv id page 1 gives), for
        the library's ingest to store; and the file's bytes. Raises FulltextError when unreadable."""
        path = Path(file).expanduser()
        if path.stat().st_size > MAX_FILE_BYTES:
            raise FulltextError("too_large", f"{path} is {path.stat().st_size >> 20} MB")
        data = path.read_bytes()
        doc = read_pdf(data, DEFAULT_BACKEND)
        if not doc.title:
            raise FulltextError("damaged", f"{path}: no title could be read on page 1")
        ids = identifiers(doc.first_page)
        rec: dict[str, Any] = {
            "id": ids.get("arxiv") or "pdf-" + hashlib.sha256(data).hexdigest()[:12],
            "title": doc.title,
            "abstract": doc.abstract,
        }
        if doc.authors:
            rec["authors"] = doc.authors
        if "doi" in ids:
            rec["doi"] = ids["doi"]
        return rec, data

    def fetch(
        self,
        ids: Sequence[str] = (),
        venue: str | None = None,
        year: int | None = None,
        all_papers: bool = False,
        redo: bool = False,
        client: HttpClient | None = None,
        on_progress: Callable[[int, int, str, str], None] | None = None,
        workers: int | None = None,
        **filters: Any,
    ) -> FetchReport:
        """Download and read the PDFs of these papers (ids; the papers the filters of `lib.filters`
        keep; with both, the ids they keep; or every paper), skipping those already read unless
        `redo`: a run that was stopped resumes where it was. `workers`: hosts asked at once."""
        filters = {k: v for k, v in filters.items() if v is not None}
        if ids:
            papers = self.lib.get_many(list(ids))
            missing = set(ids) - {p.id for p in papers}
            if missing:
                raise NotFound(
                    f"no paper with id {sorted(missing)[0]!r}", "list the papers with `paperatlas list` or search"
                )
            if venue or year or filters:  # the named papers (--saved, --agenda) that the filters keep
                keep = {p.id for p in self.lib.papers(venue=venue, year=year, **filters)}
                papers = [p for p in papers if p.id in keep]
        elif venue or year or filters or all_papers:
            papers = self.lib.papers(venue=venue, year=year, **filters)
        else:
            raise PaperatlasError(
                "which papers? none was named", "give paper ids, a filter (--venue V --year Y, --author A ...) or --all"
            )
        report = fetch_many(self, papers, client, redo, on_progress, workers)
        self.embed_fetched([p.id for p in papers], named=bool(ids))
        return report

    def embed_fetched(self, paper_ids: Sequence[str], named: bool) -> EmbedReport | None:
        """What a fetch embeds by meaning at once: a handful of papers named by id, and of a whole
        venue (or library) the papers a reader saved (the agenda is made of them); every other
        passage is searchable by keyword at once, and by meaning after `fulltext embed --all`."""
        ids = [p for p in paper_ids if self.has(p)]
        if not (named and len(ids) <= EMBED_AT_ONCE):
            saved = self.store.saved_ids()
            ids = [p for p in ids if p in saved][:SAVED_AT_ONCE]
        if not ids or self.lib.read_only:
            return None
        return self._embed_quietly(ids)

    @staticmethod
    def filters() -> list[Filter]:
        """The search filter `fulltext` (only papers whose full text was read), for the filter table
        (static: the CLI's --help lists the filters before any library is open). Searching the body
        itself is `hits`: a search of its own, with passages, not a filter of the paper search."""

        def keep(lib: Any, value: Any) -> set[str] | None:
            return lib.fulltext.store.read_ids() if value else None

        return [
            Filter(
                name="fulltext",
                type=bool,
                help="only papers whose full text (PDF) was read",
                owner="fulltext",
                keep=keep,
            )
        ]
