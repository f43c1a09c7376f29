"""Render the held-out paste set: shapes like the main corpus's, other real records, other details.

The reader was never tuned on these files; docs/pastes.md reports its first run on them. Run from
the repository root: `python tests/data/pastes/heldout/render.py` (needs /work/shared/data).
"""

from __future__ import annotations

import json
import random
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from render import exp, load_records, pick, write_author_strings  # noqa: E402


def write(name: str, text: str) -> None:
    (HERE / name).write_text(text, encoding="utf-8")


def main() -> None:
    recs = load_records()
    expect: dict[str, dict] = {}

    # virtual-site page, ICLR records (Vienna 2024 halls), blank line between papers only, Spotlight Poster lines
    rs = pick(recs, "ICLR", 6, 101, lambda r: r["status"] in ("Oral", "Spotlight", "Poster"))
    lines = ["ICLR 2024 Posters (virtual site)", ""]
    items = []
    for i, r in enumerate(rs):
        pos = f"#{100 + 3 * i}"
        kind = "Spotlight Poster" if r["status"] == "Spotlight" else r["status"]
        lines += [
            kind,
            r["title"],
            " · ".join(r["authors"]),
            f"Halle B {pos}",
            "Wed 8 May 1:45 a.m. PDT — 3:45 a.m. PDT",
            "Abstract:",
            r["abstract"],
            "",
        ]
        items.append(exp(r, presentation=r["status"].lower(), room="Halle B", poster_position=pos))
    write("h-virtual-iclr.txt", "\n".join(lines))
    expect["h-virtual-iclr.txt"] = {
        "shape": "virtual site, ICLR layout",
        "venue": "ICLR",
        "year": 2024,
        "papers": items,
    }

    # numbered with "1)" and no blank lines, NeurIPS records, authors joined by "; "
    rs = pick(recs, "NeurIPS", 7, 102)
    lines = ["NeurIPS 2023 accepted papers list"]
    for i, r in enumerate(rs, 1):
        lines += [f"{i}) {r['title']}", "; ".join(r["authors"]), r["abstract"]]
    write("h-numbered-paren.txt", "\n".join(lines) + "\n")
    expect["h-numbered-paren.txt"] = {
        "shape": "numbered 1), semicolons, no blank lines",
        "venue": "NeurIPS",
        "year": 2023,
        "papers": [exp(r) for r in rs],
    }

    # unnumbered title / authors / abstract with no blank lines at all, ICML records
    rs = pick(recs, "ICML", 6, 103)
    lines = ["ICML 2024"]
    for r in rs:
        lines += [r["title"], ", ".join(r["authors"]), r["abstract"]]
    write("h-blocks-nolf.txt", "\n".join(lines) + "\n")
    expect["h-blocks-nolf.txt"] = {
        "shape": "title/authors/abstract, no blank lines",
        "venue": "ICML",
        "year": 2024,
        "papers": [exp(r) for r in rs],
    }

    # one-liners with an en dash, NeurIPS spotlights
    rs = pick(recs, "NeurIPS", 8, 104, lambda r: r["status"] == "Spotlight")
    write(
        "h-oneliners-dash.txt",
        "NeurIPS 2023 spotlights\n\n" + "".join(f"{r['title']} – {', '.join(r['authors'])}\n" for r in rs),
    )
    expect["h-oneliners-dash.txt"] = {
        "shape": "Title – Authors one-liners",
        "venue": "NeurIPS",
        "year": 2023,
        "papers": [exp(r, False) for r in rs],
    }

    # a markdown table with the columns in another order and a Decision column
    rs = pick(recs, "ICML", 6, 105)
    lines = ["## ICML 2024 accepted papers", "", "| Paper | Decision | Authors |", "| :--- | :---: | :--- |"]
    lines += [f"| {r['title']} | {r['status']} | {', '.join(r['authors'])} |" for r in rs]
    write("h-md-table.md", "\n".join(lines) + "\n")
    expect["h-md-table.md"] = {
        "shape": "markdown table, other columns",
        "venue": "ICML",
        "year": 2024,
        "papers": [exp(r, False, presentation=r["status"].lower()) for r in rs],
    }

    # Chinese labels with a blank line between papers, ICLR records, names joined by 、
    rs = pick(recs, "ICLR", 4, 106)
    lines = ["ICLR 2024 论文列表", ""]
    for r in rs:
        lines += [f"标题：{r['title']}", f"作者：{'、'.join(r['authors'])}", f"摘要：{r['abstract']}", ""]
    write("h-zh-labels.txt", "\n".join(lines))
    expect["h-zh-labels.txt"] = {
        "shape": "Chinese labels",
        "venue": "ICLR",
        "year": 2024,
        "papers": [exp(r) for r in rs],
    }

    # title, authors, then the abstract wrapped at 72 columns, blank line between papers, NeurIPS
    rs = pick(recs, "NeurIPS", 5, 107)
    lines = ["NeurIPS 2023", ""]
    for r in rs:
        lines += [r["title"], ", ".join(r["authors"]), *textwrap.wrap(r["abstract"], 72), ""]
    write("h-wrapped.txt", "\n".join(lines))
    expect["h-wrapped.txt"] = {
        "shape": "abstracts wrapped at 72 columns",
        "venue": "NeurIPS",
        "year": 2023,
        "papers": [exp(r) for r in rs],
    }

    # a session listing: "Oral 3A ..." heading lines, then title / authors lines, ICML orals
    rs = pick(recs, "ICML", 6, 108, lambda r: r["status"] == "Oral")
    random.Random(9).shuffle(rs)
    lines = ["ICML 2024 orals", ""]
    for i, r in enumerate(rs):
        if i % 3 == 0:
            lines += [f"Oral {1 + i // 3}A Alignment and Safety", ""]
        lines += [r["title"], ", ".join(r["authors"]), ""]
    write("h-sessions.txt", "\n".join(lines))
    expect["h-sessions.txt"] = {
        "shape": "oral session headings, titles and authors",
        "venue": "ICML",
        "year": 2024,
        "papers": [exp(r, False) for r in rs],
    }

    # real hard author strings (lower case, nicknames, particles, initials) of the held-out fifth of
    # `paperatlas eval authors`: neither the author-line rules nor this file's shape were tuned on them
    write_author_strings(recs, expect, "h-author-strings.txt", 12, 1, HERE)

    (HERE / "expect.json").write_text(json.dumps(expect, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print({k: len(v["papers"]) for k, v in expect.items()})


if __name__ == "__main__":
    main()
