"""`paperatlas fulltext add | show | status`: the body of papers, read from their PDFs."""

from __future__ import annotations

from typing import Any

import click

from .. import settings

from .common import (
    EXIT_BAD_INPUT,
    EXIT_EMPTY,
    EXIT_ERROR,
    EXIT_WARNINGS,
    Fail,
    FilterCommand,
    echo_json,
    get_library,
    handle_errors,
    json_option,
    out,
    progress_bar,
)


@click.group("fulltext")
def fulltext() -> None:
    """The full text of papers: attach a PDF, read it, show it, count what could not be read.

    Example:

        paperatlas fulltext add 2106.09685 ~/Downloads/lora.pdf && paperatlas fulltext show 2106.09685
    """


@fulltext.command("add")
@click.argument("paper_id")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--any-title", is_flag=True, help="Attach even when page 1 does not carry the paper's title.")
@json_option
@click.pass_context
@handle_errors
def add_cmd(ctx: click.Context, paper_id: str, file: str, any_title: bool, as_json: bool) -> None:
    """Attach FILE (a PDF) to the paper PAPER_ID and read its sections, captions and references.

    Example:

        paperatlas fulltext add 2106.09685 ~/Downloads/lora.pdf
    """
    lib = get_library(ctx)
    r = lib.fulltext.add(paper_id, file, check_title=not any_title)
    if as_json:
        echo_json(r.to_dict())
    elif r.ok:
        out.print(
            f"{r.id}: read {r.pages} pages: {r.sections} sections, {r.passages} passages, {r.captions} captions, "
            f"{r.references} references ({r.references_in_library} in the library)"
            + (f"; {r.embedded} passages embedded for search by meaning" if r.embedded else "")
        )
    if not r.ok:
        raise Fail(f"{r.id}: not read ({r.reason}): {r.message}\nFix: {r.fix}", EXIT_BAD_INPUT)


@fulltext.command("show")
@click.argument("paper_id")
@json_option
@click.pass_context
@handle_errors
def show_cmd(ctx: click.Context, paper_id: str, as_json: bool) -> None:
    """Print a paper's full text: its sections with their pages, captions and references.

    Example:

        paperatlas fulltext show 2106.09685 --json
    """
    lib = get_library(ctx)
    view = lib.fulltext.show(paper_id)
    if as_json:
        echo_json(view.to_dict())
        return
    out.print(f"[bold]{view.title}[/bold] ({view.id}, {view.pages} pages)", markup=True)
    for s in view.sections:
        head = " ".join(x for x in (s["number"], s["heading"]) if x) or "(untitled)"
        out.print(f"\n## {head}  [dim](p.{s['page']})[/dim]", markup=True)
        for p in s["paragraphs"]:
            out.print(p["text"], markup=False)
    if view.captions:
        out.print("\n## Captions")
        for c in view.captions:
            out.print(f"(p.{c['page']}) {c['text']}", markup=False)
    if view.references:
        out.print(f"\n## References ({len(view.references)})")
        for r in view.references:
            mark = f" -> {r['id']}" if r["id"] else ""
            out.print(f"- {r['raw']}{mark}", markup=False)


@fulltext.command("status")
@click.option("--failed", is_flag=True, help="List each paper that could not be read, with the reason and the fix.")
@json_option
@click.pass_context
@handle_errors
def status_cmd(ctx: click.Context, failed: bool, as_json: bool) -> None:
    """How many papers have their full text, and why the others could not be read.

    Example:

        paperatlas fulltext status --failed
    """
    lib = get_library(ctx)
    st = lib.fulltext.status()
    if failed:
        st["failures"] = lib.fulltext.failures()
    if as_json:
        echo_json(st)
        return
    how = (
        f"{st['embedded']} of them searchable by meaning"
        if lib.fulltext.by_meaning
        else "searched by keyword; PAPERATLAS_FULLTEXT_SEMANTIC_WEIGHT above 0 adds meaning"
    )
    out.print(f"{st['read']} of {st['papers']} papers have their full text ({st['passages']} passages; {how})")
    for reason, n in sorted(st["counts"].items()):
        if reason != "read":
            out.print(f"  {reason}: {n}  (fix: {st['fixes'].get(reason, '')})", markup=False)
    for f in st.get("failures", []):
        out.print(f"  {f['paper_id']}: {f['reason']}: {f['message']}", markup=False)
    if not st["read"] and not st["failed"]:
        raise Fail("no paper has its full text yet: `paperatlas fulltext add ID FILE.pdf`", EXIT_EMPTY)


@fulltext.command("add-folder")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option(
    "--limit", type=click.IntRange(1, 100_000), default=5000, show_default=True, help="At most this many PDFs."
)
@click.option("--redo", is_flag=True, help="Read again the PDFs of papers already read.")
@json_option
@click.pass_context
@handle_errors
def add_folder_cmd(ctx: click.Context, folder: str, limit: int, redo: bool, as_json: bool) -> None:
    """Attach every PDF in FOLDER (and below: a Zotero storage folder, a download folder) to the
    library paper it is, told by the arXiv id, DOI or title on its first page. The PDFs that match
    no paper are listed; `paperatlas ingest FILE.pdf` makes papers of them.

    Example:

        paperatlas fulltext add-folder ~/Zotero/storage
    """
    lib = get_library(ctx)
    rep = lib.fulltext.add_folder(folder, limit, redo)
    if as_json:
        echo_json(rep.to_dict())
    else:
        out.print(
            f"{rep.files} PDFs: {len(rep.matched)} attached, {len(rep.already)} already read, "
            f"{len(rep.unmatched)} match no paper, {len(rep.failed)} could not be read",
            markup=False,
        )
        for m in rep.matched:
            out.print(f"  {m['file']} -> {m['id']} (by {m['by']}, {m['pages']} pages)", markup=False)
        for u in rep.unmatched:
            out.print(f"  {u['file']}: no paper titled {u['title']!r}", markup=False)
        for f in rep.failed:
            out.print(f"  {f['file']}: {f['reason']}: {f['message']}", markup=False)
        for n in rep.notes:
            click.echo(f"note: {n}", err=True)
        if rep.unmatched:
            click.echo("make papers of the unmatched ones with `paperatlas ingest FILE.pdf ...`", err=True)
    if not rep.files:
        raise Fail(f"no PDF in {folder}", EXIT_EMPTY)


@fulltext.command("fetch", cls=FilterCommand, skip_filters=("fulltext",))
@click.argument("paper_ids", nargs=-1)
@click.option("--all", "all_papers", is_flag=True, help="Every paper of the library.")
@click.option("--saved", is_flag=True, help="The papers the reader saved (starred).")
@click.option("--agenda", is_flag=True, help="The papers on the reader's agenda (starred or tagged in the programme).")
@click.option("--reader", "-r", default=None, metavar="NAME", envvar=settings.env("reader"), help="Whose saved papers.")
@click.option("--redo", is_flag=True, help="Fetch again the papers already read.")
@click.option(
    "--delay",
    type=click.FloatRange(0, 600),
    default=1.0,
    show_default=True,
    help="Seconds between two requests to a host (at least; arXiv asks for 3).",
)
@click.option(
    "--hosts",
    "workers",
    type=click.IntRange(1, 32),
    default=None,
    help="Hosts to download from at once, each one request at a time [default: $PAPERATLAS_FULLTEXT_FETCH_HOSTS or 4].",
)
@click.option(
    "--deadline",
    type=click.FloatRange(1, 3600),
    default=120.0,
    show_default=True,
    help="Seconds one PDF may take to arrive, however slowly it trickles.",
)
@json_option
@click.pass_context
@handle_errors
def fetch_cmd(
    ctx: click.Context,
    paper_ids: tuple[str, ...],
    all_papers: bool,
    saved: bool,
    agenda: bool,
    reader: str | None,
    redo: bool,
    delay: float,
    workers: int | None,
    deadline: float,
    as_json: bool,
    **filters: Any,
) -> None:
    """Download the PDFs of papers from their own links (the record's PDF, OpenReview, arXiv) and read
    them: the papers named, saved or on the agenda, or those every filter of `search` keeps (--venue,
    --year, --author ...). Several hosts are asked at once, each politely (one request at a time, a
    pause between two, Retry-After honoured). A run that was stopped resumes: papers already read
    are skipped.

    Example:

        paperatlas fulltext fetch --venue ICLR --year 2025

        paperatlas fulltext fetch --saved
    """
    from ..fulltext.reader import MAX_FILE_BYTES
    from ..http_client import HttpClient

    lib = get_library(ctx)
    named = saved or agenda
    if saved:
        paper_ids = (*paper_ids, *(p.id for p in lib.readers.liked(reader)))
    if agenda:
        # what they starred or tagged, not what is only recommended
        paper_ids = (*paper_ids, *(pid for pid, c in lib.programme.candidates(reader, 0).items() if c[2]))
    paper_ids = tuple(dict.fromkeys(paper_ids))
    if named and not paper_ids:
        raise Fail("the reader has saved no paper yet" if saved else "the reader's agenda is empty", EXIT_EMPTY)
    client = HttpClient(delay=delay, total_timeout=deadline, max_bytes=MAX_FILE_BYTES, retries=3)
    with progress_bar("fetching PDFs") as update:

        def progress(done: int, total: int, pid: str, state: str) -> None:
            update(done, total)
            if state not in ("read", "skipped") and not as_json:
                click.echo(f"{pid}: {state}", err=True)

        rep = lib.fulltext.fetch(
            paper_ids, all_papers=all_papers, redo=redo, client=client, on_progress=progress, workers=workers, **filters
        )
    if as_json:
        echo_json(rep.to_dict())
    else:
        failed = ", ".join(f"{k} {n}" for k, n in sorted(rep.failed.items()))
        out.print(
            f"{rep.read} read, {rep.skipped} already read, {rep.no_link} without a PDF link"
            + (f", not read: {failed}" if failed else "")
            + (f", {rep.set_aside_papers} left for the next run" if rep.set_aside else "")
            + f" ({rep.bytes / 1e6:.1f} MB in {rep.seconds:.0f} s from {rep.hosts} hosts)",
            markup=False,
        )
        for h in rep.set_aside:
            out.print(f"set aside {h.host} ({h.papers} papers left): {h.message}\nFix: {h.fix}", markup=False)
        if rep.failed:
            out.print("`paperatlas fulltext status --failed` lists each with the reason and the fix", markup=False)
    if rep.failed or rep.set_aside:  # what was read is stored; each failure is recorded with its reason
        ctx.exit(EXIT_WARNINGS if rep.read else EXIT_ERROR)


@fulltext.command("embed")
@click.argument("paper_ids", nargs=-1)
@click.option("--all", "all_papers", is_flag=True, help="Every paper whose full text was read.")
@click.option("--saved", is_flag=True, help="The papers the reader saved (starred).")
@click.option("--reader", "-r", default=None, metavar="NAME", envvar=settings.env("reader"), help="Whose saved papers.")
@json_option
@click.pass_context
@handle_errors
def embed_cmd(
    ctx: click.Context, paper_ids: tuple[str, ...], all_papers: bool, saved: bool, reader: str | None, as_json: bool
) -> None:
    """Make the passages of papers' bodies searchable by meaning (by keyword they are at once). A PDF
    attached by hand, and a fetched paper a reader saved, are embedded when they are read; this
    embeds the rest. Stopping is safe: the same command resumes.

    Example:

        paperatlas fulltext embed --saved

        paperatlas fulltext embed --all
    """
    lib = get_library(ctx)
    if saved:
        paper_ids = (*paper_ids, *(p.id for p in lib.readers.liked(reader)))
        if not paper_ids:
            raise Fail("the reader has saved no paper yet", EXIT_EMPTY)
    if not paper_ids and not all_papers:
        raise click.UsageError("which papers? none was named: give paper ids, --saved or --all")
    ids = list(paper_ids) or None
    with progress_bar("embedding passages") as update:
        rep = lib.fulltext.embed(ids, progress=update)
    counts = lib.fulltext.vectors.counts()
    if as_json:
        echo_json({**rep.to_dict(), "coverage": counts})
        return
    out.print(
        f"{rep.passages} passages of {rep.papers} papers embedded; {counts['embedded']} of "
        f"{counts['passages']} passages are searchable by meaning",
        markup=False,
    )
    if not lib.fulltext.by_meaning:  # embedded on request, but no search reads them at weight 0
        click.echo(
            "note: passages are searched by keyword alone (the default, docs/fulltext.md): set "
            "PAPERATLAS_FULLTEXT_SEMANTIC_WEIGHT above 0 (e.g. 0.1) for meaning to count",
            err=True,
        )


COMMANDS = [fulltext]
