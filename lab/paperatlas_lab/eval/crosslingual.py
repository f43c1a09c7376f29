"""`paperatlas eval crosslingual QUERIES_FILE`: MRR@10 and hit@10 per mode for queries written
in another language (Chinese) than the papers they describe (English).

QUERIES_FILE is JSONL, one `{"q": "扩散模型 蛋白质 生成", "title": "<the paper's title>"}` per line;
the title names the one relevant paper (matched case- and punctuation-insensitively).
tests/data/crosslingual_queries.jsonl is the set written for the venue papers and the examples.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from paperatlas import settings
from paperatlas.errors import PaperatlasError
from paperatlas.search.engine import MODES
from paperatlas.search.query import parse

_NON_WORD = re.compile(r"[\W_]+", re.U)


def norm_title(title: str) -> str:
    return _NON_WORD.sub(" ", title.lower()).strip()


def load_queries(path: str | Path, lib: Any) -> list[tuple[str, str]]:
    """(query, paper id) pairs; a title the library lacks is an error naming the line."""
    titles: dict[str, str] = {}
    for batch in lib.store.iter_texts():
        for pid, title, _derived, _abstract in batch:
            titles.setdefault(norm_title(title), pid)
    pairs: list[tuple[str, str]] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                q, title = str(row["q"]), str(row["title"])
            except (ValueError, KeyError, TypeError) as e:
                raise PaperatlasError(
                    f'{path}, line {n}: not a {{"q": ..., "title": ...}} JSON object ({e})',
                    "write one JSON object per line with the keys q and title",
                ) from None
            pid = titles.get(norm_title(title))
            if pid is None:
                raise PaperatlasError(
                    f"{path}, line {n}: no paper titled {title!r} in this library",
                    "ingest the papers the queries were written for (--db names the library)",
                )
            pairs.append((q, pid))
    if not pairs:
        raise PaperatlasError(f"{path} holds no queries", 'write one {"q": ..., "title": ...} object per line')
    return pairs


def eval_crosslingual(
    lib: Any, pairs: Sequence[tuple[str, str]], modes: Sequence[str] = MODES, k: int = 10
) -> dict[str, Any]:
    """{mode: {"mrr@10", "hit@10", "hit@1"}}, plus "_info" (routes, index coverage) and each query's rank."""
    out: dict[str, Any] = {}
    per_query: list[dict[str, Any]] = [{"q": q, "paper_id": pid, "route": lib.engine.route(q)} for q, pid in pairs]
    n = max(1, len(pairs))
    for mode in modes:
        ranks: list[int | None] = []
        for (text, pid), row in zip(pairs, per_query):
            fused, _ = lib.engine.rank(parse(text), mode, 100)
            ids = [d for d, _ in fused[:100]]
            r = ids.index(pid) + 1 if pid in ids else None
            ranks.append(r)
            row[mode] = r
        out[mode] = {
            f"mrr@{k}": round(sum(1 / r for r in ranks if r and r <= k) / n, 4),
            f"hit@{k}": round(sum(1 for r in ranks if r and r <= k) / n, 4),
            "hit@1": round(sum(1 for r in ranks if r == 1) / n, 4),
        }
    st = lib.multilingual.status()
    out["_info"] = {
        "queries": len(pairs),
        "papers": st["papers"],
        "multilingual_embedded": st["embedded"],
        "multilingual_routed": sum(1 for r in per_query if r["route"] == "multilingual"),
        "semantic_weight": lib.engine.settings.crosslingual_semantic_weight,
        "fusion": lib.engine.settings.fusion,
    }
    out["_queries"] = per_query
    return out


@click.command("crosslingual")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--db",
    "db_path",
    envvar=settings.env("db"),
    default="paperatlas.db",
    show_default=True,
    help="Library holding the papers (embedded; `paperatlas embed --multilingual` for the second index).",
)
@click.option("--mode", "modes", multiple=True, type=click.Choice(MODES), help="Only these modes (default: all three).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: per mode MRR@10, hit@10, hit@1; each query's rank.")
def crosslingual_cmd(file: str, db_path: str, modes: tuple[str, ...], as_json: bool) -> None:
    """MRR@10 and hit@10 of keyword, semantic and hybrid search for queries in Chinese (or any
    language) that describe one English paper each.

    FILE is JSONL: {"q": ..., "title": ...} per line (tests/data/crosslingual_queries.jsonl).

    Example:

        paperatlas embed --multilingual && paperatlas eval crosslingual tests/data/crosslingual_queries.jsonl --json
    """
    from paperatlas.library import Library

    try:
        with Library(db_path, create=False) as lib:
            res = eval_crosslingual(lib, load_queries(file, lib), modes or MODES)
    except PaperatlasError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps(res, ensure_ascii=False, indent=2))
        return
    queries, info = res.pop("_queries"), res.pop("_info")
    for mode, vals in res.items():
        click.echo(f"{mode:8s} " + "  ".join(f"{m} {v:.3f}" for m, v in vals.items()))
    click.echo(
        f"({len(queries)} queries, {info['multilingual_routed']} through the multilingual index "
        f"({info['multilingual_embedded']} of {info['papers']} papers embedded); ranks per query with --json)"
    )
