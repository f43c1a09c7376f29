"""Helpers every command module shares: exit codes, consoles, error handling, output.

Command modules (library.py, recommend.py, topics.py, ...) take their shared helpers from here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import settings
from ..errors import IngestError, PaperatlasError
from ..contrib import Filter
from ..durations import duration
from ..library import Library, default_db_path, filter_table
from ..store import is_postgres_url
from ..models import Hits, Paper

EXIT_ERROR, EXIT_BAD_INPUT, EXIT_EMPTY = 1, 3, 4
# stored, but the reader warned that some papers may be read wrong (each `warning:` line names one)
EXIT_WARNINGS = 5
err = Console(stderr=True)
out = Console(highlight=False, soft_wrap=True)
F = TypeVar("F", bound=Callable[..., Any])


def option_name(filter_name: str) -> str:
    """The command-line spelling of a filter: `min_citations` is `--min-citations`."""
    return "--" + filter_name.replace("_", "-")


def filter_option(f: Filter) -> click.Option:
    """The command-line option of a filter: --NAME, typed, described and checked as the filter declares
    (the library checks the value again: patterns, lengths and ranges are the filter's)."""
    kind: Any = click.Choice(f.choices, case_sensitive=False) if f.choices else f.type
    text = f.help[:1].upper() + f.help[1:]
    return click.Option(
        [option_name(f.name), f.name],
        type=kind,
        metavar=f.metavar or None,
        help=text if text.endswith(".") else text + ".",
        is_flag=f.type is bool,
        default=None,  # an option not given is no filter (a switch left off included)
    )


def check_sort(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--sort ORDER: an order some capability contributes (citations, rising), else a usage error (exit
    2) naming them; whether this library's papers have values for it, the library says."""
    if value is None:
        return None
    names = list(filter_table().sorts)
    if value not in names:
        raise click.BadParameter(f"{value!r} is not an order; use one of: {', '.join(names) or '(none)'}")
    return value


class FilterCommand(click.Command):
    """A command that takes every filter of the library (the library's own and what each capability
    contributes: paperatlas/contrib.py): its options are made from the table when the command runs
    or shows --help, so a filter declared once is an option here. The function gets them as keywords.
    `skip_filters`: those the command declares itself (in its own words)."""

    def __init__(self, *args: Any, skip_filters: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skip_filters = skip_filters

    def filter_names(self) -> list[str]:
        return [f.name for f in filter_table() if f.name not in self.skip_filters]

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        own = {p.name for p in params}
        extra = [filter_option(f) for f in filter_table() if f.name not in self.skip_filters and f.name not in own]
        help_option = self.get_help_option(ctx)
        if help_option is not None and params and params[-1] is help_option:
            return [*params[:-1], *extra, help_option]
        return [*params, *extra]


class Fail(click.ClickException):
    """A ClickException with our exit code."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.exit_code = code


def handle_errors(f: F) -> F:
    """Turn library errors into messages that end with the fix, and meaningful exit codes.
    A failed command that created the library file leaves none behind when it stored nothing."""

    @wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except IngestError as e:
            discard_new_empty_library(click.get_current_context(silent=True))
            lines = [f"ingest failed, nothing was stored: {e.message}"]
            lines += [f"  {b}" for b in e.bad[1:20]]
            if e.fix:
                lines.append(f"Fix: {e.fix}")
            raise Fail("\n".join(lines), EXIT_BAD_INPUT) from None
        except PaperatlasError as e:
            discard_new_empty_library(click.get_current_context(silent=True))
            raise Fail(str(e)) from None
        except click.ClickException:
            discard_new_empty_library(click.get_current_context(silent=True))
            raise

    return wrapper  # type: ignore[return-value]


def event_text(e: Any) -> str:
    """An event as one line (the programme loads only for hits that have events)."""
    from ..programme import models

    return models.event_text(e)


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr (only on a terminal); yields an (done, total) callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    task = bar.add_task(description, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield update


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(f)


def get_library(ctx: click.Context, create: bool = False) -> Library:
    """The library named by --db, opened once per command.

    Only commands that add papers pass `create=True`: a command that reads a missing library
    fails with exit 1, naming the path and the fix, and leaves no empty file behind."""
    obj = ctx.ensure_object(dict)
    if "library" not in obj:
        path = obj.get("db") or default_db_path()
        if create and path != ":memory:" and not is_postgres_url(path) and not Path(path).exists():
            obj["new_library"] = path  # a failed command removes it again (discard_new_empty_library)
        try:
            obj["library"] = Library(path, create=create, on_wait=lambda msg: click.echo(msg, err=True))
        except PaperatlasError as e:
            raise Fail(str(e)) from None
        ctx.call_on_close(obj["library"].close)
    return obj["library"]


def discard_new_empty_library(ctx: click.Context | None) -> None:
    """After a failed command: remove the library file it created, when it holds nothing.

    `fetch` into a new `--db` that cannot reach the service would otherwise leave an empty
    library behind, and the next command would read it as a real (empty) one."""
    obj = ctx.find_object(dict) if ctx is not None else None
    if not isinstance(obj, dict) or not obj.get("new_library") or "library" not in obj:
        return
    lib, path = obj["library"], obj.pop("new_library")
    try:
        empty = lib.count() == 0 and not lib.sources.follows()
    except Exception:  # noqa: BLE001 - a library we cannot even read back is no library to keep
        empty = True
    if not empty:
        return
    lib.close()
    del obj["library"]
    for f in (path, path + "-wal", path + "-shm", path + "-journal", path + ".lock", path + ".embed.lock"):
        Path(f).unlink(missing_ok=True)


class EmbedDisplay:
    """How the command line shows the embed that follows a write (core.EmbedListener): what
    waits, a progress bar per index, and what was embedded."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self._bars = ExitStack()

    def begin(self, index: str, model: str, waiting: int) -> Callable[[int, int], None]:
        if waiting and not self.quiet and index == "papers":
            # the papers are stored and committed: keyword search works now, in another terminal too
            click.echo(
                f"keyword search works now; embedding {waiting} papers for search by meaning "
                "(stopping is safe: `paperatlas embed` resumes)",
                err=True,
            )
        elif waiting and not self.quiet:
            click.echo(
                f"multilingual index: embedding {waiting} papers (about "
                f"{duration(waiting / MULTILINGUAL_PAPERS_PER_S)}; "
                "stopping is safe: `paperatlas embed --multilingual` resumes)",
                err=True,
            )
        label = "embedding" if index == "papers" else f"multilingual index ({model})"
        return self._bars.enter_context(progress_bar(label))

    def end(self, index: str, model: str, embedded: int) -> None:
        self._bars.close()
        if embedded and not self.quiet:
            extra = "" if index == "papers" else " (queries in Chinese now search by meaning)"
            click.echo(f"embedded {embedded} papers with {model}{extra}")


def maybe_embed(lib: Library, no_embed: bool, quiet: bool) -> int:
    """Embed new papers after an ingest, when this install can: the library's "after" policy
    (or "no" with --no-embed), shown on the terminal."""
    if getattr(lib, "embed", None) is None:
        return 0
    return lib.embed_after("no" if no_embed else "after", EmbedDisplay(quiet))


#: papers/s of the multilingual model on one busy core, for the time a build is announced to take
#: (`paperatlas bench crosslingual` measures this machine)
MULTILINGUAL_PAPERS_PER_S = 5.0


def embed_multilingual(lib: Library, quiet: bool = False) -> int:
    """Bring the multilingual index up to date, with a progress bar (the ETA is the bar's)."""
    todo = len(lib.multilingual.todo())
    if todo and not quiet:
        click.echo(
            f"multilingual index: embedding {todo} papers (about {duration(todo / MULTILINGUAL_PAPERS_PER_S)}; "
            "stopping is safe: `paperatlas embed --multilingual` resumes)",
            err=True,
        )
    with progress_bar(f"multilingual index ({lib.multilingual.embedder.id})") as update:
        n: int = lib.multilingual.build(progress=update)
    if n and not quiet:
        click.echo(
            f"embedded {n} papers with {lib.multilingual.embedder.id} (queries in Chinese now search by meaning)"
        )
    return n


def say_crosslingual(lib: Library, query: str, mode: str) -> None:
    """On stderr: a Chinese (CJK) query in a library without the multilingual index, and how to build it."""
    from ..search.cjk import has_cjk

    if mode == "keyword" or not has_cjk(query):
        return
    try:
        st = lib.multilingual.status()
    except PaperatlasError:
        return
    if st["embedded"] >= st["papers"]:
        return
    left = st["papers"] - st["embedded"]
    eta = duration(left / MULTILINGUAL_PAPERS_PER_S)
    if not st["embedded"]:
        click.echo(
            "note: this query is in Chinese, but this library has no multilingual index: search by meaning "
            "uses the English model and will mostly miss. Build the index with `paperatlas embed "
            f"--multilingual` ({st['papers']} papers, about {eta})",
            err=True,
        )
    else:
        click.echo(
            f"note: the multilingual index covers {st['embedded']} of {st['papers']} papers: Chinese queries "
            f"find the others by keyword only (`paperatlas embed --multilingual` finishes it, about {eta})",
            err=True,
        )


def say_waiting(lib: Library, mode: str) -> None:
    """On stderr: how many papers search by meaning cannot see yet (they still match by keyword)."""
    note = lib.waiting_note(mode)
    if note:
        click.echo(f"note: {note}", err=True)


def paper_table(papers: list[Paper], title: str = "") -> Table:
    t = Table(title=title or None, show_lines=False)
    t.add_column("id", overflow="fold", max_width=28)
    t.add_column("title", overflow="fold")
    t.add_column("venue")
    t.add_column("year")
    for p in papers:
        t.add_row(p.id, p.title + (" [dim](derived)[/dim]" if p.title_derived else ""), p.venue, str(p.year or ""))
    return t


def write_output(text: str, output: str | None, what: str = "") -> None:
    """Write `text` to the file `output`, or to stdout when there is none."""
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
        click.echo(f"wrote {what + ' to ' if what else ''}{output}", err=True)
    else:
        sys.stdout.write(text)


def hit_rows(hits: list[Any]) -> list[dict[str, Any]]:
    return [h.to_dict() for h in hits]


def describe_filters(**filters: Any) -> str:
    """`venue=ICLR, year=2026` for the filters that are set ("" when none is)."""
    return ", ".join(f"{k.replace('_', '-')}={v}" for k, v in filters.items() if v not in (None, "", False, ()))


def reader_flag(reader: str | None) -> str:
    """` --reader NAME` for hints, so a copied hint acts for the same reader ("" for the default)."""
    return f" --reader {reader}" if reader else ""


def nothing_found(ctx: click.Context, what: str, hint: str, **filters: Any) -> None:
    """Say on stderr that nothing was found, with the filters in effect and a hint; exit 4."""
    where = describe_filters(**filters)
    click.echo(f"nothing found: {what}" + (f" (filters: {where})" if where else ""), err=True)
    if hint:
        click.echo(f"Hint: {hint}", err=True)
    ctx.exit(EXIT_EMPTY)


def search_answer(lib: Library, hits: Hits) -> dict[str, Any]:
    """A search's JSON: the one envelope (`Hits.to_dict`) the web's `.json` and MCP give too, with
    the papers a search by meaning cannot see yet."""
    hits.notes["not_embedded"] = lib.not_embedded(hits.mode)
    return hits.to_dict()


def show_hits(
    ctx: click.Context,
    hits: list[Any],
    as_json: bool,
    what: str = "no results",
    hint: str = "",
    lib: Library | None = None,
    **filters: Any,
) -> None:
    """Print hits as JSON or a numbered list; with none, say so on stderr and exit 4 (nothing found).
    A search's answer (`Hits` and its library) prints as the search envelope, other lists as rows."""
    if as_json:
        echo_json(search_answer(lib, hits) if lib is not None and isinstance(hits, Hits) else hit_rows(hits))
    else:
        print_hits(hits)
    if not hits:
        nothing_found(ctx, what, hint, **filters)


def score_decimals(scores: list[float]) -> int:
    """Decimals that tell the scores apart (3, up to 6): recommendation scores crowd near 1, where
    three decimals print 0.999 for every paper."""
    distinct = len({round(s, 9) for s in scores})
    for d in range(3, 7):
        if len({f"{s:.{d}f}" for s in scores}) >= distinct:
            return d
    return 6


def print_hits(hits: list[Any]) -> None:
    d = score_decimals([h.score for h in hits])
    for i, h in enumerate(hits, start=1):
        p = h.paper
        derived = " [dim](derived title)[/dim]" if p.title_derived else ""
        out.print(
            f"{i:>2}. [bold]{p.title}[/bold]{derived}  [dim]{p.venue} {p.year or ''} · {p.id} · {h.score:.{d}f}[/dim]"
        )
        if h.reason:
            out.print(f"    [italic]{h.reason}[/italic]")
        if h.snippet:  # where the query's words are: the matches in bold
            line = Text("    " + h.snippet.text, style="dim")
            for a, b in h.snippet.marks:
                line.stylize("bold", a + 4, b + 4)
            out.print(line)
        for e in getattr(h, "events", ()):  # when and where it is presented
            out.print("    " + event_text(e), markup=False)


# the reader a personal command speaks for
reader_option = click.option(
    "--reader",
    "-r",
    default=None,
    metavar="NAME",
    help="Reader name (default: me, or $PAPERATLAS_READER).",
    envvar=settings.env("reader"),
)
