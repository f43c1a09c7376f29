"""`paperatlas eval authors PAPERS`: how often real author lists, written the ways pages write them, are
taken for author lines, and how often other lines are (wrongly).

Every record's author list (the venue papers: NeurIPS 2023, ICLR 2024, ICML 2024; thousands of real names
with nicknames, particles, initials, `Jr`, single and CJK names) is rendered in every case (as written,
lower, UPPER) and every separator pages use (`, `, `; `, ` · `, `and` before the last, `，`), each with
one decoration in turn (none, affiliation marks, footnote numbers, initials for given names, `et al.`),
and asked of the paste reader's author-line test (`ingest.textlist.is_author_line`); its split
(`split_author_line`) must give back the names as rendered. Lines that are no author line (the titles,
as written and in lower case; the abstracts' first sentences and whole abstracts; the keyword lists)
must be turned away.

A fifth of the records (by a hash of their id) is held out: the rules were tuned on the rest only, and
both parts are reported. `--baseline REF` scores the reader of a git revision beside this one in the
same run (its textlist.py loaded from `git show`).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import click

from .. import REPO

CASES = ("as written", "lower", "upper")
SEPARATORS = ("comma", "semicolon", "middot", "and", "fullwidth")
DECORATIONS = ("plain", "marks", "numbers", "initials", "et al.")
_SUPER = "¹²³⁴⁵"


def held_out(paper_id: str) -> bool:
    """One record in five, fixed by its id: the part the rules were not tuned on."""
    return int(hashlib.sha1(paper_id.encode()).hexdigest()[:8], 16) % 5 == 0


def _initials(name: str) -> str:
    """`Ernest K. Ryu` -> `E. K. Ryu`; a name of one word, or with a particle or nickname, stays."""
    ws = name.split()
    if len(ws) < 2 or any(not w[:1].isalpha() or not w[:1].isupper() for w in ws):
        return name
    return " ".join([w if w.endswith(".") and len(w) <= 3 else f"{w[0]}." for w in ws[:-1]] + [ws[-1]])


def render(authors: list[str], case: str, sep: str, deco: str) -> tuple[str, list[str]]:
    """One author line and the names its split must give back."""
    names = [" ".join(a.split()) for a in authors if a.strip()]
    if deco == "initials":
        names = [_initials(n) for n in names]
    if deco == "et al.":
        names = names[:3]
    if case == "lower":
        names = [n.lower() for n in names]
    elif case == "upper":
        names = [n.upper() for n in names]
    shown = list(names)
    if deco == "marks":
        shown = [n + _SUPER[i % len(_SUPER)] + ("*" if i == 0 else "") for i, n in enumerate(names)]
    elif deco == "numbers":
        shown = [n + (f"{i % 3 + 1},{i % 3 + 2}" if i % 2 else str(i % 3 + 1)) for i, n in enumerate(names)]
    if sep == "and" and len(shown) >= 2:
        line = ", ".join(shown[:-1]) + " and " + shown[-1]
    else:
        line = {"comma": ", ", "semicolon": "; ", "middot": " · ", "and": ", ", "fullwidth": "，"}[sep].join(shown)
    if deco == "et al." and len(authors) > 3:
        line += ", et al."
    return line, names


def _first_sentence(text: str) -> str:
    s = " ".join(text.split())
    cut = s.find(". ")
    return s[: cut + 1] if 0 < cut < 400 else s[:400]


def lines_of(papers: str | Path, limit: int = 0) -> Iterator[tuple[bool, str, str, str, list[str] | None]]:
    """(held out, kind, style, line, expected names or None for a line that is no author line)."""
    with gzip.open(papers, "rt", encoding="utf-8") as f:
        for i, raw in enumerate(f):
            if limit and i >= limit:
                break
            r = json.loads(raw)
            ho = held_out(r["id"])
            authors = [a for a in r.get("authors") or [] if a and a.strip()]
            if authors:
                for c, case in enumerate(CASES):
                    for s, sep in enumerate(SEPARATORS):
                        deco = DECORATIONS[(i + c * len(SEPARATORS) + s) % len(DECORATIONS)]
                        line, names = render(authors, case, sep, deco)
                        yield ho, "author line", f"{case} / {sep} / {deco}", line, names
            title = " ".join(r["title"].split())
            yield ho, "title", "as written", title, None
            yield ho, "title", "lower", title.lower(), None
            abstract = " ".join((r.get("abstract") or "").split())
            if abstract:
                yield ho, "abstract", "first sentence", _first_sentence(abstract), None
                yield ho, "abstract", "whole", abstract, None
            if r.get("keywords"):
                yield ho, "keywords", "as written", ", ".join(r["keywords"]), None
                yield ho, "keywords", "lower", ", ".join(r["keywords"]).lower(), None


def load_reader(ref: str) -> ModuleType:
    """paperatlas/ingest/textlist.py as it was at git revision `ref` (it imports nothing of paperatlas)."""
    root = REPO
    try:
        src = subprocess.run(
            ["git", "-C", str(root), "show", f"{ref}:paperatlas/ingest/textlist.py"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError) as e:
        from paperatlas.errors import PaperatlasError

        raise PaperatlasError(
            f"cannot read paperatlas/ingest/textlist.py at {ref!r} ({e})",
            "give --baseline a revision of this git checkout (e.g. a commit id), or leave it out",
        ) from None
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8") as tmp:
        tmp.write(src)
    spec = importlib.util.spec_from_file_location(f"_textlist_{ref.replace('/', '_')}", tmp.name)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    Path(tmp.name).unlink()
    return mod


def score(
    papers: str | Path,
    readers: dict[str, tuple[Callable[[str], bool], Callable[[str], tuple[list[str], Any]]]],
    limit: int = 0,
) -> dict[str, Any]:
    """Per reader, per part (tuned / held out): author lines recognised and split exactly, per style
    dimension, and the other lines wrongly taken for author lines, per kind."""
    out: dict[str, Any] = {
        name: {part: {"authors": {}, "exact": {}, "others": {}} for part in ("tuned", "held out")} for name in readers
    }
    examples: dict[str, list[str]] = {name: [] for name in readers}
    for ho, kind, style, line, names in lines_of(papers, limit):
        part = "held out" if ho else "tuned"
        for name, (is_author, split) in readers.items():
            got = is_author(line)
            d = out[name][part]
            if names is None:
                n, k = d["others"].get(f"{kind} ({style})", (0, 0))
                d["others"][f"{kind} ({style})"] = (n + got, k + 1)
                if got and len(examples[name]) < 20:
                    examples[name].append(f"{kind}: {line[:100]}")
                continue
            exact = got and split(line)[0] == names
            case, sep, deco = style.split(" / ")
            for key in ("all", f"case: {case}", f"separator: {sep}", f"decoration: {deco}"):
                n, k = d["authors"].get(key, (0, 0))
                d["authors"][key] = (n + got, k + 1)
                n, k = d["exact"].get(key, (0, 0))
                d["exact"][key] = (n + exact, k + 1)
    for name in readers:
        out[name]["wrongly taken"] = examples[name]
    return out


def table(res: dict[str, Any]) -> str:
    names = list(res)
    rows = []
    for part in ("tuned", "held out"):
        first = res[names[0]][part]
        rows.append(f"== {part} records ==")
        head = f"{'author lines recognised':38}" + "".join(f"{n:>22}" for n in names)
        rows += [head, "-" * len(head)]
        order = ["all"] + [f"case: {c}" for c in CASES] + [f"separator: {x}" for x in SEPARATORS]
        order += [f"decoration: {d}" for d in DECORATIONS]
        for key in [k for k in order if k in first["authors"]]:
            cells = []
            for n in names:
                a, k = res[n][part]["authors"][key]
                e, _ = res[n][part]["exact"][key]
                cells.append(f"{100 * a / k:6.2f}% ({100 * e / k:6.2f}%)")
            label = f"{key} [{first['authors'][key][1]}]"
            rows.append(f"{label:38}" + "".join(f"{c:>22}" for c in cells))
        rows.append(f"{'other lines taken for author lines':38}")
        for key in first["others"]:
            cells = []
            for n in names:
                a, k = res[n][part]["others"][key]
                cells.append(f"{a} ({100 * a / k:.2f}%)")
            label = f"{key} [{first['others'][key][1]}]"
            rows.append(f"  {label:36}" + "".join(f"{c:>22}" for c in cells))
        rows.append("")
    rows.append("recognised % (in brackets: recognised and split into exactly the names written)")
    for n in names:
        if res[n]["wrongly taken"]:
            rows.append(f"{n}: other lines taken for author lines, e.g.:")
            rows += [f"  {x}" for x in res[n]["wrongly taken"][:8]]
    return "\n".join(rows)


@click.command("authors")
@click.argument("papers", type=click.Path(exists=True, dir_okay=False))
@click.option("--baseline", default=None, help="A git revision whose paste reader is scored beside this one.")
@click.option("--limit", default=0, show_default=True, help="Read only the first N records (0: all).")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def authors_cmd(papers: str, baseline: str | None, limit: int, as_json: bool) -> None:
    """Score the author-line test of the paste reader on real author lists rendered as pages write them.

    PAPERS is a papers.jsonl.gz with an `authors` list per record (e.g. the venue papers).

    Example:

        paperatlas eval authors ../shared/data/ml_venue_papers/papers.jsonl.gz --baseline 1c1ab73
    """
    from paperatlas.ingest import textlist

    readers = {}
    if baseline:
        old = load_reader(baseline)
        readers[f"at {baseline}"] = (old.is_author_line, old.split_author_line)
    readers["this checkout"] = (textlist.is_author_line, textlist.split_author_line)
    res = score(papers, readers, limit)
    if as_json:
        click.echo(json.dumps(res, indent=1, default=list))
    else:
        click.echo(table(res))
