"""What a capability contributes to search: its filters, its sort orders and its hit decorations.

A filter is declared once, here or by the capability that owns it; the `Library` collects every
capability's contributions into one `FilterTable` and loops over it without naming any capability
(datasette's `filters_from_request` hook, whose built-ins go through the same hook). The CLI's options,
the web's query parameters and OpenAPI, the MCP tool's schema and saved searches are generated from
that table, so a filter added once appears everywhere and a saved search keeps every filter.

`SearchRequest` is one search as a value: the query, the mode, the filters, the page, the sort. Its
`to_params()` / `from_params()` are what saved searches store and their feeds replay.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .errors import PaperatlasError
from .i18n import gettext

if TYPE_CHECKING:
    from .models import Hit

MODES = ("hybrid", "keyword", "semantic")
INT_LIMIT = 2**31 - 1  # SQLite overflows at 2**63; no year, page or count comes near this
# The words a switch is spelled with in a query string, a form or a CLI value: one list, so the web's
# document and the filter table accept and refuse the same words ("True" is what a page writes of a set switch).
SWITCH_ON = ("1", "true", "True", "yes", "on")
SWITCH_OFF = ("0", "false", "False", "no", "off")


def switch(raw: str) -> bool | None:
    """True or False for a switch word, None for a word that is not one."""
    if raw in SWITCH_ON:
        return True
    if raw in SWITCH_OFF:
        return False
    return None


MAX_QUERY = 1000
MAX_PER_PAGE = 1000


@dataclass(frozen=True)
class Filter:
    """One search/list filter, declared once (CLI options, web parameters, OpenAPI, the MCP schema and
    saved searches are generated from it).

    `keep(library, value)` gives the ids of the papers the value keeps (None: no restriction).
    `keep_all(library, {name: value})`, where given, keeps by all of its owner's filters that share it
    at once: the programme's session, day and room must be met by one and the same event."""

    name: str
    type: type  # str | int | bool | float
    help: str
    owner: str  # the capability that owns it ("core", "programme", "report", "authors", ...)
    keep: Callable[[Any, Any], set[str] | None]
    choices: tuple[str, ...] = ()
    pattern: str = ""
    max_length: int = 200
    minimum: float | None = None
    maximum: float | None = None
    metavar: str = ""  # how the CLI shows the value (NAME, YYYY-MM-DD)
    format: str = ""  # an OpenAPI format the value has ("date")
    example: str = ""  # a value the fix of an error suggests
    # a column of the papers table: lists and counts filter it in SQL (venue, year, status)
    column: bool = False
    # an empty query with this filter set lists the papers it keeps (newest first); the library's own
    # columns do not: "every paper of NeurIPS" is a list, not a search
    alone: bool = True
    keep_all: Callable[[Any, dict[str, Any]], set[str] | None] | None = None
    # what the error says of a value that fails `pattern` ("{raw!r} is not a day"), and its fix;
    # both gettext message ids (mark them with N_)
    mismatch: str = ""
    fix: str = ""

    def check(self, value: Any) -> Any:
        """The value in its type, validated; None for an unset (None or blank) value.

        Raises PaperatlasError (message and fix) for a value the filter cannot take."""
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if self.type is int:
            try:
                v: Any = int(value)
            except (TypeError, ValueError):
                raise PaperatlasError(
                    gettext("{name} must be a whole number, not {raw!r}", name=self.name, raw=str(value)[:60]),
                    gettext("e.g. {example}", example=f"{self.name}={self.example or 1}"),
                ) from None
            low = self.minimum if self.minimum is not None else -INT_LIMIT
            high = self.maximum if self.maximum is not None else INT_LIMIT
            if not low <= v <= high:
                raise PaperatlasError(
                    gettext("{name} {value} is out of range", name=self.name, value=str(value)[:20]),
                    gettext("use a number between {low} and {high}", low=int(low), high=int(high)),
                )
            return v
        if self.type is bool:
            # a switch: on, or no filter at all (off keeps every paper, so it is not a filter that is set)
            if isinstance(value, bool):
                return value or None
            on = switch(str(value).strip())
            if on is not None:
                return on or None
            raise PaperatlasError(
                gettext("{name} must be true or false, not {raw!r}", name=self.name, raw=str(value)[:60]),
                gettext("use {name}=1 or {name}=0", name=self.name),
            )
        v = str(value).strip()
        if len(v) > self.max_length:
            raise PaperatlasError(
                gettext("{name} is longer than {n} characters", name=self.name, n=self.max_length),
                gettext("shorten it"),
            )
        if self.choices:
            match = next((c for c in self.choices if c.lower() == v.lower()), None)
            if match is None:
                raise PaperatlasError(
                    gettext(
                        "{name} {raw!r} is not one of {choices}",
                        name=self.name,
                        raw=v[:60],
                        choices=", ".join(self.choices),
                    ),
                    gettext("use one of {choices}", choices=", ".join(self.choices)),
                )
            return match
        if self.pattern and not re.search(self.pattern, v):
            raise PaperatlasError(
                gettext(self.mismatch, **{"raw": v[:60], self.name: v[:60]})
                if self.mismatch
                else gettext("{name} has a form it may not have: {raw!r}", name=self.name, raw=v[:60]),
                gettext(self.fix) if self.fix else gettext("e.g. {example}", example=f"{self.name}={self.example}"),
            )
        return v

    def json_schema(self) -> dict[str, Any]:
        """The value's JSON schema (OpenAPI parameters, the MCP tool's input schema)."""
        s: dict[str, Any] = {
            "type": {str: "string", int: "integer", bool: "boolean", float: "number"}[self.type],
            "description": self.help,
        }
        if self.choices:
            s["enum"] = list(self.choices)
        if self.type is str:
            s["maxLength"] = self.max_length
        if self.pattern:
            s["pattern"] = self.pattern
        if self.format:
            s["format"] = self.format
        if self.minimum is not None:
            s["minimum"] = self.minimum
        if self.maximum is not None:
            s["maximum"] = self.maximum
        return s


@dataclass(frozen=True)
class Sort:
    """An order search and lists can be sorted by: `key(library, ids)` gives id -> value, larger first."""

    name: str
    help: str
    owner: str
    key: Callable[[Any, Sequence[str]], dict[str, float]]
    label: str = ""  # a few words for a menu (marked for translation by its owner); the name otherwise
    # (library) -> whether any paper has a value yet (a menu offers the order only then); None: always
    available: Callable[[Any], bool] | None = None


class Contributor(Protocol):
    """What a capability may contribute; every method is optional (the Library asks each capability)."""

    def filters(self) -> Sequence[Filter]: ...

    def sorts(self) -> Sequence[Sort]: ...

    def decorate(self, hits: Sequence[Hit]) -> None: ...  # adds to Hit.extras (events, citations...)


def contributions(capabilities: Sequence[Any], hook: str) -> list[Callable[..., Any]]:
    """The bound methods named `hook` of the capabilities that have one, in the capabilities' order."""
    return [m for c in capabilities if callable(m := getattr(c, hook, None))]


class FilterTable:
    """Every filter and sort the library's capabilities contribute, by name, in contribution order."""

    def __init__(self, filters: Sequence[Filter] = (), sorts: Sequence[Sort] = ()) -> None:
        self.filters: dict[str, Filter] = {}
        for f in filters:
            if f.name in self.filters or f.name in RESERVED:
                raise ValueError(f"two filters named {f.name!r} ({self.filters.get(f.name, f).owner}, {f.owner})")
            self.filters[f.name] = f
        self.sorts: dict[str, Sort] = {s.name: s for s in sorts}

    @classmethod
    def of(cls, capabilities: Sequence[Any]) -> FilterTable:
        """The table of what `capabilities` contribute (objects with `filters()` / `sorts()`)."""
        fs = [f for get in contributions(capabilities, "filters") for f in get()]
        ss = [s for get in contributions(capabilities, "sorts") for s in get()]
        return cls(fs, ss)

    def __iter__(self) -> Iterator[Filter]:
        return iter(self.filters.values())

    def __contains__(self, name: object) -> bool:
        return name in self.filters

    def __getitem__(self, name: str) -> Filter:
        return self.filters[name]

    def __len__(self) -> int:
        return len(self.filters)

    def names(self) -> list[str]:
        return list(self.filters)

    def check(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The set values, each in its filter's type; an unknown name or a bad value raises
        PaperatlasError that names the filters there are."""
        out: dict[str, Any] = {}
        for name, raw in values.items():
            f = self.filters.get(name)
            if f is None:
                raise PaperatlasError(
                    gettext("no filter named {name!r}", name=str(name)[:60]),
                    gettext("the filters are: {names}", names=", ".join(self.filters)),
                )
            v = f.check(raw)
            if v is not None:
                out[name] = v
        return out

    def keep(self, library: Any, values: Mapping[str, Any], extra: Sequence[tuple[str, Any]] = ()) -> set[str] | None:
        """The ids every set filter keeps (None: no filter is set). `extra`: more (name, value) pairs,
        e.g. the author:"Name" filters a query holds (a filter may appear more than once there)."""
        allowed: set[str] | None = None

        def meet(ids: set[str] | None) -> None:
            nonlocal allowed
            if ids is not None:
                allowed = set(ids) if allowed is None else allowed & ids

        columns = {f.name: values[f.name] for f in self if f.column and values.get(f.name) is not None}
        if columns:
            meet(library.store.filter_ids(**columns))
        joint: dict[Any, dict[str, Any]] = {}
        for f in self:
            v = values.get(f.name)
            if v is None or f.column:
                continue
            if f.keep_all is not None:
                joint.setdefault(f.keep_all, {})[f.name] = v
            else:
                meet(f.keep(library, v))
        for keep_all, vals in joint.items():
            meet(keep_all(library, vals))
        for name, v in extra:
            meet(self.filters[name].keep(library, v))
        return allowed

    def lists_alone(self, values: Mapping[str, Any]) -> bool:
        """Whether an empty query with these filters lists the papers they keep."""
        return any(values.get(f.name) is not None and f.alone for f in self)


# request keys that are not filters: no capability may name a filter so
RESERVED = frozenset({"q", "query", "mode", "page", "per_page", "limit", "offset", "sort", "in", "name"})


@dataclass
class SearchRequest:
    """One search as a value: what the CLI, the web, MCP and a saved search's feed all ask the library.

    `filters` maps a filter's name (FilterTable) to its value; `in_` the part of a paper searched
    ("" everything the index holds). `page` counts from 1.

    Example:
        >>> SearchRequest("diffusion", filters={"venue": "NeurIPS"}).to_params()
        {'q': 'diffusion', 'venue': 'NeurIPS'}
    """

    query: str = ""
    mode: str = "hybrid"
    filters: dict[str, Any] = field(default_factory=dict)
    page: int = 1
    per_page: int = 20
    sort: str = ""
    in_: str = ""

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    @property
    def limit(self) -> int:
        return self.per_page

    def to_params(self) -> dict[str, Any]:
        """The request as flat parameters (the web's query string, a saved search's record); only what
        differs from the defaults, so the same search is always the same record."""
        out: dict[str, Any] = {"q": self.query} if self.query else {}
        if self.mode != "hybrid":
            out["mode"] = self.mode
        out.update({k: v for k, v in self.filters.items() if v is not None})
        if self.page != 1:
            out["page"] = self.page
        if self.per_page != 20:
            out["per_page"] = self.per_page
        if self.sort:
            out["sort"] = self.sort
        if self.in_:
            out["in"] = self.in_
        return out

    @classmethod
    def from_params(cls, params: Mapping[str, Any], table: FilterTable, query: str | None = None) -> SearchRequest:
        """The request `to_params()` wrote (or a query string's parameters), validated through `table`.

        `query`, when given, is the query kept beside the parameters (saved searches before the
        parameters held it). Raises PaperatlasError naming the bad parameter and its fix."""
        p = dict(params)
        q = str(p.pop("q", None) or p.pop("query", None) or query or "")
        if len(q) > MAX_QUERY:
            raise PaperatlasError(
                gettext("the query is longer than {n} characters", n=MAX_QUERY), gettext("shorten it")
            )
        mode = str(p.pop("mode", None) or "hybrid")
        if mode not in MODES:
            raise PaperatlasError(
                gettext("mode {raw!r} is not one of {choices}", raw=mode[:60], choices=", ".join(MODES)),
                gettext("use one of {choices}", choices=", ".join(MODES)),
            )
        page = _whole(p.pop("page", None), "page", 1, 1, INT_LIMIT)
        per_page = _whole(p.pop("per_page", None), "per_page", 20, 1, MAX_PER_PAGE)
        sort = str(p.pop("sort", None) or "")
        if sort and sort not in table.sorts:
            raise PaperatlasError(
                gettext("no sort order named {name!r}", name=sort[:60]),
                gettext("the orders are: {names}", names=", ".join(table.sorts) or "-"),
            )
        in_ = str(p.pop("in", None) or "")[:40]
        return cls(q, mode, table.check(p), page, per_page, sort, in_)


def _whole(raw: Any, name: str, default: int, low: int, high: int) -> int:
    if raw is None or raw == "":
        return default
    try:
        v = int(raw)
    except (TypeError, ValueError):
        raise PaperatlasError(
            gettext("{name} must be a whole number, not {raw!r}", name=name, raw=str(raw)[:60]),
            gettext("e.g. {example}", example=f"{name}={default}"),
        ) from None
    if not low <= v <= high:
        raise PaperatlasError(
            gettext("{name} {value} is out of range", name=name, value=str(raw)[:20]),
            gettext("use a number between {low} and {high}", low=low, high=high),
        )
    return v


def core_filters() -> list[Filter]:
    """The library's own filters: the columns of every paper."""
    return [
        Filter(
            "venue",
            str,
            "only this venue (case-insensitive)",
            "core",
            lambda lib, v: lib.store.filter_ids(v, None, None),
            column=True,
            alone=False,
            example="NeurIPS",
        ),
        Filter(
            "year",
            int,
            "only this year",
            "core",
            lambda lib, v: lib.store.filter_ids(None, v, None),
            minimum=-INT_LIMIT,
            maximum=INT_LIMIT,
            column=True,
            alone=False,
            example="2024",
        ),
        Filter(
            "status",
            str,
            "only this status, e.g. Oral",
            "core",
            lambda lib, v: lib.store.filter_ids(None, None, v),
            max_length=100,
            column=True,
            alone=False,
            example="Oral",
        ),
    ]
