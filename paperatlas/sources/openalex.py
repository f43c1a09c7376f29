"""OpenAlex: the works of any venue, author, institution or search, with their citation links.

`GET {base}/works?filter=primary_location.source.id:S…,publication_year:2025&per-page=200&cursor=*`
and then each answer's `meta.next_cursor` until it is null. A venue name is resolved first through
`GET {base}/sources?search=CVPR` (the resolution is shown); an author by OpenAlex id or ORCID, an
institution by ROR. The polite pool: `mailto=` from --mailto or $PAPERATLAS_OPENALEX_MAILTO.

Works become rows of the generic shape: the abstract rebuilt from `abstract_inverted_index`, the
authors with their institutions (`affiliations`), and the DOI, arXiv id and OpenAlex id in `extra`.
"""

from __future__ import annotations


import re
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from .. import settings
from ..ingest.formats import Format
from ..store.citations import CitationRecord
from .base import SOURCES, Page, SourceArgsError, get_parsed, parse_json, reject_options
from ..http_client import HttpClient, Response

DEFAULT_BASE = "https://api.openalex.org"
MAILTO_ENV = "PAPERATLAS_OPENALEX_MAILTO"
PAGE_SIZE = 200  # the API's largest page
# An abstract past these is not an abstract (or not a sane index): it is left out, not rebuilt into
# a megabyte of text or a list with a billion empty slots.
MAX_ABSTRACT_WORDS = 5000
MAX_WORK_IDS = 2000  # references / related works kept per work (the longest reference lists hold ~1,000)
SELECT = ",".join(
    [
        "id",
        "doi",
        "title",
        "display_name",
        "publication_year",
        "ids",
        "primary_location",
        "authorships",
        "abstract_inverted_index",
        "cited_by_count",
        "counts_by_year",
        "referenced_works",
        "related_works",
        "type",
        "keywords",
    ]
)
_WORK_ID = re.compile(r"^(?:https?://openalex\.org/)?(W\d{1,12})$", re.I)
_AUTHOR_ID = re.compile(r"^(?:https?://openalex\.org/)?(A\d{1,12})$", re.I)
_SOURCE_ID = re.compile(r"^(?:https?://openalex\.org/)?(S\d{1,12})$", re.I)
_ORCID = re.compile(r"^(?:https?://orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$", re.I)
_ROR = re.compile(r"^(?:https?://ror\.org/)?(0[a-z0-9]{6}\d{2})$", re.I)
_DOI = re.compile(r"(10\.\d{4,9}/\S+)", re.I)
_DATE = re.compile(r"^(19|20|21)\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})", re.I)


def mailto_default() -> str:
    return str(settings.get("openalex_mailto")).strip()


def work_id(value: Any) -> str:
    """`W2741809807` from an OpenAlex work id or URL ("" if it is not one)."""
    m = _WORK_ID.match(str(value or "").strip())
    return m.group(1).upper() if m else ""


def bare_doi(value: Any) -> str:
    """A DOI without its resolver, lower-cased ("" if none)."""
    m = _DOI.search(str(value or ""))
    return m.group(1).rstrip(".,;").lower() if m else ""


def rebuild_abstract(index: Any) -> str:
    """The abstract from OpenAlex's inverted index {word: [positions]}; "" when the index is not
    a sane one (not a dict of int lists, positions past MAX_ABSTRACT_WORDS, most slots empty)."""
    if not isinstance(index, dict) or not index:
        return ""
    slots: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(word, str) or not isinstance(positions, list):
            return ""
        for p in positions:
            if not isinstance(p, int) or isinstance(p, bool) or p < 0 or p >= MAX_ABSTRACT_WORDS:
                return ""
            slots.setdefault(p, word)
        if len(slots) > MAX_ABSTRACT_WORDS:
            return ""
    # a few missing positions happen (OpenAlex drops some tokens); a mostly empty range is not an abstract
    if len(slots) < (max(slots) + 1) * 0.8:
        return ""
    return " ".join(slots[i] for i in sorted(slots))


def _ids(values: Any) -> list[str]:
    out = []
    for v in values if isinstance(values, list) else []:
        w = work_id(v)
        if w:
            out.append(w)
        if len(out) >= MAX_WORK_IDS:
            break
    return out


def work_links(work: dict[str, Any]) -> dict[str, Any]:
    """What the citation graph keeps of a work: its id, counts and the works it names."""
    years = []
    counts = work.get("counts_by_year")
    for c in counts if isinstance(counts, list) else []:
        if isinstance(c, dict) and isinstance(c.get("year"), int) and isinstance(c.get("cited_by_count"), int):
            years.append({"year": c["year"], "cited_by_count": max(0, c["cited_by_count"])})
    cited = work.get("cited_by_count")
    return {
        "openalex_id": work_id(work.get("id")),
        "cited_by_count": cited if isinstance(cited, int) and cited >= 0 else None,
        "counts_by_year": sorted(years, key=lambda c: c["year"]),
        "referenced_works": _ids(work.get("referenced_works")),
        "related_works": _ids(work.get("related_works")),
    }


def _arxiv_of(work: dict[str, Any]) -> str:
    d = _ARXIV_DOI.match(bare_doi(work.get("doi")))
    if d:
        return d.group(1)
    for loc in work.get("locations") or [work.get("primary_location")]:
        if isinstance(loc, dict):
            m = _ARXIV_URL.search(str(loc.get("landing_page_url") or ""))
            if m:
                return m.group(1)
    return ""


def _text(v: Any) -> str:
    return v.strip() if isinstance(v, str) else ""


def work_row(work: dict[str, Any], venue: str = "") -> dict[str, Any]:
    """One OpenAlex work as a generic row (the shape `ingest` reads from JSON lists)."""
    authors: list[str] = []
    affiliations: list[dict[str, Any]] = []
    authorships = work.get("authorships")
    for a in authorships if isinstance(authorships, list) else []:
        if not isinstance(a, dict):
            continue
        author = a.get("author")
        who: dict[str, Any] = author if isinstance(author, dict) else {}
        name = _text(who.get("display_name")) or _text(a.get("raw_author_name"))
        if not name:
            continue
        authors.append(name)
        insts = [i for i in a.get("institutions") or [] if isinstance(i, dict) and _text(i.get("display_name"))]
        aff: dict[str, Any] = {
            "author": name,
            "institution": _text(insts[0].get("display_name")) if insts else "",
            "country": _text(insts[0].get("country_code")) if insts else "",
        }
        if len(insts) > 1:
            aff["institutions"] = [_text(i.get("display_name")) for i in insts]
        rors = [_text(i.get("ror")) for i in insts if _text(i.get("ror"))]
        if rors:
            aff["ror"] = rors
        orcid = _ORCID.match(_text(who.get("orcid")))
        if orcid:
            aff["orcid"] = orcid.group(1)
        author_id = _AUTHOR_ID.match(_text(who.get("id")))
        if author_id:
            aff["openalex_author"] = author_id.group(1)
        affiliations.append(aff)
    primary = work.get("primary_location")
    loc: dict[str, Any] = primary if isinstance(primary, dict) else {}
    source = loc.get("source")
    src: dict[str, Any] = source if isinstance(source, dict) else {}
    doi = bare_doi(work.get("doi"))
    links = work_links(work)
    row: dict[str, Any] = {
        "id": links["openalex_id"],
        "title": _text(work.get("display_name")) or _text(work.get("title")),
        "abstract": rebuild_abstract(work.get("abstract_inverted_index")),
        "authors": authors,
        "venue": venue or _text(src.get("display_name")),
        "year": work.get("publication_year") if isinstance(work.get("publication_year"), int) else None,
        "url": _text(loc.get("landing_page_url")) or (f"https://doi.org/{doi}" if doi else ""),
        "doi": doi,
        "openalex_id": links["openalex_id"],
        "arxiv_id": _arxiv_of(work),
        "affiliations": affiliations if any(a["institution"] for a in affiliations) else [],
    }
    return {k: v for k, v in row.items() if v not in (None, "", [])}


def _links_saver(works: list[dict[str, Any]]) -> Any:
    """What runs once a page's papers are stored: their citation links go into the citation
    tables, as `enrich` would store them, so a fetched venue needs no look-up afterwards."""

    def save(store: Any) -> str:
        records = []
        for w in works:
            links = work_links(w)
            pid = store.resolve_id(links["openalex_id"])
            if pid:
                records.append(
                    CitationRecord(
                        pid,
                        links["openalex_id"],
                        True,
                        "fetched",
                        1.0,
                        links["cited_by_count"],
                        links["counts_by_year"],
                        links["referenced_works"],
                        links["related_works"],
                    )
                )
        store.citations.save(records)
        return ""

    return save


def _parse_list(resp: Response) -> dict[str, Any]:
    data = parse_json(resp)
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError("no `results` list in the answer")
    meta = data.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise ValueError("`meta` is not an object")
    return data


def author_filter(value: str) -> str:
    """The works filter for an OpenAlex author id or an ORCID (SourceArgsError for anything else)."""
    v = value.strip()
    if m := _AUTHOR_ID.match(v):
        return f"authorships.author.id:{m.group(1).upper()}"
    if m := _ORCID.match(v):
        return f"authorships.author.orcid:https://orcid.org/{m.group(1).upper()}"
    raise SourceArgsError(
        f"--author {value!r} is neither an OpenAlex author id nor an ORCID",
        "give A5023888391 (openalex.org/authors/...) or 0000-0001-6187-6610 (orcid.org/...)",
    )


@SOURCES.register("openalex")
class OpenAlexSource:
    name: ClassVar[str] = "openalex"
    default_base: ClassVar[str] = DEFAULT_BASE
    # the polite pool allows 10 requests a second; one every 0.2 s leaves room for a second process
    polite_delay: ClassVar[float] = 0.2

    def __init__(
        self,
        args: Sequence[str],
        base_url: str | None = None,
        venue: str | None = None,
        year: int | str | None = None,
        author: str | None = None,
        institution: str | None = None,
        search: str | None = None,
        mailto: str | None = None,
        page_size: int = PAGE_SIZE,
        since: str | None = None,
        label: str | None = None,
        **options: Any,
    ) -> None:
        reject_options(
            "openalex", options, "--venue, --year, --author, --institution, --search, --since, --mailto, --base-url"
        )
        if len(args) == 1 and args[0].strip().isdigit() and year in (None, ""):
            # `fetch openalex --venue CVPR --years 2023-2025` hands each year over as the argument
            year, args = args[0], []
        if args:
            raise SourceArgsError(
                f"openalex takes options, not arguments ({' '.join(args)})",
                'e.g. `paperatlas fetch openalex --venue "CVPR" --year 2025`, --author A5023888391 or an ORCID, '
                "--institution https://ror.org/00jmfr291, --search WORDS",
            )
        if not (venue or author or institution or search):
            raise SourceArgsError(
                "openalex needs --venue, --author, --institution or --search",
                'e.g. `paperatlas fetch openalex --venue "CVPR" --year 2025`',
            )
        self.venue = (venue or "").strip()
        self.year = self._year(year)
        self.author_filter = self._author(author) if author else ""
        self.institution_filter = self._institution(institution) if institution else ""
        self.search = (search or "").strip()[:300]
        self.since = self._since(since) if since else ""
        self.label = (label or "").strip()[:200]  # who or what a follow names, as a reader wrote it
        self.mailto = (mailto if mailto is not None else mailto_default()).strip()
        self.page_size = max(1, min(int(page_size), PAGE_SIZE))
        self.base_url = (base_url or DEFAULT_BASE).rstrip("/")
        parts = ["openalex"]
        for flag, v in (
            ("--venue", self.venue),
            ("--year", str(self.year or "")),
            ("--author", author or ""),
            ("--institution", institution or ""),
            ("--search", self.search),
        ):
            if v:
                parts.append(f"{flag} {v.strip()}")
        self.key = " ".join(parts)

    @staticmethod
    def _year(year: int | str | None) -> int | None:
        if year in (None, ""):
            return None
        s = str(year).strip()
        if not s.isdigit() or not 1900 <= int(s) <= 2100:
            raise SourceArgsError(f"--year {year!r} is not a year", "write it as four digits, e.g. --year 2025")
        return int(s)

    @staticmethod
    def _since(value: str) -> str:
        s = str(value).strip()
        if not _DATE.match(s):
            raise SourceArgsError(f"--since {value!r} is not a date", "write it as YYYY-MM-DD, e.g. --since 2025-01-01")
        return s

    @staticmethod
    def _author(value: str) -> str:
        return author_filter(value)

    @staticmethod
    def _institution(value: str) -> str:
        m = _ROR.match(value.strip())
        if not m:
            raise SourceArgsError(
                f"--institution {value!r} is not a ROR id",
                "give the institution's ROR, e.g. https://ror.org/00jmfr291 (look it up at ror.org)",
            )
        return f"authorships.institutions.ror:https://ror.org/{m.group(1).lower()}"

    def _params(self, extra: dict[str, Any]) -> dict[str, Any]:
        return {**extra, **({"mailto": self.mailto} if self.mailto else {})}

    def resolve_venue(self, client: HttpClient) -> tuple[str, str]:
        """(source id, how it was resolved) for --venue: an S-id as given, else the first answer
        of `/sources?search=` whose name or abbreviation holds the venue."""
        if m := _SOURCE_ID.match(self.venue):
            return m.group(1).upper(), f"openalex: --venue {self.venue} is the source {m.group(1).upper()}"
        url = f"{self.base_url}/sources"
        _, data = get_parsed(
            client, url, _parse_list, f"openalex sources {self.venue}", self._params({"search": self.venue})
        )
        wanted = self.venue.lower()
        candidates = [s for s in data["results"] if isinstance(s, dict) and _SOURCE_ID.match(str(s.get("id") or ""))]
        if not candidates:
            raise SourceArgsError(
                f"OpenAlex knows no venue called {self.venue!r}",
                "try the venue's full name, or give its OpenAlex source id (S…) from openalex.org/sources",
            )

        def named(s: dict[str, Any]) -> bool:
            names = [str(s.get("display_name") or ""), *[str(a) for a in s.get("alternate_titles") or []]]
            names.append(str(s.get("abbreviated_title") or ""))
            return any(wanted in n.lower() for n in names if n)

        best = next((s for s in candidates if named(s)), candidates[0])
        sid = _SOURCE_ID.match(str(best["id"])).group(1).upper()  # type: ignore[union-attr]
        others = [str(s.get("display_name") or "") for s in candidates if s is not best][:3]
        note = f"openalex: --venue {self.venue!r} resolved to {sid} ({best.get('display_name') or '?'})"
        if others:
            note += "; other matches: " + "; ".join(others) + " (give --venue S… to pick one)"
        return sid, note

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]:
        resolved_note = ""
        source_id = str(state.get("source_id") or "")
        if self.venue and not source_id:
            source_id, resolved_note = self.resolve_venue(client)
        filters = []
        if source_id:
            filters.append(f"primary_location.source.id:{source_id}")
        if self.year:
            filters.append(f"publication_year:{self.year}")
        if self.author_filter:
            filters.append(self.author_filter)
        if self.institution_filter:
            filters.append(self.institution_filter)
        if self.since:
            filters.append(f"from_publication_date:{self.since}")
        # a complete run starts over (counts and abstracts change); an interrupted one resumes
        cursor = "*" if state.get("complete", True) else str(state.get("cursor") or "*")
        used: set[str] = set()
        url = f"{self.base_url}/works"
        while True:
            used.add(cursor)
            params: dict[str, Any] = {"per-page": self.page_size, "cursor": cursor, "select": SELECT}
            if filters:
                params["filter"] = ",".join(filters)
            if self.search:
                params["search"] = self.search
            resp, data = get_parsed(client, url, _parse_list, self.key, self._params(params))
            meta = data.get("meta") or {}
            works = [w for w in data["results"] if isinstance(w, dict) and work_id(w.get("id"))]
            rows = [(f"work {work_id(w.get('id'))}", work_row(w, self.venue if source_id else "")) for w in works]
            nxt = meta.get("next_cursor")
            nxt = nxt if isinstance(nxt, str) and nxt and len(nxt) < 2000 else None
            note = resolved_note
            resolved_note = ""
            if nxt is not None and nxt in used:
                # a cursor already followed would page in a circle for ever
                note = (note + "\n" if note else "") + (
                    f"{self.key}: the service sent a cursor it had already sent ({nxt[:40]}…): stopped there; "
                    "the pages before it are stored"
                )
                nxt = None
            last = nxt is None or not works
            state_now: dict[str, Any] = {"source_id": source_id, "complete": last}
            if not last:
                state_now["cursor"] = nxt
            total = meta.get("count") if isinstance(meta.get("count"), int) else None
            yield Page(resp.url, rows, Format.JSON, state_now, total=total, note=note, on_stored=_links_saver(works))
            if last:
                return
            cursor = nxt  # type: ignore[assignment]


FOLLOW_KINDS = ("author", "institution")


def _matches_id(kind: str, value: str) -> str:
    """The id `value` is, in the form the works filter takes ("" when it is a name)."""
    v = value.strip()
    if kind == "author":
        if m := _AUTHOR_ID.match(v):
            return m.group(1).upper()
        if m := _ORCID.match(v):
            return m.group(1).upper()
        return ""
    m = _ROR.match(v)
    return f"https://ror.org/{m.group(1).lower()}" if m else ""


def resolve_follow(client: HttpClient, base_url: str, kind: str, query: str, mailto: str = "") -> tuple[str, str, str]:
    """(id, name, how it was resolved) of an author (OpenAlex id, ORCID or name) or an institution
    (ROR or name). A name is looked up with `/authors?search=` or `/institutions?search=`: the
    answer whose name is the one given, else the service's first (its most relevant); the note
    names the others, so a reader can follow the right one by id. SourceArgsError when none fits."""
    if kind not in FOLLOW_KINDS:
        raise SourceArgsError(f"cannot follow {kind!r}", "follow an author or an institution")
    q = " ".join(query.split())[:200]
    if not q:
        raise SourceArgsError(f"which {kind}?", f"give a name or an id, e.g. `paperatlas follow {kind} ...`")
    if found := _matches_id(kind, q):
        return found, q, ""
    path = "authors" if kind == "author" else "institutions"
    params: dict[str, Any] = {"search": q, "per-page": 10, **({"mailto": mailto} if mailto else {})}
    _, data = get_parsed(client, f"{base_url.rstrip('/')}/{path}", _parse_list, f"openalex {path} {q}", params)

    def usable(e: Any) -> bool:
        if not isinstance(e, dict) or not _text(e.get("display_name")):
            return False
        return bool(_AUTHOR_ID.match(_text(e.get("id")))) if kind == "author" else bool(_ROR.match(_text(e.get("ror"))))

    candidates = [e for e in data["results"] if usable(e)]
    if not candidates:
        raise SourceArgsError(
            f"OpenAlex knows no {kind} called {q!r}",
            "check the spelling, or give the id: an OpenAlex author id (A…) or ORCID"
            if kind == "author"
            else "check the spelling, or give the institution's ROR id (look it up at ror.org)",
        )
    wanted = q.lower()

    def named(e: dict[str, Any]) -> bool:
        names = [_text(e.get("display_name")), *[_text(n) for n in e.get("display_name_alternatives") or []]]
        names += [_text(n) for n in e.get("display_name_acronyms") or []]
        return any(n.lower() == wanted for n in names if n)

    best = next((e for e in candidates if named(e)), candidates[0])
    if kind == "author":
        ident = _AUTHOR_ID.match(_text(best["id"])).group(1).upper()  # type: ignore[union-attr]
    else:
        ident = f"https://ror.org/{_ROR.match(_text(best['ror'])).group(1).lower()}"  # type: ignore[union-attr]

    def described(e: dict[str, Any]) -> str:
        where = e.get("last_known_institutions") or []
        inst = _text(where[0].get("display_name")) if where and isinstance(where[0], dict) else ""
        inst = inst or _text(e.get("country_code"))
        works = e.get("works_count")
        bits = [b for b in (inst, f"{works} works" if isinstance(works, int) else "") if b]
        return _text(e.get("display_name")) + (f" ({', '.join(bits)})" if bits else "")

    note = f"openalex: {kind} {q!r} resolved to {ident}: {described(best)}"
    others = [described(e) for e in candidates if e is not best][:3]
    if others:
        note += f"; other matches: {'; '.join(others)} (follow one of them by its id)"
    return ident, _text(best.get("display_name")), note
