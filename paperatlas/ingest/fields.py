"""The fields a paper list carries besides its text: affiliations, review figures, presentation type,
code and project links, citation counts. They go into `Paper.extra` under the names docs/fields.md lists.

papercopilot/paperlists records spell them `aff` (one entry per author, `;`-separated, `+` between the
several affiliations of one author), `aff_unique_norm` (the normalised institutions) with
`aff_unique_index` (per affiliation entry, into that list), `aff_country_unique` with
`aff_country_unique_index` (parallel to `aff_unique_index`), `rating` / `confidence` (`;`-separated per
review), `rating_avg`, `github`, `project`, `gs_citation` (-1: not looked up) and `status`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

PRESENTATIONS = ("oral", "spotlight", "highlight", "poster")
# what a normalised-institution list says when it does not know
_UNKNOWN_INSTITUTION = {"unknown institution", "unknown", "n/a", "none", "-"}


def presentation_of(status: str) -> str:
    """ "Oral", "ICLR 2024 spotlight", "Poster (Highlight)" -> "oral" / "spotlight" / "highlight" ("" if none)."""
    low = (status or "").lower()
    for word in PRESENTATIONS:  # the rarer, more telling word first: "poster (highlight)" is a highlight
        if re.search(rf"\b{word}s?\b", low):
            return word
    return ""


def _split(v: Any, sep: str = ";") -> list[str]:
    if v is None or isinstance(v, (list, dict)) and not v:
        return []
    if isinstance(v, list):
        return [str(x).strip() for x in v]
    s = str(v)
    return [x.strip() for x in s.split(sep)] if s.strip() else []


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        f = float(v)
    else:
        try:
            f = float(str(v).strip())
        except ValueError:
            return None
    return f if math.isfinite(f) else None


def _numbers(v: Any) -> list[float]:
    out = []
    for x in _split(v):
        f = _number(x)
        if f is not None:
            out.append(f)
    return out


def reviews_of(row: dict[str, Any]) -> dict[str, Any]:
    """{"ratings", "confidences", "rating_avg", "rating_std", "confidence_avg"}: only what the row gives
    (the mean and spread are computed from the ratings when the row lists them)."""
    out: dict[str, Any] = {}
    ratings, confidences = _numbers(row.get("rating")), _numbers(row.get("confidence"))
    if ratings:
        out["ratings"] = ratings
        mean = sum(ratings) / len(ratings)
        out["rating_avg"] = round(mean, 4)
        out["rating_std"] = round(math.sqrt(sum((r - mean) ** 2 for r in ratings) / len(ratings)), 4)
    else:
        avg = _number(row.get("rating_avg"))
        if avg is not None and avg > 0:  # paperlists writes 0 (or [0, 0]) where no review is public
            out["rating_avg"] = round(avg, 4)
    if confidences:
        out["confidences"] = confidences
        out["confidence_avg"] = round(sum(confidences) / len(confidences), 4)
    return out


def _institution(name: str) -> str:
    name = " ".join(name.split())
    return "" if name.lower() in _UNKNOWN_INSTITUTION else name


def affiliations_of(row: dict[str, Any], authors: Sequence[str]) -> list[dict[str, Any]]:
    """One {"author", "institution", "country"} per author, in author order ("" when unknown).

    `institution` is the normalised name (`aff_unique_norm`) when the record gives one, else the
    affiliation as written; an author with several affiliations gets the first as `institution` and all
    of them, in order, as `institutions`. Countries come from the record's own institution -> country
    pairing; nothing is guessed where the record's lists do not line up."""
    raw = _split(row.get("aff"))
    if not authors or not any(raw):
        return []
    norm = [_institution(x) for x in _split(row.get("aff_unique_norm"))]
    countries = _split(row.get("aff_country_unique"))
    uidx, cidx = _split(row.get("aff_unique_index")), _split(row.get("aff_country_unique_index"))
    # aff_unique_index has one entry per author, or one per author whose `aff` is not empty
    filled = [i for i, a in enumerate(raw[: len(authors)]) if a]
    if len(uidx) == len(authors):
        slots = list(range(len(authors)))
    elif len(uidx) == len(filled):
        slots = filled
    else:
        slots = []
    # aff_country_unique_index runs parallel to aff_unique_index, or to its non-empty-`aff` entries
    if len(cidx) == len(uidx):
        pairs = list(zip(uidx, cidx))
    elif len(uidx) == len(authors) and len(cidx) == len(filled):
        pairs = list(zip([uidx[i] for i in filled], cidx))
    else:
        pairs = []
    country_of: dict[int, str] = {}
    if pairs:
        for u, c in pairs:
            us, cs = u.split("+"), c.split("+")
            if len(us) != len(cs):
                continue
            for a, b in zip(us, cs):
                if a.isdigit() and b.isdigit() and int(b) < len(countries) and countries[int(b)]:
                    country_of.setdefault(int(a), countries[int(b)])
    per_author: dict[int, list[int]] = {}
    for slot, u in zip(slots, uidx):
        per_author[slot] = [int(x) for x in u.split("+") if x.isdigit() and int(x) < len(norm)]
    out: list[dict[str, Any]] = []
    for i, name in enumerate(authors):
        written = [_institution(x) for x in raw[i].split("+")] if i < len(raw) else []
        idx = per_author.get(i, [])
        # the normalised names when the record maps this author to them (an "Unknown Institution"
        # there stays unknown: the written form is then a department or a street, not a name)
        names = [norm[k] for k in idx if norm[k]] if idx else [x for x in written if x]
        entry: dict[str, Any] = {
            "author": name,
            "institution": names[0] if names else "",
            "country": next((country_of[k] for k in idx if country_of.get(k)), ""),
        }
        names = list(dict.fromkeys(names))
        if len(names) > 1:
            entry["institutions"] = names
        out.append(entry)
    return out if any(e["institution"] for e in out) else []


def _url(v: Any) -> str:
    s = str(v or "").strip()
    return s if s.startswith(("http://", "https://")) else ""


def source_fields(row: dict[str, Any], authors: Sequence[str], status: str = "") -> dict[str, Any]:
    """The shared extra fields a (lower-cased key) row carries; empty ones are left out."""
    out: dict[str, Any] = {}
    pres = presentation_of(status)
    if pres:
        out["presentation"] = pres
    aff = affiliations_of(row, authors)
    if aff:
        out["affiliations"] = aff
    # the paper's countries as the record lists them: certain even where the per-author lists do not
    # line up (then the authors' `country` stays empty)
    countries = list(dict.fromkeys(c for c in _split(row.get("aff_country_unique")) if c))
    if countries:
        out["countries"] = countries
    rev = reviews_of(row)
    if rev:
        out["reviews"] = rev
    code, project = (
        _url(row.get("github") or row.get("code") or row.get("code_url")),
        _url(row.get("project") or row.get("project_url")),
    )
    if code:
        out["code_url"] = code
    if project:
        out["project_url"] = project
    cites = _number(row.get("gs_citation", row.get("citations")))
    if cites is not None and cites >= 0:  # paperlists writes -1 for "not looked up"
        out["citations"] = int(cites)
    return out
