"""A reader's own papers as `lib.own_papers`: what a researcher wrote makes their profile on day one.

`import_author` pages through a researcher's works in OpenAlex (an OpenAlex author id or an ORCID),
`import_bibtex` reads a BibTeX file of their papers. Either way the papers are stored as the
reader's own (`store.own_papers`: apart from the library's papers, so they are never listed,
searched or counted as the conference's), embedded with the library's model, and handed to the
recommenders as the reader's first likes (`reader_papers`, a contribution `recommend` asks for):
recommendations follow what the reader works on before they have starred a single paper.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PaperatlasError
from ..ingest.formats import Format
from ..models import Paper
from ..readers import ReaderArg, Readers
from ..recommend.own import ReaderPapers
from ..store.own_papers import OwnPaper

if TYPE_CHECKING:
    from ..http_client import HttpClient
    from ..core import LibraryCore

MAX_OWN = 2000  # papers one reader may bring: past any career's list, short of a whole venue by mistake
MAX_PAGES = 25  # OpenAlex pages of one author's works (200 a page)


@dataclass
class OwnImport:
    """What one import of a reader's own papers did."""

    reader: str
    source: str
    found: int = 0  # papers the source listed
    new: int = 0
    updated: int = 0
    embedded: int = 0
    skipped: list[str] = field(default_factory=list)  # entries not taken, each with why
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        s = f"{self.found} own papers of {self.reader} from {self.source}: {self.new} new, {self.updated} updated"
        if self.embedded:
            s += f", {self.embedded} embedded"
        if self.skipped:
            s += f", {len(self.skipped)} skipped"
        return s

    def to_dict(self) -> dict[str, Any]:
        return {
            "reader": self.reader,
            "source": self.source,
            "found": self.found,
            "new": self.new,
            "updated": self.updated,
            "embedded": self.embedded,
            "skipped": self.skipped,
            "notes": self.notes,
            "summary": self.summary(),
        }


def own_paper(p: Paper, source: str) -> OwnPaper:
    """A normalised paper as one of a reader's own."""
    from ..sources.openalex import bare_doi

    doi = bare_doi(p.extra.get("doi")) or (bare_doi(p.url) if "doi.org/" in p.url else "")
    openalex = str(p.extra.get("openalex_id") or "")
    key = openalex or (f"doi:{doi}" if doi else p.id)
    return OwnPaper(
        key=key,
        title=p.title if not p.title_derived else "",
        abstract=p.abstract,
        authors=list(p.authors),
        venue=p.venue,
        year=p.year,
        keywords=list(p.keywords),
        doi=doi,
        openalex_id=openalex,
        source=source,
    )


class OwnPapers:
    """Readers' own papers: brought in from OpenAlex or BibTeX, embedded, read by `recommend`.

    Example:
        >>> lib.own_papers.import_author("me", "0000-0001-6187-6610").summary()  # doctest: +SKIP
        '62 own papers of me from openalex --author 0000-0001-6187-6610: 62 new, 0 updated, 62 embedded'
        >>> lib.recommend.for_reader("me", limit=5)  # doctest: +SKIP
    """

    def __init__(self, lib: LibraryCore, readers: Readers) -> None:
        self._lib = lib
        self._store = lib.store
        self._readers = readers

    # -- bringing them in --------------------------------------------------------------------
    def import_author(
        self,
        reader: ReaderArg,
        author: str,
        base_url: str | None = None,
        client: HttpClient | None = None,
        mailto: str | None = None,
        max_pages: int = MAX_PAGES,
        embed: bool = True,
    ) -> OwnImport:
        """Store a researcher's works in OpenAlex (an OpenAlex author id or an ORCID) as the reader's
        own papers. Raises SourceArgsError for an id that is neither, FetchError when OpenAlex cannot
        be reached (nothing is stored then: the works are written once they have all arrived)."""
        from ..http_client import HttpClient
        from ..sources.base import create_source

        opts: dict[str, Any] = {"author": author}
        if mailto is not None:
            opts["mailto"] = mailto
        src = create_source("openalex", [], base_url, **opts)
        client = client or HttpClient(delay=src.polite_delay)
        r = self._readers.get(reader)
        report = OwnImport(r.name, src.key)
        papers: list[OwnPaper] = []
        pages = src.pages(client, {})
        try:
            for n, page in enumerate(pages, 1):
                if page.note:
                    report.notes.extend(page.note.splitlines())
                for loc, row in page.rows:
                    self._take(row, Format.JSON, src.key, loc, papers, report)
                if n >= max_pages and not page.state.get("complete", False):
                    report.notes.append(f"stopped after {max_pages} pages of works ({len(papers)} papers)")
                    break
        finally:
            close = getattr(pages, "close", None)
            if close is not None:
                close()
        return self._save(r.id, papers, report, embed)

    def import_bibtex(self, reader: ReaderArg, path: str | Path, embed: bool = True) -> OwnImport:
        """Store the entries of a BibTeX file of the reader's own papers. Raises PaperatlasError
        naming the file and the fix when it cannot be read; entries without a title are skipped,
        each named in the report."""
        from ..ingest.formats import FileError, read_file

        r = self._readers.get(reader)
        name = Path(path).name
        try:
            result = read_file(path, Format.BIBTEX)
        except FileError as e:
            b = e.bad
            raise PaperatlasError(f"{b.file}, {b.location}: {b.message}", b.fix) from None
        report = OwnImport(r.name, f"bibtex {name}")
        report.skipped.extend(f"{b.location}: {b.message}" for b in result.bad)
        papers: list[OwnPaper] = []
        for loc, row in result.rows:
            self._take(row, Format.BIBTEX, f"bibtex {name}", loc, papers, report)
        return self._save(r.id, papers, report, embed)

    def _take(
        self, row: dict[str, Any], fmt: Format, source: str, loc: str, out: list[OwnPaper], report: OwnImport
    ) -> None:
        from ..ingest.normalize import RecordError, to_paper

        report.found += 1
        try:
            p, _ = to_paper(row, fmt, source)
        except RecordError as e:
            report.skipped.append(f"{loc}: {e}")
            return
        own = own_paper(p, source)
        if not own.title:
            report.skipped.append(f"{loc}: no title (a paper is known by its title)")
            return
        if len(out) >= MAX_OWN:
            if len(out) == MAX_OWN:
                report.notes.append(f"only the first {MAX_OWN} papers are kept")
            report.skipped.append(f"{loc}: past the first {MAX_OWN} papers")
            return
        out.append(own)

    def _save(self, reader_id: int, papers: list[OwnPaper], report: OwnImport, embed: bool) -> OwnImport:
        unique = list({p.key: p for p in papers}.values())
        report.new, report.updated = self._store.own_papers.save(reader_id, unique)
        if embed:
            report.embedded = self.embed(reader_id)
        return report

    # -- reading and forgetting --------------------------------------------------------------
    def papers(self, reader: ReaderArg = None) -> list[OwnPaper]:
        """The reader's own papers, oldest import first."""
        r = self._readers.get(reader, create=False)
        return self._store.own_papers.papers(r.id)

    def remove(self, reader: ReaderArg, keys: list[str] | None = None) -> int:
        """Forget the reader's own papers (these keys, or all). Returns how many went."""
        r = self._readers.get(reader, create=False)
        return self._store.own_papers.remove(r.id, keys)

    def embed(self, reader: ReaderArg | int) -> int:
        """Embed the reader's own papers that have no vector from the library's model. Returns how many."""
        rid = reader if isinstance(reader, int) else self._readers.get(reader).id
        model = self._lib.embedder
        have = self._store.own_papers.vectors(rid, model.id)
        todo = [p for p in self._store.own_papers.papers(rid) if p.key not in have]
        if not todo:
            return 0
        mat = model.embed([p.text for p in todo])
        self._store.own_papers.save_vectors(rid, model.id, {p.key: mat[i] for i, p in enumerate(todo)})
        return len(todo)

    # -- what the recommenders read (a contribution: `lib.contributions("reader_papers")`) -----
    def reader_papers(self, reader_id: int) -> ReaderPapers | None:
        """The reader's own papers as the recommenders read them (None when they have none)."""
        papers = self._store.own_papers.papers(reader_id)
        if not papers:
            return None
        vecs = self._store.own_papers.vectors(reader_id, self._lib.embedder.id)
        return ReaderPapers(
            keys=[p.key for p in papers],
            titles=[p.title for p in papers],
            abstracts=[p.abstract for p in papers],
            authors=[p.authors for p in papers],
            keywords=[p.keywords for p in papers],
            venues=[p.venue for p in papers],
            years=[p.year for p in papers],
            vectors=[vecs.get(p.key) for p in papers],
        )

    def version(self, reader_id: int) -> tuple[int, str]:
        """What a cache of the reader's own papers is keyed by (changes with every import or embed)."""
        return self._store.own_papers.version(reader_id)
