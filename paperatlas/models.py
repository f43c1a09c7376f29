"""The data shapes passed between layers: Paper, Hit, IngestReport."""

from __future__ import annotations

import hashlib
import json
import typing
from dataclasses import asdict, dataclass, field, fields
from collections.abc import Callable
from typing import Any


# one encoder, not json.dumps(..., sort_keys=True, ...) which builds a new one per call
_canonical_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str).encode


PRIVATE_FIELDS = ("raw",)  # kept in the library, never shown: the record exactly as it came in
FIELD_DOCS = {  # what a field means, for the API schemas (OpenAPI, MCP) that are read from the shapes
    "title_derived": "the title was made from the abstract",
    "source": "the file the paper was ingested from",
    "extra": "other fields the list carried (doi, arxiv, presentation, affiliations...; docs/fields.md)",
}
# One presentation of a paper at its conference, as every surface shows it (programme.Event.to_dict();
# docs/fields.md): the keys and what they mean, for the API schemas.
EVENT_FIELDS = {
    "session": "the session's name as the feed writes it",
    "start": "ISO 8601 with the conference's offset (2025-12-05T16:30:00-08:00); '' when the feed gives no time",
    "end": "ISO 8601 with the conference's offset; '' when the feed gives no time",
    "timezone": "that offset (-08:00)",
    "day": "the local date it starts on (YYYY-MM-DD); '' without a time",
    "room": "as written (Exhibit Hall C,D,E)",
    "poster_position": "as written (#2504)",
    "type": "oral, spotlight, poster ...",
    "event_id": "the feed's event id",
    "session_id": "the session's id in paperatlas (/session/{id})",
    "feed": "the programme it comes from (neurips 2025)",
    "url": "the event's page on the virtual site",
}
EVENTS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "description": "when and where the paper is presented at its conference, in time order (docs/fields.md)",
    "items": {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in EVENT_FIELDS.items()},
    },
}


def _schema_of(tp: Any) -> dict[str, Any]:
    """JSON schema of a field type (the few kinds the shapes use)."""
    args = typing.get_args(tp)
    origin = typing.get_origin(tp)
    if type(None) in args:  # X | None
        inner = _schema_of(next(a for a in args if a is not type(None)))
        return {**inner, "type": [inner["type"], "null"]}
    if origin is list:
        return {"type": "array", "items": _schema_of(args[0]) if args else {}}
    if origin is dict or tp is dict:
        return {"type": "object"}
    return {"type": {str: "string", bool: "boolean", int: "integer", float: "number"}.get(tp, "object")}


@dataclass
class Paper:
    """One paper in a library.

    `title_derived` is True when the source had no title and paperatlas made one
    from the abstract; the UI shows such titles as derived. `abstract` is the
    cleaned display/index text, `raw` the text exactly as it came in.
    """

    id: str
    title: str
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    venue: str = ""
    year: int | None = None
    status: str = ""
    track: str = ""
    keywords: list[str] = field(default_factory=list)
    url: str = ""
    source: str = ""
    raw: str = ""
    title_derived: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def public(self) -> dict[str, Any]:
        """The paper as every surface shows it (CLI --json, the web's .json, MCP): all but `raw`."""
        d = asdict(self)
        d.pop("raw", None)
        return d

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON schema of `public()`, read from the fields themselves (so a new field shows everywhere)."""
        hints = typing.get_type_hints(cls)
        props = {}
        for f in fields(cls):
            if f.name in PRIVATE_FIELDS:
                continue
            props[f.name] = {
                **_schema_of(hints[f.name]),
                **({"description": FIELD_DOCS[f.name]} if f.name in FIELD_DOCS else {}),
            }
        return {"type": "object", "properties": props}

    def content_hash(self) -> str:
        """Hash of everything a re-ingest could change (not the source file name)."""
        # a tuple of the fields, not asdict(): this runs for every record of every ingest
        fields = (
            self.id,
            self.title,
            self.abstract,
            self.authors,
            self.venue,
            self.year,
            self.status,
            self.track,
            self.keywords,
            self.url,
            self.raw,
            self.title_derived,
            self.extra,
        )
        blob = _canonical_json(fields)
        return hashlib.sha1(blob.encode("utf-8")).hexdigest()

    @property
    def text(self) -> str:
        """The text that search and embeddings see: title then abstract."""
        if self.title and not self.title_derived:
            return f"{self.title}. {self.abstract}".strip()
        return self.abstract or self.title


@dataclass
class Hit:
    """A search result: the paper, its fused score and its rank in each source list."""

    paper: Paper
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    snippet: str = ""
    reason: str = ""
    # the paper's events at its conference (EVENT_FIELDS dicts), filled where the library has a programme
    events: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = self.paper.public()
        d.update(score=round(float(self.score), 6), ranks=self.ranks)
        if self.snippet:
            d["snippet"] = self.snippet
        if self.reason:
            d["reason"] = self.reason
        if self.events:
            d["events"] = self.events
        return d

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON schema of `to_dict()`: the paper's fields and the hit's own."""
        return {
            "type": "object",
            "properties": {
                **Paper.json_schema()["properties"],
                "score": {"type": "number"},
                "ranks": {"type": "object", "description": "rank in the keyword / semantic lists"},
                "snippet": {"type": "string", "description": "escaped HTML with <mark> around matched words"},
                "reason": {"type": "string", "description": "why it is listed (recommendations, related papers)"},
                "events": EVENTS_SCHEMA,
            },
        }


class Hits(list):  # type: ignore[type-arg]
    """A page of search hits (a plain list of Hit) that also knows the whole answer's size.

    `total`: hits that passed the relevance floor and filters in all pages; `more`: a candidate
    list was cut at the search depth, so there may be more than `total`; `no_good_match`: the query
    had candidates but none was a real match (the floor emptied the answer); `read_as`: the English a
    language model rendered a query in CJK script as, which was searched too ("" when none was).

    `to_dict()` is the answer every surface gives (the web's `.json`, the MCP tool); the page, the
    filters and the notes a surface adds (`not_embedded`, `crosslingual`) are set with `page()` /
    `notes`."""

    def __init__(
        self,
        hits: Any = (),
        total: int | None = None,
        more: bool = False,
        no_good_match: bool = False,
        read_as: str = "",
    ) -> None:
        super().__init__(hits)
        self.total = len(self) if total is None else total
        self.more = more
        self.no_good_match = no_good_match
        self.read_as = read_as
        self.query = ""
        self.mode = ""
        self.sort = ""  # a contributed order (citations, rising) instead of relevance
        self.filters: dict[str, Any] = {}
        self.page_number = 1
        self.per_page = len(self)
        self.has_more = False
        # what the reader should know besides the hits, e.g. {"not_embedded": 12, "crosslingual": {...}}
        self.notes: dict[str, Any] = {}

    def page(self, number: int, per_page: int) -> Hits:
        """This answer cut to one page of `per_page`, from a list holding one hit more than that when
        there is a next page (how a surface learns `has_more` without counting)."""
        out = Hits(self[:per_page], self.total, self.more, self.no_good_match, self.read_as)
        out.query, out.mode, out.filters, out.notes = self.query, self.mode, dict(self.filters), dict(self.notes)
        out.sort = self.sort
        out.page_number, out.per_page, out.has_more = number, per_page, len(self) > per_page
        return out

    def to_dict(self, hit: Callable[[Hit], dict[str, Any]] | None = None) -> dict[str, Any]:
        """The answer's one serialisation: the query, its totals, the page and the hits (`hit`: how
        each is written, default `Hit.to_dict`); a note is there only when it has something to say."""
        write = hit or Hit.to_dict
        notes = {k: v for k, v in self.notes.items() if k != "not_embedded" and v}
        return {
            "query": self.query,
            "mode": self.mode,
            "total": self.total,
            "total_is_lower_bound": self.more,
            "no_good_match": self.no_good_match,
            # a query in Chinese searched in English too: the English the language model wrote
            **({"read_as": self.read_as} if self.read_as else {}),
            **notes,
            "filters": self.filters,
            **({"sort": self.sort} if self.sort else {}),
            "page": self.page_number,
            "per_page": self.per_page,
            "has_more": self.has_more,
            # papers stored but not embedded yet: matched by keyword only until they are
            "not_embedded": int(self.notes.get("not_embedded") or 0),
            "hits": [write(h) for h in self],
        }


@dataclass
class BadRecord:
    """A record that could not be read, with where it is and how to fix it."""

    file: str
    location: str  # "line 17", "record 3", "entry @article{foo"
    message: str
    fix: str = ""

    def __str__(self) -> str:
        s = f"{self.file}, {self.location}: {self.message}"
        return f"{s}. Fix: {self.fix}" if self.fix else s


@dataclass
class IngestReport:
    """What one ingest did, per file and in total."""

    new: int = 0
    updated: int = 0
    unchanged: int = 0
    merged: int = 0  # duplicates of a paper from another source, folded into it
    bad: list[BadRecord] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # how a file was read, when that was a judgement call
    # what may have been read wrong (a guessed block, a title-like line inside an abstract, a paper
    # without an abstract, numbering that disagrees): each names the paper, its line and the fix
    warnings: list[str] = field(default_factory=list)
    shapes: dict[str, str] = field(default_factory=dict)  # file -> how a text list was laid out, in words
    embedded: int = 0  # papers embedded after the write (Library.add_papers(embed="after"))
    # what a file reader did with each of its files, under its own key ("pdfs": [{file, id, state}])
    outcomes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, other: IngestReport) -> None:
        self.new += other.new
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.merged += other.merged
        self.bad.extend(other.bad)
        self.files.extend(other.files)
        self.formats.update(other.formats)
        self.notes.extend(other.notes)
        self.warnings.extend(other.warnings)
        self.shapes.update(other.shapes)
        for kind, done in other.outcomes.items():
            self.outcomes.setdefault(kind, []).extend(done)

    @property
    def total(self) -> int:
        return self.new + self.updated + self.unchanged + self.merged

    def summary(self) -> str:
        s = f"{self.new} new, {self.updated} updated, {self.unchanged} unchanged"
        if self.merged:
            s += f", {self.merged} merged duplicates"
        if self.bad:
            s += f", {len(self.bad)} bad records skipped"
        return s

    def to_dict(self) -> dict[str, Any]:
        return {
            "new": self.new,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "merged": self.merged,
            "bad": [str(b) for b in self.bad],
            "files": self.files,
            "formats": self.formats,
            "notes": self.notes,
            "warnings": self.warnings,
            "shapes": self.shapes,
            **self.outcomes,
        }
