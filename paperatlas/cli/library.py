"""The library's own commands: ingest, stats, list, show, export, embed, copy, search, similar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from .llm import llm_options
from .common import (
    EXIT_BAD_INPUT,
    EXIT_WARNINGS,
    Fail,
    FilterCommand,
    check_sort,
    echo_json,
    embed_multilingual,
    event_text,
    get_library,
    handle_errors,
    json_option,
    maybe_embed,
    nothing_found,
    option_name,
    out,
    paper_table,
    print_hits,
    progress_bar,
    say_crosslingual,
    say_waiting,
    search_answer,
    show_hits,
    write_output,
)
from ..export import EXPORT_FORMATS, export
from ..ingest.formats import FORMAT_NAMES
from ..contrib import MODES
from ..embed.base import check_choice, retired_note
from ..library import MAX_RESULTS, Library
from ..search.cjk import has_cjk
from ..store import is_postgres_url
from ..errors import IngestError


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["auto", *FORMAT_NAMES]), default="auto", help="Force a format.")
@click.option("--venue", help="Set the venue of every paper (overrides the file).")
@click.option("--year", type=int, help="Set the year of every paper (overrides the file).")
@click.option("--encoding", default="utf-8", show_default=True, help="Text encoding of the files.")
@click.option("--skip-bad", is_flag=True, help="Store the good records and list the bad ones.")
@click.option("--no-embed", is_flag=True, help="Do not compute embeddings after ingesting.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would be stored (title, first author, abstract start, fields); write nothing.",
)
@json_option
@click.pass_context
@handle_errors
def ingest(
    ctx: click.Context,
    files: tuple[str, ...],
    fmt: str,
    venue: str | None,
    year: int | None,
    encoding: str,
    skip_bad: bool,
    no_embed: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Add paper lists to the library (re-running is safe: unchanged papers are skipped).

    Reads plain-text lists as people paste them from conference pages (title, authors and
    abstract lines, numbered or not, with or without blank lines; virtual-site pages with
    Poster/Oral lines and rooms; labelled fields; markdown tables; arXiv listings; or a
    "NeurIPS 2026" header and one abstract per paragraph), JSONL/JSON, CSV/TSV, BibTeX, BEIR
    corpora, OpenReview and arXiv exports, gzipped or not. A PDF of a paper becomes a paper
    (title and abstract from its first page, its full text read), or is attached to the library
    paper it is; a folder stands for the PDFs in it and below (a download or Zotero folder).

    It says how many papers it read from a text list and in which shape (`note:` lines), and
    names every paper it may have read wrong, with the fix (`warning:` lines). Exit codes: 0
    stored; 5 stored, with warnings; 3 bad input, nothing stored. `--dry-run` shows what would
    be stored and writes nothing (no library file is created); it exits the same way.

    Example:

        paperatlas ingest --dry-run pasted.txt && paperatlas ingest pasted.txt
    """
    fmt_or_none = None if fmt == "auto" else fmt
    files = _pdfs_of_folders(files, quiet=as_json)
    if dry_run:
        _ingest_preview(ctx, list(files), fmt_or_none, venue, year, encoding, skip_bad, as_json)
        return
    lib = get_library(ctx, create=True)
    with progress_bar("ingesting") as update:
        report = lib.ingest(list(files), fmt_or_none, venue, year, encoding, skip_bad, update)
    if not as_json:
        click.echo(report.summary())
        for o in report.outcomes.get("pdfs", []):
            # the title read from page 1, so a wrong read shows at once
            title = f"  {o['title']}" if o.get("title") else ""
            click.echo(f"{o['file']}: {o['id']} ({o['state']}){title}")
        for b in report.bad:
            click.echo(f"  skipped {b}", err=True)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    embedded = maybe_embed(lib, no_embed, quiet=as_json)
    if as_json:
        d = report.to_dict()
        d["embedded"] = embedded
        echo_json(d)
    if report.warnings:
        if not as_json:
            click.echo(
                f"{len(report.warnings)} warnings: the papers they name are stored; check them with "
                "`paperatlas show ID`, or fix the list and ingest it again (exit code 5)",
                err=True,
            )
        ctx.exit(EXIT_WARNINGS)


def _pdfs_of_folders(files: tuple[str, ...], quiet: bool) -> tuple[str, ...]:
    """A folder named to `ingest` stands for the PDFs in it and below (a folder of papers is what
    people have); one with no PDF is an error that says what to name instead."""
    out: list[str] = []
    for f in files:
        folder = Path(f).expanduser()
        if not folder.is_dir():
            out.append(f)
            continue
        pdfs = sorted(str(p) for p in folder.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
        if not pdfs:
            raise IngestError(
                [],
                f"{f} is a folder with no PDF in it (below it either)",
                f"name the files to ingest: `paperatlas ingest {f.rstrip('/')}/*.txt`",
            )
        if not quiet:
            click.echo(f"note: {f}: {len(pdfs)} PDFs", err=True)
        out.extend(pdfs)
    return tuple(out)


def _ingest_preview(
    ctx: click.Context,
    files: list[str],
    fmt: str | None,
    venue: str | None,
    year: int | None,
    encoding: str,
    skip_bad: bool,
    as_json: bool,
) -> None:
    """`ingest --dry-run`: what each file would give, read exactly as an ingest reads it."""
    previews = Library.preview(files, fmt, venue, year, encoding)
    bad = [b for p in previews for b in p.bad]
    warnings = [w for p in previews for w in p.warnings]
    if as_json:
        echo_json({"dry_run": True, "files": [p.to_dict() for p in previews]})
    else:
        for p in previews:
            shape = f" as {p.shape}" if p.shape else ""
            click.echo(f"{p.path}: {len(p.papers)} papers{shape} ({p.format or 'unreadable'})")
            for i, (loc, paper) in enumerate(p.papers, 1):
                # three lines per paper: what it is, who and where, how its abstract starts
                title = paper.title + ("  (title derived from the abstract)" if paper.title_derived else "")
                click.echo(f"{i:>4}  {loc:<10} {title}")
                who = (
                    paper.authors[0] + (f" (+{len(paper.authors) - 1})" if len(paper.authors) > 1 else "")
                    if paper.authors
                    else "(no authors)"
                )
                where = [" ".join(str(x) for x in (paper.venue, paper.year) if x)]
                where += [
                    str(paper.extra[k])
                    for k in ("presentation", "session", "room", "poster_position")
                    if paper.extra.get(k)
                ]
                click.echo(f"{'':16} {' · '.join(x for x in [who, *where] if x)}")
                abstract = paper.abstract[:90] + ("…" if len(paper.abstract) > 90 else "")
                click.echo(f"{'':16} {abstract or '(no abstract)'}")
        for p in previews:
            for note in p.notes:
                click.echo(f"note: {note}", err=True)
        for w in warnings:
            click.echo(f"warning: {w}", err=True)
        for b in bad:
            click.echo(f"{'skipped' if skip_bad else 'bad'}: {b}", err=True)
        click.echo("dry run: nothing was written", err=True)
    if bad and not skip_bad:
        ctx.exit(EXIT_BAD_INPUT)
    if warnings:
        ctx.exit(EXIT_WARNINGS)


@click.command()
@json_option
@click.pass_context
@handle_errors
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts per venue and year, embedding models and library size.

    Example:

        paperatlas stats --json
    """
    s = get_library(ctx).stats()
    if as_json:
        echo_json(s)
        return
    t = Table(title=f"{s['path']}: {s['papers']} papers")
    for col in ("venue", "year", "papers", "status"):
        t.add_column(col)
    for v in s["venues"]:
        t.add_row(
            v["venue"] or "-",
            str(v["year"] or "-"),
            str(v["papers"]),
            ", ".join(f"{k} {n}" for k, n in v["status"].items()),
        )
    out.print(t)
    for model, n in s["vectors"].items():
        out.print(f"vectors: {n} by {model}")
    ft = s.get("fulltext") or {}
    if ft:
        failed = ", ".join(f"{k} {n}" for k, n in sorted(ft.items()) if k != "read")
        out.print(f"fulltext: {ft.get('read', 0)} read" + (f"; not read: {failed}" if failed else ""))
    if fp := s.get("fulltext_passages"):
        out.print(f"fulltext passages: {fp['passages']}, {fp['embedded']} searchable by meaning")


@click.command("list", cls=FilterCommand)
@click.option("--limit", type=int, default=50, show_default=True, help="At most this many (0 = all).")
@click.option("--offset", type=int, default=0, help="Skip this many first.")
@click.option(
    "--sort",
    "sort_",
    metavar="ORDER",
    callback=check_sort,
    help="Order by ORDER instead of ingest order: citations, rising (after `paperatlas enrich`).",
)
@json_option
@click.pass_context
@handle_errors
def list_(ctx: click.Context, limit: int, offset: int, sort_: str | None, as_json: bool, **filters: Any) -> None:
    """List papers in ingest order (every filter of `search` applies; --sort citations: most cited first).

    Example:

        paperatlas list --venue ICLR --year 2026 --limit 5

        paperatlas list --venue CoRL --country China --type oral
    """
    lib = get_library(ctx)
    papers = lib.papers(limit=limit or None, offset=offset, order=sort_ or "rowid", **filters)
    if as_json:
        echo_json([p.public() for p in papers])
    elif papers:
        out.print(paper_table(papers, _shown(lib.count(**filters), offset, len(papers))))
    if not papers:
        nothing_found(ctx, "no papers to list", _filters_hint(lib, filters, offset), **_set(filters), offset=offset)


def _set(filters: dict[str, Any]) -> dict[str, Any]:
    """The filters that are set, in the table's order (what `nothing found` lists)."""
    return {k: v for k, v in filters.items() if v is not None}


def _shown(total: int, offset: int, n: int) -> str:
    """`12 papers` or `papers 51-100 of 240`: a page always says the total it is part of."""
    if offset == 0 and n == total:
        return f"{total} papers"
    return f"papers {offset + 1}-{offset + n} of {total}"


def _filters_hint(lib: Library, filters: dict[str, Any], offset: int = 0, mode: str = "") -> str:
    """What to try when a command found nothing: the likeliest cause first."""
    total = lib.count()
    if total == 0:
        from ..store import redact

        where = redact(lib.path)  # a PostgreSQL URL may hold its password
        return f"{where} holds no papers yet: add a list with `paperatlas --db {where} ingest FILE...`"
    values = lib.filters.check(filters)
    # a capability that owns a filter says best why it kept nothing (no such author, no programme...)
    for explain in lib.contributions("explain_empty"):
        why = explain(values)
        if why:
            return str(why)
    if values:
        flags = " / ".join(option_name(k) for k in values)
        return (
            f"drop {flags} to look at all {total} papers; `paperatlas stats` lists the venues and years in this library"
        )
    if offset:
        return f"--offset {offset} is past the end: this library holds {total} papers"
    if mode == "keyword":
        return 'try other words, or --mode hybrid to search by meaning too; "quoted phrases" must appear as written'
    if mode:
        return 'try other or fewer words; "quoted phrases" must appear as written'
    return ""


def _search_body(
    ctx: click.Context, lib: Any, query: str, limit: int, venue: str | None, year: int | None, as_json: bool
) -> None:
    """`search --in body`: the papers whose full text matches, each with its best passage."""
    if not query.strip():
        raise click.UsageError("the query is empty: give a QUERY to search the full text with")
    hits = lib.fulltext.hits(query, limit, venue, year)
    st = lib.fulltext.status()
    if lib.fulltext.by_meaning and st["embedded"] < st["passages"] and not as_json:
        click.echo(
            f"note: {st['embedded']} of {st['passages']} passages are searchable by meaning; the others match "
            "by keyword only (`paperatlas fulltext embed --all` embeds them)",
            err=True,
        )
    if as_json:
        # the search envelope's keys, its hits those of the body: each with the passage it was found by
        # the rest found by their words only; by_meaning false: every passage is (the default)
        covered = {"passages": st["passages"], "embedded": st["embedded"], "by_meaning": lib.fulltext.by_meaning}
        echo_json(
            {"query": query, "in": "body", "total": len(hits), "hits": [h.to_dict() for h in hits], "coverage": covered}
        )
    else:
        for i, h in enumerate(hits, start=1):
            p, x = h.paper, h.passage
            out.print(f"{i:>2}. [bold]{p.title}[/bold]  [dim]{p.venue} {p.year or ''} · {p.id}[/dim]")
            out.print(f"    [dim]p.{x.page} · {x.section or '(untitled)'}[/dim]")
            out.print("    " + (x.text if len(x.text) <= 400 else x.text[:400].rsplit(" ", 1)[0] + " …"), markup=False)
    if not hits:
        nothing_found(
            ctx,
            f"no passage of the {st['read']} papers with a full text matches {query!r}",
            "attach PDFs with `paperatlas fulltext add ID FILE.pdf`" if not st["read"] else "try other words",
            venue=venue,
            year=year,
        )


@click.command()
@click.argument("paper_id")
@json_option
@click.pass_context
@handle_errors
def show(ctx: click.Context, paper_id: str, as_json: bool) -> None:
    """Show one paper in full.

    Example:

        paperatlas show neurips2023/NnMEadcdyD
    """
    lib = get_library(ctx)
    p = lib.get(paper_id)
    links = lib.links(p.id)
    if as_json:
        echo_json(
            {
                **p.public(),
                "aliases": lib.aliases(p.id),
                "links": links,
                "events": [e.to_dict() for e in lib.programme.events_for(p.id)],
                **lib.paper_fields(p.id),
            }
        )
        return
    out.print(f"[bold]{p.title}[/bold]" + (" [dim](title derived from the abstract)[/dim]" if p.title_derived else ""))
    meta = " · ".join(x for x in (", ".join(p.authors), f"{p.venue} {p.year or ''}".strip(), p.status) if x)
    if meta:
        out.print(meta)
    area = str(p.extra.get("primary_area") or "").strip()
    if area or p.keywords:
        out.print(" · ".join(x for x in (area, ", ".join(p.keywords)) if x), markup=False)
    from ..report.facets import paper_institutions  # only `show` reads them

    insts = paper_institutions(p.extra)
    if insts:
        out.print("affiliations: " + "; ".join(f"{n} ({c})" if c else n for n, c in insts), markup=False)
    rv = p.extra.get("reviews") or {}
    if rv.get("rating_avg") is not None:
        ratings = ", ".join(f"{r:g}" for r in rv.get("ratings") or [])
        out.print(
            f"reviews: {ratings + ' · ' if ratings else ''}mean {rv['rating_avg']}"
            + (f" · confidence {rv['confidence_avg']}" if rv.get("confidence_avg") is not None else ""),
            markup=False,
        )
    for key, label in (("citations", "citations"), ("code_url", "code"), ("project_url", "project")):
        if p.extra.get(key) not in (None, ""):
            out.print(f"{label}: {p.extra[key]}", markup=False)
    for e in lib.programme.events_for(p.id):
        out.print(event_text(e.to_dict()), markup=False)
    cite = lib.paper_fields(p.id)
    if cite.get("openalex_id"):
        out.print(citation_line(cite), markup=False)
    if cite.get("influential_cited_by"):
        out.print("influential citations in this library: " + ", ".join(cite["influential_cited_by"]), markup=False)
    out.print(f"[dim]{p.id}[/dim]")
    for label, u in lib.reading_links(p.id):
        out.print(f"{label}: {u}", markup=False)
    out.print()
    tldr = str(p.extra.get("tldr") or "").strip()
    s2_tldr = str((cite.get("semantic_scholar") or {}).get("tldr") or "").strip()
    if tldr:
        out.print(f"TL;DR: {tldr}", markup=False)
        out.print()
    elif s2_tldr:
        out.print(f"TL;DR (Semantic Scholar): {s2_tldr}", markup=False)
        out.print()
    out.print(p.abstract, markup=False)


@click.command("export", cls=FilterCommand)
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="jsonl", show_default=True)
@click.option("--ids", help="Comma-separated paper ids to export (default: all).")
@click.option("--reader", "-r", metavar="NAME", help="Only this reader's liked (starred) papers, oldest like first.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write here instead of stdout.")
@click.option("--with-vectors", is_flag=True, help="JSON/JSONL: each paper's embedding as `vector` (a list of floats).")
@click.pass_context
@handle_errors
def export_(
    ctx: click.Context,
    fmt: str,
    ids: str | None,
    reader: str | None,
    output: str | None,
    with_vectors: bool,
    **filters: Any,
) -> None:
    """Export papers as JSONL, JSON, CSV, BibTeX, Markdown, RIS or CSL-JSON (to stdout unless -o).

    Every filter of `search` and `list` applies (--venue, --year, --author, --session, ...).
    RIS and CSL-JSON import into Zotero (File > Import...) with DOI, arXiv id and abstract.

    Example:

        paperatlas export --format bibtex --venue NeurIPS -o neurips.bib

        paperatlas export --format ris --author "Percy Liang" -o liang.ris

        paperatlas export --reader alice --format json
    """
    lib = get_library(ctx)
    filtered = bool(_set(filters))
    given = [i.strip() for i in ids.split(",") if i.strip()] if ids else None
    wanted = set(given) if given is not None else None
    if reader:
        papers = lib.readers.liked(lib.readers.get(reader, create=False))
        if filtered:
            passing = {p.id for p in lib.papers(**filters)}
            papers = [p for p in papers if p.id in passing]
        if wanted is not None:
            papers = [p for p in papers if p.id in wanted]
        hint = (
            f"like papers first: `paperatlas like ID --reader {reader}`"
            if not (filtered or ids)
            else "drop the filters / --ids to export all of their liked papers"
        )
        what = f"{reader} has liked no papers" + (" that pass the filters" if filtered or ids else "")
    else:
        papers = lib.get_many(given) if given is not None else lib.papers(**filters)
        if wanted is not None and filtered:
            passing = {p.id for p in lib.papers(**filters)}
            papers = [p for p in papers if p.id in passing]
        hint = _filters_hint(lib, filters) if not ids else "`paperatlas list` shows the ids in this library"
        what = "no papers to export"
    if not papers:
        nothing_found(ctx, what, hint, reader=reader, ids=ids, **_set(filters))
    if with_vectors:
        if fmt not in ("json", "jsonl"):
            raise Fail(f"--with-vectors needs --format json or jsonl, not {fmt}", "add --format jsonl")
        vectors = lib.vectors([p.id for p in papers])
        write_output(export(papers, fmt, vectors=vectors), output, f"{len(papers)} papers with {len(vectors)} vectors")
        return
    write_output(export(papers, fmt), output, f"{len(papers)} papers")


@click.command()
@click.option("--rebuild", is_flag=True, help="Drop all stored vectors and embed everything again.")
@click.option(
    "--embedder",
    help="Embedding model (default: the library's, else minilm-tuned-r11, our fine-tuned MiniLM; "
    "minilm-int8: the base MiniLM; "
    "minilm: its fp32 document products). Retired runs of the fine-tune open the libraries they made "
    "but are no new choice.",
)
@click.option(
    "--ray",
    "ray_address",
    metavar="local|auto|ray://HOST:PORT",
    help="Spread the work over a Ray cluster: 'local' starts one on this machine, 'auto' joins the "
    "one `ray start` runs here, ray://HOST:10001 a remote one (needs paperatlas[scale]).",
)
@click.option("--workers", type=click.IntRange(1, 4096), help="Ray workers (default: one per CPU of the cluster).")
@click.option(
    "--multilingual/--no-multilingual",
    default=None,
    help="Keep (or drop) a second, multilingual index, which queries in Chinese search; a library "
    "setting: once on, every `embed` and `ingest` keeps it up to date. Costs 3-4x the default "
    "model's time.",
)
@click.pass_context
@handle_errors
def embed(
    ctx: click.Context,
    rebuild: bool,
    embedder: str | None,
    ray_address: str | None,
    workers: int | None,
    multilingual: bool | None,
) -> None:
    """Compute embeddings for papers that have none (incremental; cached on disk).

    Every batch is stored as it is made: after an interruption, run it again to resume.

    Example:

        paperatlas embed
        paperatlas embed --multilingual       # Chinese queries find English papers
        paperatlas embed --ray local --workers 2
    """
    # Flags are checked before the library is opened: a wrong flag is named even for a wrong --db.
    if workers and not ray_address:
        raise Fail("--workers is for Ray", "add --ray local (or auto, or ray://HOST:PORT)")
    lib = get_library(ctx)
    if embedder:
        check_choice(embedder, library_has=lib.embedder_name)
        lib = Library(lib.path, embedder=embedder)
        ctx.call_on_close(lib.close)
    where = f" on Ray ({ray_address})" if ray_address else ""
    with progress_bar(f"embedding with {lib.embedder.id}{where}") as update:
        if ray_address:
            from ..embed.ray_runner import embed_with_ray

            n = embed_with_ray(lib, ray_address, workers, rebuild=rebuild, progress=update)
        else:
            n = lib.embed(progress=update, rebuild=rebuild)
    if n or rebuild:
        click.echo(f"embedded {n} paper{'' if n == 1 else 's'} with {lib.embedder.id}{where}")
    else:  # "embedded 0 papers" read as a failure, above the multilingual build that follows
        click.echo(f"every paper already has its {lib.embedder.id} vector: nothing to embed{where}")
    if embedder:  # chosen by name: a reopen uses it, even when its vectors were all there
        lib.remember_embedder()
    if note := retired_note(lib.embedder_name):
        click.echo(f"note: {note}", err=True)
    if multilingual is False:
        lib.multilingual.set_enabled(False)
        click.echo("multilingual index dropped (Chinese queries search with the default model)")
    elif multilingual or lib.multilingual.enabled:
        embed_multilingual(lib)


@click.command("copy")
@click.argument("src")
@click.argument("dst")
@handle_errors
def copy_(src: str, dst: str) -> None:
    """Copy a whole library (papers, vectors, readers, likes, topics) into a new, empty one.

    Either side may be a SQLite file or a postgresql:// URL: this is how a library moves to a
    shared PostgreSQL server, and back.

    Example:

        paperatlas copy paperatlas.db postgresql://atlas@db.example.org/atlas
    """
    from ..store import redact

    if not is_postgres_url(src) and not Path(src).exists():
        raise Fail(f"no library at {src}", "check the path of the library to copy from")
    with Library(src) as a, Library(dst) as b:
        counts = a.copy_to(b)
    click.echo(
        f"copied {counts.get('papers', 0)} papers, {counts.get('vectors', 0)} vectors and "
        f"{counts.get('readers', 0)} readers from {redact(src)} to {redact(dst)}"
    )


@click.command(cls=FilterCommand)
@click.argument("query", required=False)
@click.option("--mode", type=click.Choice(list(MODES)), default="hybrid", show_default=True)
@click.option(
    "--limit",
    type=click.IntRange(0, MAX_RESULTS),
    default=10,
    show_default=True,
    help=f"At most this many hits (up to {MAX_RESULTS}; page further with --offset).",
)
@click.option("--offset", type=click.IntRange(0), default=0)
@click.option(
    "--queries",
    type=click.File("r", encoding="utf-8"),
    help="Run one query per line of this file; with --json prints one JSON line per query.",
)
@click.option(
    "--sort",
    "sort_",
    metavar="ORDER",
    callback=check_sort,
    help="Order the matching papers by ORDER instead of relevance: citations, rising (after `paperatlas enrich`).",
)
@click.option(
    "--in",
    "in_",
    type=click.Choice(["body"]),
    default=None,
    help="body: search the full text of the papers whose PDF was read, showing the passage, its section and page.",
)
@llm_options
@json_option
@click.pass_context
@handle_errors
def search(
    ctx: click.Context,
    query: str | None,
    in_: str | None,
    mode: str,
    limit: int,
    offset: int,
    queries: Any,
    sort_: str | None,
    llm_url: str | None,
    llm_model: str | None,
    as_json: bool,
    **filters: Any,
) -> None:
    """Search by keyword, by meaning, or both fused (default). "Quoted phrases" must match;
    author:"Name" keeps one author's papers. With a language model (--llm-url), a query in Chinese
    is also searched in the English the model renders it as. Every filter option narrows the search;
    without QUERY, the filters list their papers (all but --venue / --year / --status alone).

    Example:

        paperatlas search "diffusion models for proteins" --venue NeurIPS --json

        paperatlas search --author "Percy Liang" --json

        paperatlas search "robot learning" --institution Tsinghua --type oral

        paperatlas search "diffusion" --session "Poster Session 6" --day 2025-12-05

        paperatlas search "用户模拟器" --llm-url http://127.0.0.1:8080/v1
    """
    lib = get_library(ctx)
    lib.llm.configure(llm_url, llm_model)
    said = {"mode": mode, **_set(filters), "offset": offset}
    author = filters.get("author")
    if in_ != "body":  # the body search says what of it is embedded itself (_search_body)
        say_waiting(lib, mode)
    if queries is not None:
        asked = empty = 0
        noted = False
        for line in queries:
            qtext = line.rstrip("\n")
            if not qtext.strip():
                continue
            if not noted and has_cjk(qtext):
                say_crosslingual(lib, qtext, mode)
                noted = True
            hits = lib.search(qtext, mode, limit, offset, **filters)
            asked += 1
            empty += not hits
            if as_json:
                click.echo(json.dumps(search_answer(lib, hits), ensure_ascii=False))
            else:
                out.print(f"[bold]# {qtext}[/bold]")
                print_hits(hits)
                if not hits:
                    out.print("   [dim](no results)[/dim]")
        if empty:
            click.echo(f"{empty} of {asked} queries found nothing", err=True)
        if asked == 0 or empty == asked:
            nothing_found(
                ctx,
                "no query found any paper" if asked else "the file holds no queries",
                _filters_hint(lib, filters, offset, mode),
                **said,
            )
        return
    if not (query or "").strip() and not lib.filters.lists_alone(lib.filters.check(filters)):
        alone = " / ".join(option_name(f.name) for f in lib.filters if f.alone)
        raise click.UsageError(
            ("the query is empty: " if query is not None else "") + f"give a QUERY, {alone} or --queries FILE"
        )
    if in_ == "body":
        _search_body(ctx, lib, query or "", limit, filters.get("venue"), filters.get("year"), as_json)
        return
    if query:
        say_crosslingual(lib, query, mode)
    hits = lib.search(query or "", mode, limit, offset, sort=sort_, **filters)
    what = (
        f"no papers match {query!r}"
        if query
        else f"no papers by an author matching {author!r}"
        if author
        else "no papers pass the filters"
    )
    if query and author:
        what += f" by an author matching {author!r}"
    hint = _filters_hint(lib, filters, offset, mode)
    if hits.no_good_match:
        what = f"no good match for {query!r}: no paper is close to it in meaning or holds most of its words" + (
            f" (by an author matching {author!r})" if author else ""
        )
        hint = "try other words, or --mode keyword to list papers that share any word with it"
    if hits.read_as and not as_json:
        # the model's reading is part of why these hits came: show it, so a wrong one can be seen
        click.echo(f"also searched in English as: {hits.read_as}", err=True)
    show_hits(ctx, hits, as_json, what, hint, lib, **said)
    if hits and not as_json:
        click.echo(f"{_shown(hits.total, offset, len(hits))}{' or more' if hits.more else ''}", err=True)


def citation_line(c: dict[str, Any]) -> str:
    """ "cited by 1,234 (2025: 30, 2024: 118, 2023: 142) · cites 3 in this library · cited by 2 in this library"."""
    parts = []
    if c.get("cited_by_count") is not None:
        years = ", ".join(
            f"{y['year']}: {y['cited_by_count']}"
            for y in sorted(c.get("counts_by_year") or [], key=lambda y: -y["year"])[:3]
        )
        parts.append(f"cited by {c['cited_by_count']:,}" + (f" ({years})" if years else ""))
    parts.append(f"cites {len(c.get('references') or [])} in this library")
    parts.append(f"cited by {len(c.get('cited_by') or [])} in this library")
    return " · ".join(parts) + f" · OpenAlex {c['openalex_id']}"


@click.command()
@click.argument("paper_id")
@click.option(
    "--limit",
    type=click.IntRange(0, MAX_RESULTS),
    default=10,
    show_default=True,
    help=f"At most this many papers (up to {MAX_RESULTS}).",
)
@json_option
@click.pass_context
@handle_errors
def similar(ctx: click.Context, paper_id: str, limit: int, as_json: bool) -> None:
    """Papers most similar to one paper (by embedding).

    Example:

        paperatlas similar neurips2023/NnMEadcdyD --limit 5
    """
    lib = get_library(ctx)
    show_hits(
        ctx,
        lib.similar(paper_id, limit),
        as_json,
        f"no papers near {paper_id!r}",
        "related papers need embeddings: `paperatlas embed`" if not lib.stats()["vectors"] else "",
    )


COMMANDS = [ingest, stats, list_, show, export_, embed, copy_, search, similar]
