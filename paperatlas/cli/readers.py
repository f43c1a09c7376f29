"""`paperatlas readers / like / dislike / tag / note / import-reader`: who reads, and what they did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .common import (
    reader_option,
    Fail,
    echo_json,
    get_library,
    handle_errors,
    json_option,
    nothing_found,
    out,
    reader_flag,
)
from ..refs import FORMATS as REF_FORMATS


@click.group("readers", invoke_without_command=True)
@json_option
@click.pass_context
@handle_errors
def readers(ctx: click.Context, as_json: bool) -> None:
    """List the readers of this library (see `readers add`).

    Example:

        paperatlas readers --json
    """
    if ctx.invoked_subcommand:
        return
    lib = get_library(ctx)
    rows = []
    for r in lib.readers.all():
        fb = lib.readers.feedback(r)
        rows.append(
            {**r.public(), "likes": sum(f.kind == "like" for f in fb), "dislikes": sum(f.kind == "dislike" for f in fb)}
        )
    if as_json:
        echo_json(rows)
        return
    for d in rows:
        out.print(f"{d['name']}  [dim]{d['likes']} likes, {d['dislikes']} not interested[/dim]")
    if not rows:
        nothing_found(
            ctx, "no readers yet", "`paperatlas readers add NAME`, or just `paperatlas like ID --reader NAME`"
        )


@readers.command("add")
@click.argument("name")
@click.pass_context
@handle_errors
def readers_add(ctx: click.Context, name: str) -> None:
    """Add a reader and print their API token (needed for HTTP writes as that reader).

    Example:

        paperatlas readers add alice
    """
    lib = get_library(ctx)
    if lib.readers.find(name.strip()) is not None:
        raise Fail(f"reader {name!r} exists already\nFix: pick another name, or use it as is with --reader {name}")
    r = lib.readers.get(name)
    click.echo(f"added reader {r.name}; API token: {r.token}")


@readers.command("token")
@click.argument("name")
@click.option(
    "--reset", is_flag=True, help="Make a new token: the old one, its web sessions and feed URLs stop working."
)
@click.pass_context
@handle_errors
def readers_token(ctx: click.Context, name: str, reset: bool) -> None:
    """Print a reader's secret token: it signs them in on the web (/signin) and scripts send it
    as `Authorization: Bearer TOKEN`.

    Example:

        paperatlas readers token alice
    """
    lib = get_library(ctx)
    r = lib.readers.get(name, create=False)
    click.echo(lib.readers.reset_token(r) if reset else r.token)


def _feedback(kind: str, label: str) -> Any:
    @click.argument("paper_ids", nargs=-1, required=True)
    @reader_option
    @click.option("--undo", is_flag=True, help=f"Clear the {label} mark instead.")
    @click.pass_context
    @handle_errors
    def cmd(ctx: click.Context, paper_ids: tuple[str, ...], reader: str | None, undo: bool) -> None:
        lib = get_library(ctx)
        lib.readers.set_feedback(reader, list(paper_ids), kind, not undo)
        click.echo(f"{'cleared' if undo else 'marked'} {len(paper_ids)} as {label} for {lib.readers.get(reader).name}")

    return cmd


like = click.command("like")(_feedback("like", "liked"))
like.help = """Like (star) papers: they count as positives for your recommendations.

    Example:

        paperatlas like neurips2023/NnMEadcdyD --reader alice
    """
dislike = click.command("dislike")(_feedback("dislike", "not interested"))
dislike.help = """Mark papers "not interested": similar papers move down.

    Example:

        paperatlas dislike iclr2024/abc123 --reader alice
    """


def _is_paper(lib: Any, pid: str) -> bool:
    return bool(lib.has(pid))


def _tag_arguments(lib: Any, tag: str, paper_ids: tuple[str, ...]) -> tuple[str, list[str]]:
    """(tag, paper ids) from `tag TAG ID...`, or from `tag ID... TAG` (the order people also type).

    An id that is no paper is named by its position, with the usage, instead of the bare
    "no paper with id 'to-read'" a swapped order would otherwise give."""
    ids = list(paper_ids)
    if ids and _is_paper(lib, tag) and not _is_paper(lib, ids[-1]):
        tag, ids = ids[-1], [tag, *ids[:-1]]
    args = [tag, *paper_ids]
    for pid in ids:
        if not _is_paper(lib, pid):
            pos = args.index(pid) + 1
            raise Fail(
                f"argument {pos} ({pid!r}) is no paper id in this library\n"
                f"Fix: `paperatlas tag TAG ID...`, e.g. `paperatlas tag to-read {_example_id(lib)}`; "
                "`paperatlas list` shows the ids"
            )
    return tag, ids


def _example_id(lib: Any) -> str:
    first = lib.papers(limit=1)
    return first[0].id if first else "ID"


@click.command("tag")
@click.argument("tag")
@click.argument("paper_ids", nargs=-1)
@reader_option
@click.option("--remove", is_flag=True, help="Remove the tag from these papers.")
@json_option
@click.pass_context
@handle_errors
def tag(
    ctx: click.Context, tag: str, paper_ids: tuple[str, ...], reader: str | None, remove: bool, as_json: bool
) -> None:
    """Tag papers (`tag TAG ID...`; `tag ID... TAG` works too); with no paper ids, list the
    papers carrying TAG.

    Example:

        paperatlas tag to-read neurips2023/NnMEadcdyD
    """
    lib = get_library(ctx)
    if paper_ids:
        tag, ids = _tag_arguments(lib, tag, paper_ids)
        lib.readers.tag(reader, ids, tag, remove)
        r = lib.readers.get(reader)
        click.echo(
            f"{'untagged' if remove else 'tagged'} {len(ids)} paper{'' if len(ids) == 1 else 's'} {tag!r} for {r.name}"
        )
        return
    r = lib.readers.get(reader)
    ids = [pid for pid, tags in lib.readers.tags(r).items() if tag in tags]
    papers = lib.get_many(ids)
    if as_json:
        echo_json([{"id": p.id, "title": p.title} for p in papers])
    else:
        for p in papers:
            out.print(f"{p.id}  {p.title}")
    if not papers:
        hint = (
            f"{tag!r} is a paper id: to tag it, `paperatlas tag TAG {tag}{reader_flag(reader)}`"
            if _is_paper(lib, tag)
            else f"tag one: `paperatlas tag {tag} ID{reader_flag(reader)}`"
        )
        nothing_found(ctx, f"no papers tagged {tag!r} by {r.name}", hint)


@click.command("note")
@click.argument("paper_id")
@click.argument("text", required=False, default="")
@reader_option
@click.pass_context
@handle_errors
def note(ctx: click.Context, paper_id: str, text: str, reader: str | None) -> None:
    """Set your note on a paper (an empty TEXT clears it; no TEXT shows it).

    Example:

        paperatlas note neurips2023/NnMEadcdyD "read section 3 again"
    """
    lib = get_library(ctx)
    if text:
        lib.readers.note(reader, paper_id, text)
        click.echo("saved")
        return
    r = lib.readers.get(reader)
    click.echo(lib.readers.notes(r).get(lib.get(paper_id).id, ""))


@click.command("import-reader")
@click.argument("file", metavar="FILE|zotero:users/ID", required=False)
@click.option(
    "--author",
    metavar="ID",
    help="Instead of a FILE: a researcher's own works in OpenAlex (OpenAlex id A… or ORCID); the library "
    "papers they wrote or cite are liked (`paperatlas enrich` first, so the library's papers are matched).",
)
@click.option(
    "--bibtex",
    "own_bib",
    metavar="FILE.bib",
    type=click.Path(dir_okay=False),
    help="Instead of a FILE: a BibTeX file of your own papers; they become your profile (stored apart "
    "from the library's papers, embedded, read by `recommend`), whether the library has them or not.",
)
@click.option("--base-url", metavar="URL", help="--author: ask this OpenAlex mirror instead of api.openalex.org.")
@click.option("--no-embed", is_flag=True, help="--author / --bibtex: store your papers, embed them later.")
@reader_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", *REF_FORMATS]),
    default="auto",
    show_default=True,
    help="The file's format (auto: detected from its content).",
)
@json_option
@click.pass_context
@handle_errors
def import_reader(
    ctx: click.Context,
    file: str | None,
    author: str | None,
    own_bib: str | None,
    base_url: str | None,
    no_embed: bool,
    reader: str | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Bootstrap a reader from their own library: like every paper of a Zotero export (CSL-JSON, RIS,
    BibTeX/BibLaTeX, Zotero RDF) or of a list of titles / ids (one a line) that is in this library,
    and list the entries that are not. Matches by DOI, arXiv id, URL, then title. `zotero:users/ID`
    (or `zotero:groups/ID`) reads the library through the Zotero web API, with $ZOTERO_API_KEY.

    Example:

        paperatlas import-reader my-library.json --reader alice

        paperatlas import-reader my-papers.bib --reader alice

        ZOTERO_API_KEY=... paperatlas import-reader zotero:users/475425 --reader alice

        paperatlas import-reader --author 0000-0001-6187-6610 --reader alice

        paperatlas import-reader --bibtex my-own-papers.bib --reader alice

    With --author (an OpenAlex author id or ORCID) or --bibtex, the researcher's own papers become
    the reader's profile: recommendations follow them before a single paper is starred.
    """
    from ..refs.zotero_api import is_spec

    if sum(x is not None for x in (file, author, own_bib)) != 1:
        raise click.UsageError("give one of: a FILE (or zotero:users/ID), --author ID, --bibtex FILE.bib")
    if author is not None:
        _import_author(ctx, author, base_url, reader, as_json, not no_embed)
        return
    if own_bib is not None:
        if not Path(own_bib).is_file():
            raise Fail(f"no file {own_bib}\nFix: give the BibTeX file of your own papers")
        _own_report(ctx, get_library(ctx).own_papers.import_bibtex(reader, own_bib, embed=not no_embed), as_json)
        return
    assert file is not None

    if not is_spec(file) and not Path(file).is_file():
        raise Fail(
            f"no file {file}"
            + (" (a folder)" if Path(file).exists() else "")
            + "\nFix: give a Zotero export (CSL JSON, RIS, BibTeX, Zotero RDF), a list, or zotero:users/ID"
        )
    lib = get_library(ctx)
    report = lib.readers.import_file(reader, file, None if fmt == "auto" else fmt)
    if as_json:
        echo_json(report.to_dict())
    else:
        click.echo(report.summary())
        for e, pid, how in report.matched:
            click.echo(f"  liked {pid}  ({how}: {e[:80]})")
        for e in report.unmatched:
            click.echo(f"  not in the library: {e[:100]}")
    if not report.matched:
        nothing_found(
            ctx,
            f"none of the entries of {file} is in this library ({lib.count()} papers)",
            "ingest the list those papers come from first, then import again",
            reader=reader,
        )


def _own_report(ctx: click.Context, report: Any, as_json: bool, extra: dict[str, Any] | None = None) -> None:
    """Print what an import of a reader's own papers did; exit 4 when none was stored."""
    if as_json:
        echo_json({**report.to_dict(), **(extra or {})})
    else:
        click.echo(report.summary())
        for line in report.skipped[:20]:
            click.echo(f"  skipped {line}")
        for note in report.notes:
            click.echo(note, err=True)
    if not (report.new or report.updated):
        nothing_found(
            ctx,
            f"no paper of {report.source} could be kept as {report.reader}'s own",
            "check the author id (openalex.org/authors/A..., or an ORCID) or the BibTeX file's entries",
            reader=report.reader,
        )


def _import_author(
    ctx: click.Context, author: str, base_url: str | None, reader: str | None, as_json: bool, embed: bool
) -> None:
    """A researcher's works in OpenAlex become the reader's own papers (their profile); the library
    papers they wrote or cite are liked too."""
    lib = get_library(ctx)
    report = lib.own_papers.import_author(reader, author, base_url=base_url, embed=embed)
    found = lib.citations.author_papers(author, base_url=base_url)
    ids = found.own + found.cited
    if ids:
        lib.readers.set_feedback(reader, ids, "like")
    if as_json:
        echo_json({**found.to_dict(), "liked": ids, "own_papers": report.to_dict()})
    else:
        click.echo(report.summary() + " (their profile)")
        click.echo(
            f"{found.works} works of {author} in OpenAlex: {len(found.own)} in this library, "
            f"{len(found.cited)} library papers they cite; {len(ids)} liked"
        )
        for pid in found.own:
            click.echo(f"  liked {pid}  (their work)")
        for pid in found.cited:
            click.echo(f"  liked {pid}  (cited by {found.votes.get(pid, 0)} of their works)")
        for note in report.notes:
            click.echo(note, err=True)
    if not ids and not (report.new or report.updated):
        nothing_found(
            ctx,
            f"OpenAlex lists no works of {author}",
            "check the id at openalex.org/authors (A...) or orcid.org; to match the library's papers to "
            "OpenAlex first, run `paperatlas enrich --all`",
            reader=reader,
        )


COMMANDS = [readers, like, dislike, tag, note, import_reader]
