"""`paperatlas recommend / profile / triage / group / digest`: recommendations for the readers."""

from __future__ import annotations

from typing import Any

import click

from .. import settings
from .common import (
    FilterCommand,
    reader_option,
    echo_json,
    get_library,
    handle_errors,
    hit_rows,
    json_option,
    nothing_found,
    option_name,
    out,
    print_hits,
    reader_flag,
    show_hits,
    write_output,
)
from ..i18n import LANGUAGES, language
from ..recommend.base import RECOMMENDERS
from ..recommend.digest import FORMATS
from ..recommend.groups import METHODS


@click.command("recommend", cls=FilterCommand)
@reader_option
@click.option(
    "--method", type=click.Choice(RECOMMENDERS.names()), default="default", show_default=True, help="Which recommender."
)
@click.option("--limit", type=int, default=10, show_default=True)
@click.option("--offset", type=int, default=0)
@click.option("--since", metavar="DATE", help="Only papers added to the library since this date (YYYY-MM-DD).")
@json_option
@click.pass_context
@handle_errors
def recommend(
    ctx: click.Context,
    reader: str | None,
    method: str,
    limit: int,
    offset: int,
    since: str | None,
    as_json: bool,
    **filters: Any,
) -> None:
    """Papers for you, best first, each saying why (from your likes, profile and preferences).

    Every filter of `search` and `list` applies (--venue, --year, --author, --session, ...).

    Example:

        paperatlas recommend --reader alice --limit 5 --json

        paperatlas recommend --venue NeurIPS --session "Poster Session 6"
    """
    lib = get_library(ctx)
    filters = {k: v for k, v in filters.items() if v is not None}
    hits = lib.recommend.for_reader(reader, limit, method, offset, since=since, **filters)
    given = [option_name(k) for k in filters] + ["--since"] * bool(since) + ["--offset"] * bool(offset)
    hint = (
        f"drop {' / '.join(given)} to look at the whole library"
        if given
        else f"like a few papers first: `paperatlas like ID{reader_flag(reader)}`, "
        f"or `paperatlas triage{reader_flag(reader)}`"
    )
    show_hits(
        ctx,
        hits,
        as_json,
        "no recommendations",
        hint,
        reader=reader,
        method=method,
        since=since,
        **filters,
        offset=offset,
    )


def _print_profile(p: dict[str, Any], reader: str | None = None) -> None:
    out.print(
        f"[bold]{p['reader']}[/bold]: {p['likes']} likes, {p['dislikes']} not interested, {p['choices']} A/B choices"
    )
    if p.get("own_papers"):
        out.print(f"{p['own_papers']} of your own papers count as your first likes (import-reader --author / --bibtex)")
    if p["preferences"]:
        out.print(f"preferences: {p['preferences']}")
    for it in p["interests"]:
        state = " [red](removed)[/red]" if it["removed"] else ""
        out.print(f"\n[bold]{it['id']}[/bold] {it['label']}{state}  [dim]{it['papers']} papers[/dim]")
        if it["phrases"]:
            out.print(f"  key phrases: {', '.join(it['phrases'])}")
        if it["added"]:
            out.print(f"  your phrases: {', '.join(it['added'])}")
        if it["muted"]:
            out.print(f"  muted: {', '.join(it['muted'])}")
        for ex in it["examples"]:
            out.print(f"  - {ex['title']} [dim]{ex['id']}[/dim]")
    if not p["interests"] and not p.get("own_papers"):
        out.print(
            f"no interests yet: like a few papers, or `paperatlas profile add-phrase 'diffusion models'"
            f"{reader_flag(reader)}`"
        )


@click.group("profile", invoke_without_command=True)
@reader_option
@json_option
@click.pass_context
@handle_errors
def profile(ctx: click.Context, reader: str | None, as_json: bool) -> None:
    """Show your profile: the interests that rank your recommendations. Edit it with the
    subcommands; every edit changes the ranking.

    Example:

        paperatlas profile --reader alice
    """
    ctx.ensure_object(dict)["reader"] = reader
    if ctx.invoked_subcommand:
        return
    p = get_library(ctx).recommend.profile(reader)
    echo_json(p) if as_json else _print_profile(p, reader)


def _edit(ctx: click.Context, reader: str | None, as_json: bool, **edits: Any) -> None:
    reader = reader or ctx.obj.get("reader")
    p = get_library(ctx).recommend.edit_profile(reader, **edits)
    echo_json(p) if as_json else _print_profile(p, reader)


def _edit_command(name: str, help_text: str, *args: Any) -> Any:
    def deco(f: Any) -> Any:
        f = json_option(reader_option(click.pass_context(handle_errors(f))))
        for a in reversed(args):
            f = a(f)
        return profile.command(name, help=help_text)(f)

    return deco


@_edit_command(
    "remove",
    """Switch an interest off (its likes stop counting).

    Example:

        paperatlas profile remove i2""",
    click.argument("interest"),
)
def profile_remove(ctx: click.Context, interest: str, reader: str | None, as_json: bool) -> None:
    _edit(ctx, reader, as_json, remove=interest)


@_edit_command(
    "restore",
    """Switch a removed interest back on.

    Example:

        paperatlas profile restore i2""",
    click.argument("interest"),
)
def profile_restore(ctx: click.Context, interest: str, reader: str | None, as_json: bool) -> None:
    _edit(ctx, reader, as_json, restore=interest)


@_edit_command(
    "add-phrase",
    """Add a phrase to an interest, or as a new interest of its own.

    Example:

        paperatlas profile add-phrase "graph neural networks" --interest i1""",
    click.argument("phrase"),
    click.option("--interest", help="Interest id (default: a new interest)."),
)
def profile_add_phrase(
    ctx: click.Context, phrase: str, interest: str | None, reader: str | None, as_json: bool
) -> None:
    _edit(ctx, reader, as_json, add_phrase=phrase, interest=interest)


@_edit_command(
    "remove-phrase",
    """Drop a phrase you added, or mute a key phrase of an interest.

    Example:

        paperatlas profile remove-phrase benchmark --interest i1""",
    click.argument("phrase"),
    click.option("--interest", required=True, help="Interest id."),
)
def profile_remove_phrase(ctx: click.Context, phrase: str, interest: str, reader: str | None, as_json: bool) -> None:
    _edit(ctx, reader, as_json, remove_phrase=phrase, interest=interest)


@_edit_command(
    "rename",
    """Give an interest your own label.

    Example:

        paperatlas profile rename i1 "LLM evaluation\"""",
    click.argument("interest"),
    click.argument("label"),
)
def profile_rename(ctx: click.Context, interest: str, label: str, reader: str | None, as_json: bool) -> None:
    _edit(ctx, reader, as_json, rename=label, interest=interest)


@_edit_command(
    "preferences",
    """Set your free-text preferences; they steer the ranking.

    Example:

        paperatlas profile preferences "more theory, fewer benchmark papers\"""",
    click.argument("text"),
)
def profile_preferences(ctx: click.Context, text: str, reader: str | None, as_json: bool) -> None:
    _edit(ctx, reader, as_json, preferences=text)


@click.group("triage", invoke_without_command=True)
@reader_option
@json_option
@click.pass_context
@handle_errors
def triage(ctx: click.Context, reader: str | None, as_json: bool) -> None:
    """ "A or B?": print the next pair to compare; answer with `triage choose WINNER LOSER`,
    or `triage neither A B` when you want neither (that teaches as much as a choice).

    Example:

        paperatlas triage --reader alice
    """
    ctx.ensure_object(dict)["reader"] = reader
    if ctx.invoked_subcommand:
        return
    lib = get_library(ctx)
    pair = lib.recommend.triage_pair(reader)
    if pair is None and lib.count() < 2:  # "every paper has been judged" would be false on an empty library
        nothing_found(
            ctx,
            f"the library has {lib.count()} paper(s): triage needs at least two",
            "add papers first: `paperatlas ingest FILE`",
            reader=reader,
        )
    if pair is None:
        nothing_found(
            ctx,
            "no pair left to compare: every paper has been judged",
            f"see your list: `paperatlas recommend{reader_flag(reader)}`",
            reader=reader,
        )
    assert pair is not None
    if as_json:
        echo_json([{"id": p.id, "title": p.title, "abstract": p.abstract} for p in pair])
        return
    for label, p in zip("AB", pair):
        out.print(f"[bold]{label}[/bold]: {p.title}  [dim]{p.id}[/dim]")
        out.print(f"   {p.abstract[:400]}{'…' if len(p.abstract) > 400 else ''}\n")
    a, b = pair
    rf = reader_flag(reader)
    out.print(
        f"answer: paperatlas triage choose {a.id} {b.id}{rf}   (or {b.id} {a.id};"
        f" neither: paperatlas triage neither {a.id} {b.id}{rf})"
    )


@triage.command("choose")
@click.argument("winner")
@click.argument("loser")
@reader_option
@click.pass_context
@handle_errors
def triage_choose(ctx: click.Context, winner: str, loser: str, reader: str | None) -> None:
    """Record that you prefer WINNER to LOSER.

    Example:

        paperatlas triage choose iclr2024/aaa neurips2023/bbb
    """
    lib = get_library(ctx)
    lib.recommend.triage_choose(reader or ctx.obj.get("reader"), winner, loser)
    click.echo("recorded")


@triage.command("neither")
@click.argument("a")
@click.argument("b")
@reader_option
@click.pass_context
@handle_errors
def triage_neither(ctx: click.Context, a: str, b: str, reader: str | None) -> None:
    """Record that you want neither A nor B (both rank lower from now on).

    Example:

        paperatlas triage neither iclr2024/aaa neurips2023/bbb
    """
    get_library(ctx).recommend.triage_neither(reader or ctx.obj.get("reader"), a, b)
    click.echo("recorded")


GROUP_METHODS = {"nash": "fair to every member", "sum": "the plain sum of scores"}


@click.command("group")
@click.option("--readers", "names", required=True, help="Comma-separated reader names.")
@click.option("--n", "n", type=int, default=10, show_default=True, help="Papers in the list.")
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="nash",
    show_default=True,
    help="nash: fair to every member; sum: plain sum of scores.",
)
@json_option
@click.pass_context
@handle_errors
def group(ctx: click.Context, names: str, n: int, method: str, as_json: bool) -> None:
    """A reading list for a group, fair to every member (Nash welfare of their Borda scores),
    with each member's share.

    Example:

        paperatlas group --readers alice,bob,carol --n 10
    """
    res = get_library(ctx).recommend.group_list(names.split(","), n, method)
    if as_json:
        echo_json({**res, "papers": hit_rows(res["papers"])})
    if not res["papers"]:
        nothing_found(
            ctx,
            "no papers for this group",
            "each member likes a few papers first: `paperatlas like ID --reader NAME`",
            readers=names,
            method=method,
        )
    if as_json:
        return
    print_hits(res["papers"])
    n_list = len(res["papers"])
    out.print(f"\n[bold]How this list serves each member[/bold] ({GROUP_METHODS[method]})")
    other = next(iter(res["compare"]))
    for m, o in zip(res["members"], res["compare"][other]):
        # satisfaction: the member's points over those of their own best list; share: of the group's points
        out.print(
            f"  {m['reader']}: {m['in_their_top']} of the {n_list} papers "
            f"{'is' if m['in_their_top'] == 1 else 'are'} among their top picks; the list is "
            f"{m['satisfaction']:.0%} as good for them as their own best {n_list} "
            f"and holds {m['share']:.0%} of what the group gets from it  "
            f"[dim](with {GROUP_METHODS[other]}: {o['satisfaction']:.0%} as good)[/dim]"
        )


@click.command("digest")
@reader_option
@click.option("--since", metavar="DATE", help="Only papers added since this date (YYYY-MM-DD).")
@click.option("--limit", type=int, default=20, show_default=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="markdown", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write here instead of stdout.")
@click.option(
    "--lang",
    type=click.Choice(list(LANGUAGES)),
    default="en",
    show_default=True,
    help="Language of the digest's own words (title, reasons); paper titles stay as they are.",
)
@click.option("--email", metavar="ADDRESS", help="Send the digest to ADDRESS (text and HTML) instead of printing it.")
@click.option(
    "--smtp-host",
    envvar=settings.env("smtp_host"),
    default="localhost",
    show_default=True,
    help="SMTP server ($PAPERATLAS_SMTP_HOST).",
)
@click.option(
    "--smtp-port",
    envvar=settings.env("smtp_port"),
    type=int,
    default=None,
    help="SMTP port ($PAPERATLAS_SMTP_PORT; default 587 with STARTTLS, else 25).",
)
@click.option(
    "--smtp-starttls/--no-smtp-starttls",
    envvar=settings.env("smtp_starttls"),
    default=False,
    help="Upgrade the connection with STARTTLS ($PAPERATLAS_SMTP_STARTTLS).",
)
@click.option("--smtp-user", envvar=settings.env("smtp_user"), default="", help="Login ($PAPERATLAS_SMTP_USER).")
@click.option(
    "--smtp-password",
    envvar=settings.env("smtp_password"),
    default="",
    help="Password ($PAPERATLAS_SMTP_PASSWORD: better than the flag, which shows in `ps`).",
)
@click.option(
    "--smtp-cafile",
    envvar=settings.env("smtp_cafile"),
    default="",
    metavar="PEM",
    help="Trust this CA for STARTTLS ($PAPERATLAS_SMTP_CAFILE; default: the system's).",
)
@click.option(
    "--from",
    "sender",
    envvar=settings.env("smtp_from"),
    default="paperatlas@localhost",
    show_default=True,
    help="Sender address ($PAPERATLAS_SMTP_FROM).",
)
@click.pass_context
@handle_errors
def digest(
    ctx: click.Context,
    reader: str | None,
    since: str | None,
    limit: int,
    fmt: str,
    output: str | None,
    email: str | None,
    smtp_host: str,
    smtp_port: int | None,
    smtp_starttls: bool,
    smtp_user: str,
    smtp_password: str,
    smtp_cafile: str,
    sender: str,
    lang: str,
) -> None:
    """Your recommended papers that you have not seen or judged, as Markdown, HTML or Atom, or by email.

    Example:

    \b
        paperatlas digest --reader alice --since 2026-11-01 --format atom -o alice.xml
        paperatlas digest --lang zh --format html -o 速递.html
        paperatlas digest --since 2026-11-01 --email me@example.org --smtp-host smtp.example.org --smtp-starttls
    """
    lib = get_library(ctx)
    with language(lang):
        if not email:
            write_output(lib.recommend.digest(reader, since, limit, fmt), output)
            return
        from ..mail import SmtpSettings, digest_message, send

        text = lib.recommend.digest(reader, since, limit, "markdown")
        html = lib.recommend.digest(reader, since, limit, "html")
    subject = text.splitlines()[0].lstrip("# ").strip() if text.strip() else "paperatlas digest"
    settings = SmtpSettings(smtp_host, smtp_port, smtp_user, smtp_password, smtp_starttls, sender, cafile=smtp_cafile)
    send(digest_message(email, subject, text, html, sender), settings)
    click.echo(f"sent the digest to {email} through {settings.where}")


COMMANDS = [recommend, profile, triage, group, digest]
