"""`paperatlas programme / session / agenda / walk`: the conference programme on the command line.

The programme itself comes in with `paperatlas fetch virtual CONF YEAR` (sources/cli.py).
"""

from __future__ import annotations

import click

from ..cli_common import echo_json, get_library, handle_errors, json_option, out

_day = click.option("--day", metavar="YYYY-MM-DD", help="Only this day (the conference's local date).")
_tz = click.option("--tz", metavar="AREA/CITY", help="Show times in this timezone (default: the conference's).")


@click.command("programme")
@click.option("--feed", metavar="'CONF YEAR'", help="Only this programme (e.g. 'neurips 2025').")
@_day
@click.option("--type", "type_", type=click.Choice(["oral", "spotlight", "poster"]), help="Only sessions of this type.")
@_tz
@json_option
@click.pass_context
@handle_errors
def programme_cmd(ctx: click.Context, feed: str | None, day: str | None, type_: str | None, tz: str | None,
                  as_json: bool) -> None:
    """List the programme's sessions, day by day.

    Example:

    \b
        paperatlas fetch virtual neurips 2025
        paperatlas programme --day 2025-12-05
    """
    lib = get_library(ctx)
    sessions = lib.programme.sessions(feed, day, type_, tz)
    if as_json:
        echo_json([s.to_dict() for s in sessions])
        return
    if not sessions:
        click.echo("no sessions; fetch a programme first: `paperatlas fetch virtual neurips 2025`")
        return
    last = ""
    for s in sessions:
        if s.day != last:
            out.print(f"[bold]{s.day or 'no time'}[/bold]")
            last = s.day
        when = f"{s.start[11:16]}-{s.end[11:16]}" if s.start else "--:--"
        out.print(f"  {when}  {s.session}  ({s.events} · {', '.join(s.rooms)})  {s.session_id}", markup=False)


@click.command("session")
@click.argument("session_id")
@json_option
@click.pass_context
@handle_errors
def session_cmd(ctx: click.Context, session_id: str, as_json: bool) -> None:
    """Show one session's papers in poster-number order.

    Example:

    \b
        paperatlas session neurips-2025-san-diego-poster-session-6
    """
    lib = get_library(ctx)
    info, events = lib.programme.session(session_id)
    if as_json:
        echo_json({**info.to_dict(), "events": [{**e.to_dict(), "paper_id": e.paper_id, "title": e.name}
                                                for e in events]})
        return
    out.print(f"{info.session}  {info.start[:16].replace('T', ' ')}-{info.end[11:16]}  {', '.join(info.rooms)}",
              markup=False)
    for e in events:
        out.print(f"  {e.poster_position or '-':>7}  {e.name}  {e.paper_id}", markup=False)


@click.command("agenda")
@click.option("--reader", "-r", metavar="NAME", default="me", show_default=True, help="Whose agenda.")
@click.option("--session", metavar="ID", help="Only this session (its id or its name).")
@_day
@_tz
@click.option("--recommended", type=click.IntRange(0, 500), default=20, show_default=True,
              help="How many of your strongest recommendations join your liked and tagged papers.")
@click.option("--ics", "as_ics", is_flag=True, help="Write the agenda as an iCalendar (.ics) file to stdout.")
@json_option
@click.pass_context
@handle_errors
def agenda_cmd(ctx: click.Context, reader: str, session: str | None, day: str | None, tz: str | None,
               recommended: int, as_ics: bool, as_json: bool) -> None:
    """Your conference: liked, tagged and recommended papers by day, session and poster number.

    Orals you starred that clash with each other or with a poster session you planned are flagged.

    Example:

    \b
        paperatlas agenda --reader me
        paperatlas agenda --reader me --ics > neurips.ics
        paperatlas agenda --reader me --day 2025-12-05 --tz Asia/Shanghai --json
    """
    lib = get_library(ctx)
    filters = {"tz": tz, "day": day, "session": session, "recommended": recommended}
    if as_ics:
        click.echo(lib.programme.ics(reader, **filters), nl=False)
        return
    agenda = lib.programme.agenda(reader, **filters)
    if as_json:
        echo_json(agenda.to_dict())
        return
    if not agenda.sessions and not agenda.unscheduled:
        click.echo("nothing on your agenda yet: like or tag papers of the programme"
                   " (`paperatlas like ID`), then run this again")
        return
    for day_, sessions in agenda.days():
        out.print(f"[bold]{day_}[/bold]")
        for s in sessions:
            out.print(f"  {s.info.start[11:16]}-{s.info.end[11:16]}  {s.info.session}  ({', '.join(s.info.rooms)})",
                      markup=False)
            for i in s.items:
                out.print(f"    {i.event.poster_position or i.event.start[11:16]:>7}  {i.title}"
                          f"  — {'; '.join(i.why)}", markup=False)
    for c in agenda.clashes:
        d = c.to_dict()
        out.print(f"[yellow]clash[/yellow] {d['a'].get('title')} ({d['a']['start'][11:16]}) and "
                  f"{d['b'].get('title') or d['b'].get('session')} ({d['b']['start'][11:16]})")
    if agenda.unscheduled:
        out.print("[bold]place known, time not[/bold]")
        for u in agenda.unscheduled:
            out.print(f"    {u['poster_position'] or '-':>7}  {u['title']}  {u['room']}", markup=False)


COMMANDS = [programme_cmd, session_cmd, agenda_cmd]


def register(cli: click.Group) -> None:
    for c in COMMANDS:
        cli.add_command(c)
