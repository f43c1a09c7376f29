"""`paperatlas eval pastes [DIR]`: how well pasted paper lists are read, per shape.

Each file of the corpus (tests/data/pastes: the pastes a new user made, the same records rendered
in other shapes people paste, and two real pages; see the README there) is ingested into a fresh
library exactly as `paperatlas ingest FILE` would, and what was stored is compared with the
file's entry in expect.json:

- papers: how many were stored, against how many the file holds (extra ones are damage too);
- titles: expected titles stored exactly as written;
- first authors: of those papers, the first author exactly as written;
- abstracts: the abstract intact (the cleaned expected text, nothing glued in or cut off; a paper
  without an abstract in the paste must have none);
- fields: presentation type, room and poster number kept in `extra` as the paste gave them;
- venue/year: the file's header read as venue and year (where the file names them).
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click

from .. import REPO
from paperatlas.ingest.clean import clean_text

DEFAULT_CORPUS = REPO / "tests" / "data" / "pastes"


@dataclass
class ShapeScore:
    file: str
    shape: str
    expected: int
    stored: int
    titles: int
    first_authors: int
    abstracts: int
    fields: int
    fields_expected: int
    venue_year: bool

    @property
    def perfect(self) -> bool:
        n = self.expected
        return (
            self.stored == n
            and self.titles == n
            and self.first_authors == n
            and self.abstracts == n
            and self.fields == self.fields_expected
            and self.venue_year
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"perfect": self.perfect}


def _ws(s: str) -> str:
    return re.sub(r"\s+", " ", s or "").strip()


def score_file(path: Path, want: dict[str, Any], library: Any) -> ShapeScore:
    """Ingest `path` into `library` (an empty Library) and score what was stored against `want`."""
    library.ingest([path])
    papers = library.papers()
    by_title: dict[str, Any] = {}
    for p in papers:
        by_title.setdefault(p.title, p)
    titles = authors = abstracts = fields = n_fields = 0
    for w in want["papers"]:
        n_fields += len(w["fields"])
        p = by_title.get(w["title"])
        if p is None:
            continue
        titles += 1
        authors += bool(p.authors) and p.authors[0] == w["first_author"]
        abstracts += _ws(p.abstract) == _ws(clean_text(w["abstract"]))
        fields += sum(1 for k, v in w["fields"].items() if str((p.extra or {}).get(k, "")) == v)
    venue_year = want["venue"] is None or all((p.venue, p.year) == (want["venue"], want["year"]) for p in papers)
    return ShapeScore(
        path.name,
        want["shape"],
        len(want["papers"]),
        len(papers),
        titles,
        authors,
        abstracts,
        fields,
        n_fields,
        bool(papers) and venue_year,
    )


def eval_pastes(corpus: str | Path = DEFAULT_CORPUS) -> list[ShapeScore]:
    """Score every file named in `corpus`/expect.json, each in a library of its own."""
    from paperatlas.library import Library  # the whole ingest path, as the CLI runs it

    corpus = Path(corpus)
    expect = json.loads((corpus / "expect.json").read_text(encoding="utf-8"))
    scores = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, want) in enumerate(expect.items()):
            lib = Library(Path(tmp) / f"{i}.db", embedder="hashing")
            try:
                scores.append(score_file(corpus / name, want, lib))
            finally:
                lib.close()
    return scores


def totals(scores: list[ShapeScore]) -> dict[str, int]:
    keys = ("expected", "stored", "titles", "first_authors", "abstracts", "fields", "fields_expected")
    out = {k: sum(getattr(s, k) for s in scores) for k in keys}
    out["venue_year"] = sum(s.venue_year for s in scores)
    out["files"] = len(scores)
    out["perfect_files"] = sum(s.perfect for s in scores)
    return out


def table(scores: list[ShapeScore]) -> str:
    head = f"{'file':26} {'papers':>9} {'titles':>7} {'1st au':>7} {'abstr':>7} {'fields':>7} {'venue':>6}"
    rows = [head, "-" * len(head)]
    for s in scores:
        fields = f"{s.fields}/{s.fields_expected}" if s.fields_expected else "-"
        rows.append(
            f"{s.file:26} {s.stored:>4}/{s.expected:<4} {s.titles:>7} {s.first_authors:>7} {s.abstracts:>7} "
            f"{fields:>7} {'ok' if s.venue_year else 'WRONG':>6}"
        )
    t = totals(scores)
    rows.append("-" * len(head))
    rows.append(
        f"{'all':26} {t['stored']:>4}/{t['expected']:<4} {t['titles']:>7} {t['first_authors']:>7} "
        f"{t['abstracts']:>7} {t['fields']:>3}/{t['fields_expected']:<3} {t['venue_year']:>3}/{t['files']}"
    )
    rows.append(f"files read perfectly: {t['perfect_files']} of {t['files']}")
    return "\n".join(rows)


@click.command("pastes")
@click.argument("corpus", required=False, type=click.Path(exists=True, file_okay=False), default=str(DEFAULT_CORPUS))
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def pastes_cmd(corpus: str, as_json: bool) -> None:
    """Score the reading of pasted paper lists, per shape (papers, titles, authors, abstracts, fields).

    CORPUS is a folder of pasted lists with an expect.json (default: the repository's tests/data/pastes).

    Example:

        paperatlas eval pastes --json
    """
    scores = eval_pastes(corpus)
    if as_json:
        click.echo(json.dumps({"files": [s.to_dict() for s in scores], "totals": totals(scores)}, indent=1))
    else:
        click.echo(table(scores))
