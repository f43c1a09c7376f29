"""The MCP tools and resources over one Library.

Every tool answers with structured content (its output schema is the pydantic model it is
annotated with) plus a readable text rendering of the same result, for clients that show text.
A library error becomes an MCP tool error whose text ends with the fix; the server keeps running.
"""

from __future__ import annotations

import dataclasses
import html
import inspect
import types
import json
import re
import threading
import typing
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError, create_model

from .. import __version__
from ..contrib import Filter, FilterTable
from ..errors import NotFound, PaperatlasError
from ..library import Library
from ..models import EVENT_FIELDS, FIELD_DOCS, PRIVATE_FIELDS, Hit, Paper
from ..programme.models import event_text

MAX_LIMIT = 100
T = TypeVar("T")

INSTRUCTIONS = """paperatlas: a personal library of conference papers (titles, abstracts, venues, years).
Use `search` to find papers by words or meaning, `get_paper` for one paper's whole record (ids come
from search results), `similar` for papers near one paper, `topics` for the map of the field, and
`recommend` for a reader's personal suggestions; `tldr`, `translate` and `ask` (answers cited by paper
id, from the retrieved abstracts only) use the server's language model when one is configured.
`like` / `dislike` teach a reader's recommender
(refused when the server runs read-only). Papers are also resources: paper://{id}."""


# -- result shapes (their JSON schemas are the tools' output schemas) ---------------------------
EVENTS_DESCRIPTION = (
    "when and where the paper is presented at its conference, in time order; each event has "
    + "; ".join(f"{k}: {v}" for k, v in EVENT_FIELDS.items())
)


# the keys of Hit.to_dict() an assistant's list needs, and what they mean to an assistant
HIT_KEYS = {
    "id": "paper id: pass it to get_paper, similar, like, dislike",
    "title": "",
    "title_derived": "true when the list gave no title and it was made from the abstract",
    "authors": "",
    "venue": "",
    "year": "",
    "status": "Oral, Spotlight, Poster... when the list says",
    "score": "higher is better; comparable only within one answer",
    "snippet": "the part of the abstract where the query's words are",
    "reason": "why this paper is here (similar, recommend)",
    "url": "",
    "events": EVENTS_DESCRIPTION,
}
_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}
_EMPTY: dict[Any, Any] = {str: "", bool: False}


def _field_of(schema: dict[str, Any], description: str) -> tuple[Any, Any]:
    """A pydantic field (type, Field) for one property of a JSON schema (the few kinds Hit's uses)."""
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    nullable = "null" in kinds
    kind = next(k for k in kinds if k != "null")
    doc: dict[str, Any] = {"description": description} if description else {}
    tp: Any
    if kind == "array":
        item = schema.get("items", {}).get("type")
        tp = types.GenericAlias(list, (_JSON_TYPES.get(item, dict[str, Any]),))
        return tp, Field(default_factory=list, **doc)
    tp = dict[str, Any] if kind == "object" else _JSON_TYPES[kind]
    if nullable:
        return tp | None, Field(None, **doc)
    if tp in _EMPTY:
        return tp, Field(_EMPTY[tp], **doc)
    return tp, Field(**doc)  # required (the score)


if TYPE_CHECKING:  # a model built at run time: the checker knows it as a pydantic model
    PaperHit = BaseModel
else:
    PaperHit = create_model(
        "PaperHit",
        __doc__="One paper in a ranked list.",
        **{k: _field_of(Hit.json_schema()["properties"][k], d) for k, d in HIT_KEYS.items()},
    )


class SearchResult(BaseModel):
    query: str
    mode: str
    hits: list[PaperHit]
    note: str = Field("", description="something the caller should know, e.g. papers not yet searchable by meaning")
    read_as: str = Field(
        "",
        description="a query in Chinese (CJK): the English the configured language model rendered it as, searched too",
    )


def _paper_fields() -> dict[str, Any]:
    """Paper's own fields (all that `Paper.public()` gives), as pydantic fields: the record is not
    declared twice, so a field added to Paper shows here too."""
    hints = typing.get_type_hints(Paper)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Paper):
        if f.name in PRIVATE_FIELDS:
            continue
        kw: dict[str, Any] = {"description": FIELD_DOCS[f.name]} if f.name in FIELD_DOCS else {}
        if f.default is not dataclasses.MISSING:
            kw["default"] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            kw["default_factory"] = f.default_factory
        out[f.name] = (hints[f.name], Field(**kw))
    return out


PaperRecord = create_model(
    "PaperRecord",
    __doc__="A paper's whole record.",
    **_paper_fields(),
    uri=(str, Field(description="this paper as an MCP resource")),
    events=(
        list[dict[str, Any]],
        Field(
            default_factory=list,
            description=EVENTS_DESCRIPTION,
        ),
    ),
    openalex_id=(
        str,
        Field("", description="the paper's OpenAlex work id ('' before `paperatlas enrich` or when not found)"),
    ),
    cited_by_count=(int | None, Field(None, description="how many works cite it, by OpenAlex")),
    counts_by_year=(
        list[dict[str, int]],
        Field(default_factory=list, description="cited_by_count per year: [{year, cited_by_count}]"),
    ),
    references=(list[str], Field(default_factory=list, description="ids of the library's papers it cites")),
    cited_by=(list[str], Field(default_factory=list, description="ids of the library's papers that cite it")),
)


class ReportResult(BaseModel):
    """The conference report's figures (ConferenceReport.to_dict(ids=False))."""

    scope: dict[str, Any]
    papers: int
    placed: int = Field(description="papers placed in a theme (the denominator of theme shares)")
    types: dict[str, int]
    themes: list[dict[str, Any]]
    institutions: list[dict[str, Any]]
    countries: list[dict[str, Any]]
    collaboration: dict[str, Any]
    authors: list[dict[str, Any]]
    reviews: dict[str, Any]
    trends: dict[str, Any] | None = None
    notes: list[str] = Field(default_factory=list)
    cited: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the most cited papers (after `paperatlas enrich`): id, cited_by_count, recent (this year and last)",
    )


class HitsResult(BaseModel):
    """A ranked list for a paper (similar) or a reader (recommend)."""

    of: str = Field(description="the paper id (similar) or the reader (recommend)")
    hits: list[PaperHit]
    note: str = ""


class TopicItem(BaseModel):
    topic: int
    label: str
    size: int = Field(description="papers in this topic")
    phrases: list[str]
    central: list[str] = Field(description="ids of the most central papers, most central first")
    parent: int | None = Field(None, description="the coarse topic of a fine one")


class TopicsResult(BaseModel):
    level: str
    topics: list[TopicItem]


class FeedbackResult(BaseModel):
    reader: str
    kind: Literal["like", "dislike"]
    ids: list[str] = Field(description="the papers now judged (ids resolved to the library's own)")
    undone: bool = Field(False, description="true when the judgement was removed instead")


# argument types shared by like / dislike (module level: the SDK evaluates the annotations here)
Ids = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=500)]],
    Field(min_length=1, max_length=500, description="paper ids from search results"),
]
ReaderName = Annotated[str, Field(min_length=1, max_length=64, description="the reader's name (created on first like)")]
Undo = Annotated[bool, Field(description="true removes the judgement instead")]


def filter_argument(f: Filter) -> Any:
    """A filter as a tool argument's annotation: its type, checks and description (contrib.Filter)."""
    kind: Any = Literal[f.choices] if f.choices else f.type
    checks: dict[str, Any] = {"description": f.help}
    if f.type is str and not f.choices:
        checks["max_length"] = f.max_length
        if f.pattern:
            checks["pattern"] = f.pattern
    if f.minimum is not None:
        checks["ge"] = f.minimum
    if f.maximum is not None:
        checks["le"] = f.maximum
    return Annotated[kind | None, Field(**checks)]


def search_signature(table: FilterTable) -> inspect.Signature:
    """The `search` tool's arguments: the query, mode and limit, then every filter of the library, so a
    filter declared once is an argument here too."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    own = [
        inspect.Parameter(
            "query",
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=Annotated[
                str,
                Field(
                    min_length=1,
                    max_length=2000,
                    description='words or a question; "double quotes" for an exact phrase',
                ),
            ],
        ),
        inspect.Parameter(
            "mode",
            keyword,
            default="hybrid",
            annotation=Annotated[
                Literal["hybrid", "keyword", "semantic"],
                Field(description="hybrid fuses keyword (BM25) and meaning (embeddings)"),
            ],
        ),
        inspect.Parameter("limit", keyword, default=10, annotation=Annotated[int, Field(ge=1, le=MAX_LIMIT)]),
    ]
    if table.sorts:  # the orders the capabilities contribute (citations, rising), relevance without one
        names = tuple(table.sorts)
        own.append(
            inspect.Parameter(
                "sort",
                keyword,
                default=None,
                annotation=Annotated[
                    Literal[names] | None,  # type: ignore[valid-type]
                    Field(description="; ".join(f"{s.name}: {s.help}" for s in table.sorts.values())),
                ],
            )
        )
    filters = [inspect.Parameter(f.name, keyword, default=None, annotation=filter_argument(f)) for f in table]
    return inspect.Signature([*own, *filters], return_annotation=Annotated[CallToolResult, SearchResult])


# -- rendering ------------------------------------------------------------------------------------
_TAG = re.compile(r"<[^>]+>")


def plain_snippet(snippet: str) -> str:
    """The engine's snippet is escaped HTML with <mark>; an assistant wants plain text."""
    return html.unescape(_TAG.sub("", snippet))


def hit_model(h: Hit) -> PaperHit:
    """The hit's one serialisation (Hit.to_dict), cut to the keys an assistant's list needs."""
    d = h.to_dict()
    d["snippet"] = plain_snippet(h.snippet)
    return PaperHit(**{k: d[k] for k in HIT_KEYS if k in d})


def paper_model(p: Paper, events: Sequence[dict[str, Any]] = (), contributed: dict[str, Any] | None = None) -> Any:
    known = PaperRecord.model_fields
    extra = {k: v for k, v in (contributed or {}).items() if k in known and v is not None}
    return PaperRecord(**p.public(), uri=f"paper://{p.id}", events=list(events), **extra)


def _hits_text(hits: Sequence[Any]) -> str:  # PaperHit models
    lines = []
    for i, h in enumerate(hits, start=1):
        meta = " · ".join(x for x in (f"{h.venue} {h.year or ''}".strip(), f"id {h.id}", f"score {h.score:.3f}") if x)
        lines.append(f"{i}. {h.title}{' (title derived from the abstract)' if h.title_derived else ''} [{meta}]")
        if h.authors:
            lines.append(f"   {', '.join(h.authors[:8])}{' et al.' if len(h.authors) > 8 else ''}")
        if h.reason:
            lines.append(f"   why: {h.reason}")
        for e in h.events:
            lines.append(f"   at the conference: {event_text(e)}")
        if h.snippet:
            lines.append(f"   {h.snippet}")
    return "\n".join(lines)


def paper_text(r: Any) -> str:
    head = [r.title + (" (title derived from the abstract)" if r.title_derived else "")]
    meta = " · ".join(x for x in (", ".join(r.authors), f"{r.venue} {r.year or ''}".strip(), r.status) if x)
    if meta:
        head.append(meta)
    head.append(f"id {r.id}" + (f" · {r.url}" if r.url else ""))
    for e in r.events:
        head.append(event_text(e))
    if r.openalex_id:
        head.append(
            (f"cited by {r.cited_by_count:,} · " if r.cited_by_count is not None else "")
            + f"cites {len(r.references)} in this library · cited by {len(r.cited_by)} in this library"
        )
    return "\n".join(head) + "\n\n" + r.abstract


def answer(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=model.model_dump(mode="json")
    )


# -- the server -----------------------------------------------------------------------------------
def bad_arguments(tool: str, err: ValidationError) -> str:
    """A tool error for arguments that do not fit the schema: each field, what is wrong, and the fix
    (pydantic's own text carries type codes and links an assistant does not need)."""
    lines = []
    for e in err.errors():
        where = ".".join(str(x) for x in e["loc"]) or "arguments"
        got = "" if e["type"] == "missing" else f" (got {e['input']!r})"
        lines.append(f"{where}: {e['msg']}{got}")
    return (
        f"bad arguments for {tool}: "
        + "; ".join(lines)
        + f"\nFix: call {tool} with arguments that fit its input schema (tools/list shows it)"
    )


class _Server(MCPServer):
    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(bad_arguments(name, e.__cause__)) from e.__cause__
            raise


def create_server(library: Library, read_only: bool = False, name: str = "paperatlas") -> MCPServer:
    """An MCP server whose tools and resources all go through `library`.

    Args:
        library: the open Library (the server does not close it).
        read_only: refuse `like` / `dislike` (tool errors that say how to allow them) and write nothing
            at all to the library (it is switched to read-only).
    """
    if read_only:  # as `serve --read-only`: the store refuses writes, profiles are not saved
        library.set_read_only()
    server: MCPServer = _Server(name, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    lock = threading.Lock()  # tools run in worker threads; the Library serves one call at a time

    def call(fn: Callable[[], T]) -> T:
        try:
            with lock:
                return fn()
        except NotFound as e:  # an assistant finds ids with the tools, not with the CLI
            fix = e.fix.replace(
                "`paperatlas list` shows the ids in this library", "use an id from the hits of the `search` tool"
            )
            fix = fix.replace(
                "`paperatlas readers` lists them",
                "a reader is made by their first like: call the `like` tool with papers they like",
            )
            raise ToolError(str(NotFound(e.message, fix))) from None
        except PaperatlasError as e:  # the message already ends with "Fix: ..."
            raise ToolError(str(e)) from None

    ro = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def search(
        query: str, mode: str = "hybrid", limit: int = 10, sort: str | None = None, **filters: Any
    ) -> CallToolResult:
        """Search the library's papers by keyword, by meaning, or both (default). Returns ranked hits with ids."""
        # every filter of the library (its own and what its capabilities contribute), as the CLI and the web
        found = call(lambda: library.search(query, mode, limit, sort=sort, **filters))
        hits = [hit_model(h) for h in found]
        note = call(lambda: library.waiting_note(mode))
        if not hits:
            said = ", ".join(f"{k}={v}" for k, v in filters.items() if v is not None and v != "")
            note = (note + "; " if note else "") + (
                f"nothing matched with {said}: try without them"
                if said
                else "nothing matched: try other or fewer words, or mode=hybrid"
            )
        result = SearchResult(query=query, mode=mode, hits=hits, note=note, read_as=found.read_as)
        text = _hits_text(hits) or "No papers matched."
        return answer(result, text + (f"\nNote: {note}" if note else ""))

    search.__signature__ = search_signature(library.filters)  # type: ignore[attr-defined]
    server.tool(annotations=ro)(search)

    @server.tool(annotations=ro)
    def get_paper(
        id: Annotated[str, Field(min_length=1, max_length=500, description="a paper id, as search returns it")],
    ) -> Annotated[CallToolResult, PaperRecord]:
        """One paper's whole record: title, abstract, authors, venue, year, status, url."""
        p = call(lambda: library.get(id))
        rec = paper_model(p, [e.to_dict() for e in library.programme.events_for(p.id)], library.paper_fields(p.id))
        return answer(rec, paper_text(rec))

    @server.tool(annotations=ro)
    def report(
        venue: Annotated[
            str | None,
            Field(max_length=200, description="the venue, e.g. NeurIPS (default: every venue of the library)"),
        ] = None,
        years: Annotated[
            str | None,
            Field(
                max_length=100,
                description="a year, a range or a list: 2023, 2019-2025, 2021,2023; several years add trends",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, ReportResult]:
        """A conference at a glance: its themes (size, share, orals), trends over years with a test of each
        change, institutions, countries, reviews, prolific authors. The same figures as `paperatlas report
        --json`, with counts instead of the id lists (search with the filters to list papers)."""
        from ..report import parse_years
        from ..report.render import render_markdown

        rep = call(lambda: library.report.build(venue, parse_years(years)))
        return answer(ReportResult(**rep.to_dict(ids=False)), render_markdown(rep))

    @server.tool(annotations=ro)
    def similar(
        id: Annotated[str, Field(min_length=1, max_length=500, description="the paper id to start from")],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 10,
    ) -> Annotated[CallToolResult, HitsResult]:
        """Papers nearest to one paper by meaning, each with a reason (shared key phrases)."""
        hits = [hit_model(h) for h in call(lambda: library.similar(id, limit))]
        note = "" if hits else "no neighbours: related papers need embeddings (`paperatlas embed`)"
        return answer(HitsResult(of=id, hits=hits, note=note), _hits_text(hits) or f"No papers near {id}. {note}")

    @server.tool(annotations=ro)
    def recommend(
        reader: Annotated[str, Field(min_length=1, max_length=64, description="the reader's name, e.g. me")] = "me",
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 10,
        venue: Annotated[str | None, Field(description="only this venue")] = None,
        year: Annotated[int | None, Field(ge=1900, le=2100, description="only this year")] = None,
    ) -> Annotated[CallToolResult, HitsResult]:
        """Personal recommendations for a reader, from the papers they liked and disliked; each says why."""

        def run() -> list[Hit]:
            r = library.readers.get(reader, create=False)
            return library.recommend.for_reader(r, limit, venue=venue, year=year)

        hits = [hit_model(h) for h in call(run)]
        note = "" if hits else f"nothing to recommend: like a few papers first (tool `like`, reader {reader!r})"
        return answer(HitsResult(of=reader, hits=hits, note=note), _hits_text(hits) or note)

    @server.tool(annotations=ro)
    def topics(
        level: Annotated[
            Literal["coarse", "fine"], Field(description="coarse: a few broad topics; fine: many")
        ] = "coarse",
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> Annotated[CallToolResult, TopicsResult]:
        """The library's topics (built by `paperatlas topics build`), largest first, with key phrases."""

        ts = call(lambda: library.topics.at_level(level))[:limit]
        items = [
            TopicItem(
                topic=t.topic, label=t.label, size=t.size, phrases=t.phrases, central=t.central[:5], parent=t.parent
            )
            for t in ts
        ]
        text = "\n".join(f"{t.topic}. {t.label} ({t.size} papers): {', '.join(t.phrases[:6])}" for t in items)
        return answer(TopicsResult(level=level, topics=items), text or "No topics.")

    rw = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

    def feedback(reader: str, ids: list[str], kind: Literal["like", "dislike"], undo: bool) -> CallToolResult:
        if read_only:
            raise ToolError(
                f"this paperatlas server is read-only: it cannot {kind} papers\n"
                "Fix: restart it without --read-only (`paperatlas mcp`) to let assistants record "
                "likes and dislikes"
            )

        def run() -> list[str]:
            real = [library.get(i).id for i in ids]  # every id checked before anything is written
            library.readers.set_feedback(reader, real, kind, on=not undo)
            return real

        done = call(run)
        res = FeedbackResult(reader=reader, kind=kind, ids=done, undone=undo)
        verb = {
            ("like", False): "liked",
            ("dislike", False): "disliked",
            ("like", True): "no longer liked",
            ("dislike", True): "no longer disliked",
        }[(kind, undo)]
        return answer(res, f"{reader} {verb}: {', '.join(done)}")

    @server.tool(annotations=rw)
    def like(ids: Ids, reader: ReaderName = "me", undo: Undo = False) -> Annotated[CallToolResult, FeedbackResult]:
        """Record that a reader likes (stars, saves) these papers; recommendations learn from it."""
        return feedback(reader, ids, "like", undo)

    @server.tool(annotations=rw)
    def dislike(ids: Ids, reader: ReaderName = "me", undo: Undo = False) -> Annotated[CallToolResult, FeedbackResult]:
        """Record that a reader is not interested in these papers; recommendations rank such papers lower."""
        return feedback(reader, ids, "dislike", undo)

    @server.resource(
        "paper://{+id}",
        name="paper",
        mime_type="application/json",
        description="A paper's whole record as JSON (the id as search returns it)",
        security=ResourceSecurity(exempt_params={"id"}),
    )  # ids are looked up, never used as paths
    def paper_resource(id: str) -> str:
        try:
            with lock:
                p = library.get(id)
        except PaperatlasError as e:
            raise ResourceError(str(e)) from None
        rec = paper_model(p, [e.to_dict() for e in library.programme.events_for(p.id)])
        return json.dumps(rec.model_dump(mode="json"), ensure_ascii=False)

    from .llm_tools import register as register_llm_tools

    register_llm_tools(server, library, call)
    from .fulltext_tools import register as register_fulltext_tools

    register_fulltext_tools(server, library, call)
    return server
