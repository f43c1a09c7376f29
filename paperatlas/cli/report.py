"""`paperatlas report` and the --institution / --country / --type options of search and list."""

from __future__ import annotations


import click

from .common import echo_json, get_library, handle_errors, write_output
from ..i18n import LANGUAGES, language
from ..report import parse_years
from ..report.summaries import MODES as SUMMARY_MODES

FORMATS = ("markdown", "html", "json")


@click.command("report")
@click.option("--venue", help="The venue (case-insensitive); default: every venue in the library.")
@click.option(
    "--year",
    "--years",
    "years",
    metavar="YEARS",
    help="A year, a range or a list: 2023, 2019-2025, 2021,2023. Several years add trends.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="markdown",
    show_default=True,
    help="markdown, one self-contained offline html file, or json.",
)
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of the terminal.")
@click.option(
    "--lang",
    type=click.Choice(sorted(LANGUAGES)),
    default="en",
    show_default=True,
    help="The language of the headings and notes (the papers stay as written).",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option(
    "--summaries",
    type=click.Choice(SUMMARY_MODES),
    default="auto",
    show_default=True,
    help="Each theme's written label and sentence (en and zh) from the language model: auto asks the "
    "configured endpoint (docs/llm.md) for those not cached yet, cached sends nothing, off leaves them out.",
)
@click.pass_context
@handle_errors
def report_cmd(
    ctx: click.Context,
    venue: str | None,
    years: str | None,
    fmt: str,
    output: str | None,
    lang: str,
    as_json: bool,
    summaries: str,
) -> None:
    """A conference at a glance: its themes, what rose and faded, who is there, how it was judged.

    Themes are the library's topics (`paperatlas topics build`, over every year, so a theme means the
    same thing in each). Over several years: each theme's share per year, its change and a test that
    the change is not noise.

    Example:

    \b
        paperatlas report --venue NeurIPS --year 2023 --json
        paperatlas report --venue CoRL --years 2021-2025 --format html -o corl.html
        paperatlas report --venue ICLR --year 2024 --lang zh
        PAPERATLAS_LLM_URL=http://127.0.0.1:8080/v1 paperatlas report --venue CoRL  # written theme summaries
    """
    lib = get_library(ctx)
    rep = lib.report.build(venue, parse_years(years), summaries=summaries)
    fmt = "json" if as_json else fmt
    if fmt == "json":
        if output:
            import json

            write_output(json.dumps(rep.to_dict(), ensure_ascii=False, indent=1) + "\n", output, "the report")
        else:
            echo_json(rep.to_dict())
        return
    from ..report.render import render_html, render_markdown

    with language(lang):
        text = render_html(rep, lang) if fmt == "html" else render_markdown(rep, lang)
    write_output(text, output, "the report")
    for note in rep.notes:
        click.echo(f"note: {note}", err=True)
    for hint in rep.hints:
        click.echo(f"hint: {hint}", err=True)


COMMANDS = [report_cmd]
