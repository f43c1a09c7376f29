"""`paperatlas programme / session / agenda / walk`: the conference programme on the command line.

The programme itself comes in with `paperatlas fetch virtual CONF YEAR` (cli/sources.py).
"""

from __future__ import annotations

import click

from .common import echo_json, get_library, handle_errors, json_option, out

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
def programme_cmd(
    ctx: click.Context, feed: str | None, day: str | None, type_: str | None, tz: str | None, as_json: bool
) -> None:
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
        echo_json(
            {**info.to_dict(), "events": [{**e.to_dict(), "paper_id": e.paper_id, "title": e.name} for e in events]}
        )
        return
    out.print(
        f"{info.session}  {info.start[:16].replace('T', ' ')}-{info.end[11:16]}  {', '.join(info.rooms)}", markup=False
    )
    for e in events:
        # a poster by its number; a talk by its own time in the session (orals follow one another)
        where = e.poster_position or (f"{e.start[11:16]}-{e.end[11:16]}" if e.start and e.end else e.start[11:16])
        out.print(f"  {where or '-':>11}  {e.name}  {e.paper_id}", markup=False)


@click.command("agenda")
@click.option("--reader", "-r", metavar="NAME", default="me", show_default=True, help="Whose agenda.")
@click.option("--session", metavar="ID", help="Only this session (its id or its name).")
@_day
@_tz
@click.option(
    "--recommended",
    type=click.IntRange(0, 500),
    default=20,
    show_default=True,
    help="How many of your strongest recommendations join your liked and tagged papers.",
)
@click.option("--ics", "as_ics", is_flag=True, help="Write the agenda as an iCalendar (.ics) file to stdout.")
@json_option
@click.pass_context
@handle_errors
def agenda_cmd(
    ctx: click.Context,
    reader: str,
    session: str | None,
    day: str | None,
    tz: str | None,
    recommended: int,
    as_ics: bool,
    as_json: bool,
) -> None:
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
        click.echo(
            "nothing on your agenda yet: like or tag papers of the programme"
            " (`paperatlas like ID`), then run this again"
        )
        return
    for day_, sessions in agenda.days():
        out.print(f"[bold]{day_}[/bold]")
        for s in sessions:
            out.print(
                f"  {s.info.start[11:16]}-{s.info.end[11:16]}  {s.info.session}  ({', '.join(s.info.rooms)})",
                markup=False,
            )
            for i in s.items:
                out.print(
                    f"    {i.event.poster_position or i.event.start[11:16]:>7}  {i.title}  — {'; '.join(i.why)}",
                    markup=False,
                )
    for c in agenda.clashes:
        d = c.to_dict()
        out.print(
            f"[yellow]clash[/yellow] {d['a'].get('title')} ({d['a']['start'][11:16]}) and "
            f"{d['b'].get('title') or d['b'].get('session')} ({d['b']['start'][11:16]})"
        )
    if agenda.unscheduled:
        out.print("[bold]place known, time not[/bold]")
        for u in agenda.unscheduled:
            out.print(f"    {u['poster_position'] or '-':>7}  {u['title']}  {u['room']}", markup=False)


@click.command("walk")
@click.argument("session_id")
@click.option("--reader", "-r", metavar="NAME", default="me", show_default=True, help="Whose interests.")
@click.option("--minutes", type=click.FloatRange(1, 1440), default=90, show_default=True, help="Time you have.")
@click.option(
    "--per-poster", type=click.FloatRange(0.5, 240), default=5, show_default=True, help="Minutes at each poster."
)
@click.option(
    "--walk-per-100",
    type=click.FloatRange(0, 120),
    default=1.0,
    show_default=True,
    help="Minutes to walk past 100 poster numbers.",
)
@click.option("--done", metavar="IDS", default="", help="Comma-separated papers already visited (re-plan from there).")
@click.option("--skip", metavar="IDS", default="", help="Comma-separated papers to leave out.")
@click.option(
    "--method",
    type=click.Choice(["plan", "topk", "score_order"]),
    default="plan",
    show_default=True,
    help="The planner, or one of the baselines it is measured against.",
)
@json_option
@click.pass_context
@handle_errors
def walk_cmd(
    ctx: click.Context,
    session_id: str,
    reader: str,
    minutes: float,
    per_poster: float,
    walk_per_100: float,
    done: str,
    skip: str,
    method: str,
    as_json: bool,
) -> None:
    """Plan a walk through a poster session: the posters worth most for your time, in hall order.

    Example:

    \b
        paperatlas walk neurips-2025-san-diego-poster-session-6 --minutes 90 --per-poster 5
        paperatlas walk neurips-2025-san-diego-poster-session-6 --done 7HVADbW8fh --minutes 60
    """
    lib = get_library(ctx)

    def ids(s: str) -> list[str]:
        return [x.strip() for x in s.split(",") if x.strip()]

    w = lib.programme.walk(session_id, reader, minutes, per_poster, walk_per_100, ids(done), ids(skip), method)
    if as_json:
        echo_json(w.to_dict())
        return
    if not w.stops:
        click.echo("nothing to visit: like or tag papers (or papers near them) of this session first")
        return
    for s in w.stops:
        mark = "★" if s.poster.must_see else " "
        out.print(
            f"  +{s.arrive:5.1f} min  {s.poster.position or s.poster.number:>7} {mark} {s.poster.title}", markup=False
        )
    out.print(
        f"{len(w.stops)} posters, {w.used:.0f} of {w.minutes:.0f} min, interest {w.interest:.2f}"
        f" ({w.per_minute:.3f}/min)",
        markup=False,
    )
    if w.missed_must_see:
        out.print(f"must-sees that do not fit: {', '.join(p.paper_id for p in w.missed_must_see)}", markup=False)


@click.command("split")
@click.argument("session_id")
@click.option("--readers", required=True, metavar="A,B,...", help="The reading group's members.")
@click.option("--minutes", type=click.FloatRange(1, 1440), default=90, show_default=True, help="Time each has.")
@click.option(
    "--per-poster", type=click.FloatRange(0.5, 240), default=5, show_default=True, help="Minutes at each poster."
)
@json_option
@click.pass_context
@handle_errors
def split_cmd(
    ctx: click.Context, session_id: str, readers: str, minutes: float, per_poster: float, as_json: bool
) -> None:
    """Share a poster session out among a reading group: the most relevant posters, nobody twice.

    Example:

    \b
        paperatlas split neurips-2025-san-diego-poster-session-6 --readers ana,bo,chen --minutes 60
    """
    lib = get_library(ctx)
    names = [x.strip() for x in readers.split(",") if x.strip()]
    result = lib.programme.split(session_id, names, minutes, per_poster)
    if as_json:
        echo_json(result.to_dict())
        return
    for sh in result.shares:
        out.print(f"{sh.reader}: {len(sh.walk.stops)} posters", markup=False)
        for s in sh.walk.stops:
            out.print(f"  {s.poster.position or s.poster.number:>7}  {s.poster.title}", markup=False)


@click.command("people")
@click.option("--reader", "-r", metavar="NAME", default="me", show_default=True, help="Whose agenda.")
@click.option("--limit", type=click.IntRange(1, 500), default=30, show_default=True, help="How many people.")
@json_option
@click.pass_context
@handle_errors
def people_cmd(ctx: click.Context, reader: str, limit: int, as_json: bool) -> None:
    """People to meet: the authors of the papers on your agenda, and where and when they present.

    Example:

    \b
        paperatlas people --reader me --limit 10
    """
    lib = get_library(ctx)
    found = lib.programme.people(reader, limit)
    if as_json:
        echo_json([p.to_dict() for p in found])
        return
    for p in found:
        out.print(f"{p.name}" + (f" ({p.institution})" if p.institution else ""), markup=False)
        for x in p.papers:
            out.print(
                f"    {x['start'][:16].replace('T', ' ')}  {x['session']}  {x['poster_position'] or x['room']}"
                f"  {x['title']}",
                markup=False,
            )


COMMANDS = [programme_cmd, session_cmd, agenda_cmd, walk_cmd, split_cmd, people_cmd]
