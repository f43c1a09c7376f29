"""`paperatlas bench` commands: the `bench` group the `paperatlas` command finds through the lab's
`paperatlas.commands` entry point. A new benchmark is a module in paperatlas_lab/bench/ and a command
here (`@bench.command(...)` that imports its module when run), or a click command of its own module
added with `bench.add_command(...)`."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import click
from paperatlas import settings
from paperatlas.embed.base import DEFAULT_EMBEDDER
from paperatlas.cli.llm import llm_options

DEFAULT_VENUE = "../shared/data/ml_venue_papers/papers.jsonl.gz"


@click.group()
def bench() -> None:
    """Benchmarks: print numbers beside a baseline measured in the same run.

    Example:

        paperatlas bench ingest ../shared/data/ml_venue_papers/papers.jsonl.gz
    """


def _sizes(text: str) -> list[str]:
    """--sizes "real,100k,1m" -> the sizes, each checked before any slow work starts."""
    from ..bench.search import parse_size

    wanted = [s.strip() for s in text.split(",") if s.strip()]
    for s in wanted:
        try:
            parse_size(s)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--sizes") from None
    return wanted


@bench.command("ingest")
@click.argument("file", default=DEFAULT_VENUE, type=click.Path(exists=True, dir_okay=False))
@click.option("--repeats", default=3, show_default=True, help="Runs; the median is reported.")
def bench_ingest_cmd(file: str, repeats: int) -> None:
    """Papers/s for a first ingest (metadata + FTS, no embeddings) and a no-op re-ingest.

    Example:

        paperatlas bench ingest papers.jsonl.gz --repeats 5
    """
    from ..bench.ingest import bench_ingest

    click.echo(json.dumps(bench_ingest(Path(file), repeats), indent=2))


@bench.command("paste")
@click.argument("file", default=DEFAULT_VENUE, type=click.Path(exists=True, dir_okay=False))
@click.option("--papers", default=8088, show_default=True, help="Records rendered as a paste.")
@click.option("--repeats", default=3, show_default=True, help="Runs; the median is reported.")
@click.option("--json", "as_json", is_flag=True, help="The figures as JSON.")
def bench_paste_cmd(file: str, papers: int, repeats: int, as_json: bool) -> None:
    """Seconds to read a pasted list of real records (numbered with no blank lines; title blocks),
    beside reading the same records as JSON lines and as untitled abstracts (the seed shape).

    Example:

        paperatlas bench paste ../shared/data/ml_venue_papers/papers.jsonl.gz --papers 8088
    """
    from ..bench.paste import bench_paste, table

    res = bench_paste(Path(file), papers, repeats)
    click.echo(json.dumps(res, indent=2) if as_json else table(res))


@bench.command("http")
@click.option(
    "--db",
    "db_path",
    envvar=settings.env("db"),
    required=True,
    metavar="PATH",
    help="Library to serve (opened read-only by the server; use a copy of a shared file).",
)
@click.option("--clients", default=8, show_default=True, help="Concurrent keep-alive connections.")
@click.option("--seconds", default=10.0, show_default=True, help="Length of each measurement.")
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "semantic"]), default="hybrid", show_default=True)
@click.option("--per-page", default=10, show_default=True, help="Hits per search request.")
@click.option(
    "--workers",
    type=int,
    default=None,
    help="Server processes (`serve --workers`); default: one per core, the deployment for throughput.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def bench_http_cmd(
    db_path: str, clients: int, seconds: float, mode: str, per_page: int, workers: int, as_json: bool
) -> None:
    """Requests/s and p50/p99 latency of /search.json under concurrent clients on loopback,
    beside /healthz and in-process Library.search measured in the same run.

    Example:

        paperatlas bench http --db venue-copy.db --clients 8 --seconds 10
    """
    from ..bench.http import bench_http

    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    out = bench_http(db_path, clients, min(max(seconds, 1.0), 300.0), mode, per_page, workers=max(1, workers))
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    click.echo(
        f"{out['library']['papers']} papers, {out['cpus']} CPUs, {out['server_processes']} server process(es) "
        f"(idle {out['server_warm_up_s']} s after start-up), load average before the run {out['load_average']}"
    )
    click.echo(f"queries: {out['queries']}")
    cols = (
        "name",
        "clients",
        "requests",
        "errors",
        "rps",
        "p50_ms",
        "p90_ms",
        "p99_ms",
        "max_ms",
        "server_cpu_ms",
        "client_cpu_ms",
    )
    widths = (40, 7, 8, 6, 7, 7, 7, 7, 7, 13, 13)
    click.echo("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cols, widths))))
    for r in out["results"]:
        click.echo(
            "  ".join(
                str(r[c]).ljust(w) if i == 0 else str(r[c]).rjust(w) for i, (c, w) in enumerate(zip(cols, widths))
            )
        )
    click.echo(
        "server_cpu_ms: CPU time per request (the in-process row: of this process); on otherwise idle cores "
        "throughput is bounded by about cores * 1000 / (server_cpu_ms + client_cpu_ms) requests/s."
    )


from ..bench.recommend import bench_recommend_cmd  # noqa: E402

bench.add_command(bench_recommend_cmd)


@bench.command("search")
@click.option(
    "--db",
    "db_path",
    envvar=settings.env("db"),
    required=True,
    metavar="PATH",
    help="An embedded library of real papers: the 8k row, and the source of the synthetic ones.",
)
@click.option(
    "--sizes",
    default="8k,100k,1m",
    show_default=True,
    help="Comma-separated: 8k or real (the --db library), 100k, 1m, or any number.",
)
@click.option(
    "--workdir",
    default=lambda: str(Path(tempfile.gettempdir()) / "paperatlas-bench"),
    show_default="$TMP/paperatlas-bench",
    help="Where synthetic libraries are built and kept for later runs.",
)
@click.option("--queries", "n_queries", default=100, show_default=True, help="Distinct queries per mode.")
@click.option(
    "--embed-papers", default=256, show_default=True, help="Papers for the embedding-throughput row (0: skip)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def bench_search_cmd(db_path: str, sizes: str, workdir: str, n_queries: int, embed_papers: int, as_json: bool) -> None:
    """p50/p95 search latency (query embedding included) and RSS at 8k, 100k and 1M papers,
    and Library.embed throughput beside the raw model's, measured in the same run.

    Example:

        paperatlas bench search --db venue.db --sizes 8k,100k
    """
    from ..bench.search import bench_search, table

    wanted = _sizes(sizes)
    res = bench_search(
        Path(db_path), wanted, Path(workdir), n_queries, embed_papers, log=lambda m: click.echo(m, err=True)
    )
    click.echo(json.dumps(res, indent=2) if as_json else table(res))


@bench.command("quality")
@click.option("--embedder", default=DEFAULT_EMBEDDER, show_default=True, help="Registered embedding model under test.")
@click.option(
    "--baseline",
    default=None,
    help="Also run this embedder through the same parts, part by part in the same run, and print the "
    "candidate's figures against it (ratios).",
)
@click.option(
    "--only",
    default="",
    metavar="PARTS",
    help="Comma-separated parts (default all): scifact, paraphrase, acm, zh, speed, latency.",
)
@click.option("--quick", is_flag=True, help="Fewer papers for speed (256), 30 queries and 8k only for latency.")
@click.option(
    "--data",
    "data_dir",
    type=click.Path(file_okay=False),
    help="The shared evaluation data (scifact/, ml_venue_papers/, acm_cr/); default ../shared/data.",
)
@click.option(
    "--workdir",
    default=lambda: str(Path.home() / ".cache" / "paperatlas" / "eval" / "bench-quality"),
    show_default="~/.cache/paperatlas/eval/bench-quality",
    help="Where the venue library (one per embedder) and the synthetic 100k library are kept.",
)
@click.option(
    "--vector-cache",
    default=None,
    show_default="$PAPERATLAS_VECTOR_CACHE, else ~/.cache/paperatlas/eval/vectors.sqlite",
    help="Vector cache file for every part (off: no cache).",
)
@click.option("--fresh", is_flag=True, help="Delete the kept libraries first (the vector cache stays).")
@click.option("--ready-papers", type=int, default=None, help="speed: ingest this many venue papers (default all).")
@click.option("--sizes", default="8k,100k", show_default=True, help="latency: library sizes.")
@click.option("--queries", "n_queries", default=100, show_default=True, help="latency: distinct queries per mode.")
@click.option(
    "--paraphrases",
    type=click.Path(exists=True, dir_okay=False),
    help="paraphrase: the query file (default benchmarks/data/paraphrase_8k.jsonl).",
)
@click.option(
    "--zh-queries",
    type=click.Path(exists=True, dir_okay=False),
    help="zh: the Chinese query file (default tests/data/zh_queries.jsonl).",
)
@click.option("--acm-pool", type=int, default=None, help="acm: candidate pool size (default 10,000).")
@click.option(
    "--settings",
    "settings_text",
    default="",
    metavar="NAME=VALUE,...",
    help="Search settings for the embedder under test, where not the defaults (e.g. norm=minmax).",
)
@click.option(
    "--baseline-settings",
    default="",
    metavar="NAME=VALUE,...",
    help="The same for the baseline: norm=minmax,semantic_weight=0.5 is the fusion minilm shipped with.",
)
@click.option(
    "--examples/--no-examples", default=True, show_default=True, help="Add the 29 example papers to the venue library."
)
@llm_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the table.")
def bench_quality_cmd(
    embedder: str,
    baseline: str | None,
    only: str,
    quick: bool,
    data_dir: str | None,
    workdir: str,
    vector_cache: str | None,
    fresh: bool,
    ready_papers: int | None,
    sizes: str,
    n_queries: int,
    paraphrases: str | None,
    zh_queries: str | None,
    acm_pool: int | None,
    settings_text: str,
    baseline_settings: str,
    examples: bool,
    llm_url: str | None,
    llm_model: str | None,
    as_json: bool,
) -> None:
    """Every search-quality figure in one run: SciFact test, the paraphrase set, ACM-CR vs the SVM,
    Chinese queries at full library size, papers/s and ingest-to-hybrid time, p50 at 8k and 100k.

    Vectors go through the vector cache, so only the first run embeds; each part prints its time.
    With an endpoint (--llm-url or $PAPERATLAS_LLM_URL) the Chinese queries also run with the model's
    English rendering of each (stored in the venue library, so only the first run asks).

    Example:

        paperatlas bench quality --embedder minilm --only scifact,paraphrase

    Before and after, each with the fusion it ships with:

        paperatlas bench quality --baseline minilm --baseline-settings norm=minmax,semantic_weight=0.5
    """
    from ..bench.quality import (
        EXAMPLES,
        PARAPHRASES,
        PARTS,
        ZH_QUERIES,
        Bench,
        clean,
        compare,
        default_data_root,
        default_vector_cache,
        run,
        run_pair,
        table,
    )
    from paperatlas.embed.base import EMBEDDERS
    from paperatlas.errors import PaperatlasError
    from paperatlas.search.engine import SearchSettings

    for name, hint in ((embedder, "--embedder"), (baseline, "--baseline")):
        if name is not None and name not in EMBEDDERS:
            raise click.BadParameter(f"use one of: {', '.join(EMBEDDERS.names())}", param_hint=hint)
    parts = [x.strip() for x in only.split(",") if x.strip()] or list(PARTS)
    bad = [x for x in parts if x not in PARTS]
    if bad:
        raise click.BadParameter(f"unknown part {bad[0]!r}: use {', '.join(PARTS)}", param_hint="--only")
    data = Path(data_dir) if data_dir else default_data_root()
    if data is None:
        raise click.ClickException("no evaluation data found: pass --data DIR (the folder holding scifact/ ...)")
    if vector_cache or not settings.raw("vector_cache"):
        # every library of the run, child processes included, reads the same cache
        settings.put("vector_cache", vector_cache or str(default_vector_cache()))
    if fresh:
        clean(Path(workdir))

    search: dict[str, dict] = {}
    for role, text, hint in (
        ("candidate", settings_text, "--settings"),
        ("baseline", baseline_settings, "--baseline-settings"),
    ):
        try:
            search[role] = SearchSettings.parse_overrides(text)
        except PaperatlasError as e:
            raise click.BadParameter(f"{e.message}; {e.fix}", param_hint=hint) from None

    def bench_for(name: str, role: str = "candidate") -> Bench:
        return Bench(
            data,
            name,
            Path(workdir),
            quick=quick,
            ready_papers=ready_papers,
            queries=n_queries,
            sizes=_sizes(sizes),
            log=lambda m: click.echo(m, err=True),
            paraphrases=Path(paraphrases) if paraphrases else PARAPHRASES,
            zh_queries=Path(zh_queries) if zh_queries else ZH_QUERIES,
            acm_pool=acm_pool,
            examples=EXAMPLES if examples else None,
            llm_url=llm_url,
            llm_model=llm_model,
            search=search[role],
        )

    if baseline and (baseline != embedder or search["baseline"] != search["candidate"]):
        pair = run_pair(bench_for(baseline, "baseline"), bench_for(embedder), parts)
        if as_json:
            click.echo(json.dumps(pair, indent=2))
        else:
            click.echo("\n\n".join([table(pair["baseline"]), table(pair["candidate"]), compare(pair)]))
        return
    res = run(bench_for(embedder), parts)
    click.echo(json.dumps(res, indent=2) if as_json else table(res))


@bench.command("topics")
@click.option(
    "--db",
    "db_path",
    envvar=settings.env("db"),
    required=True,
    metavar="PATH",
    help="An embedded library (its topics are not touched: the real size runs on a copy).",
)
@click.option(
    "--sizes",
    default="real,100k",
    show_default=True,
    help="Comma-separated: real (the library itself), or synthetic sizes such as 100k.",
)
@click.option("--seed", default=0, show_default=True)
@click.option("--no-baseline", is_flag=True, help="Skip the TF-IDF k-means and PCA baselines.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def bench_topics_cmd(db_path: str, sizes: str, seed: int, no_baseline: bool, as_json: bool) -> None:
    """Seconds to build topics + map layout: the real library and synthetic larger ones,
    beside TF-IDF k-means and PCA baselines measured in the same run.

    Example:

        paperatlas bench topics --db venue.db --sizes real,100k
    """
    from ..bench.topics import bench_topics, table

    wanted = _sizes(sizes)
    res = bench_topics(Path(db_path), wanted, seed, not no_baseline, log=lambda m: click.echo(m, err=True))
    click.echo(json.dumps(res, indent=2) if as_json else table(res))


@bench.command("report")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--workdir",
    default=os.path.join(tempfile.gettempdir(), "paperatlas-bench-report"),
    show_default=True,
    help="Where the library is kept between runs (ingest, embed and topics run once).",
)
@click.option(
    "--embedder",
    default="hashing",
    show_default=True,
    help="hashing (no model, seconds), or a model whose vectors the cache holds.",
)
@click.option("--repeats", type=click.IntRange(1, 50), default=3, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def bench_report_cmd(files: tuple[str, ...], workdir: str, embedder: str, repeats: int, as_json: bool) -> None:
    """Seconds to build and render a conference report over FILES, beside a scan of every paper
    measured in the same run.

    Example:

        paperatlas bench report papers.jsonl.gz --workdir /tmp/bench-8k
    """
    from ..bench.report import bench_report, table

    res = bench_report(files, Path(workdir), embedder, repeats, log=lambda m: click.echo(m, err=True))
    click.echo(json.dumps(res, indent=2) if as_json else table(res))


@bench.command("ray")
@click.argument("file", default=DEFAULT_VENUE, type=click.Path(exists=True, dir_okay=False))
@click.option("--papers", default=300, show_default=True, help="Abstracts to embed per measurement.")
@click.option("--workers", default="1,2", show_default=True, help="Local Ray worker counts to measure.")
@click.option("--nodes", default="1,10,50", show_default=True, help="Cluster sizes for the 2.7M-abstract arithmetic.")
def bench_ray_cmd(file: str, papers: int, workers: str, nodes: str) -> None:
    """Papers/s on 1..N local Ray workers against the raw model in this process (needs paperatlas[scale]).

    Example:

        paperatlas bench ray papers.jsonl.gz --papers 300 --workers 1,2
    """
    from ..bench.scale import bench_ray

    ws = [int(w) for w in workers.split(",") if w.strip()]
    ns = [int(n) for n in nodes.split(",") if n.strip()]
    click.echo(json.dumps(bench_ray(Path(file), papers, ws, ns), indent=2))


@bench.command("store")
@click.argument("file", default=DEFAULT_VENUE, type=click.Path(exists=True, dir_okay=False))
@click.option("--pg", "pg_url", required=True, metavar="URL", help="An empty PostgreSQL database to measure.")
@click.option("--papers", default=8088, show_default=True, help="Papers to ingest.")
def bench_store_cmd(file: str, pg_url: str, papers: int) -> None:
    """Ingest, search and write latency: a PostgreSQL library against a SQLite file, same papers, same run.

    Example:

        paperatlas bench store papers.jsonl.gz --pg postgresql://me@127.0.0.1:5432/bench
    """
    from ..bench.scale import bench_store

    click.echo(json.dumps(bench_store(Path(file), pg_url, papers), indent=2))


@bench.command("first-search")
@click.argument("file", default=DEFAULT_VENUE, type=click.Path(exists=True, dir_okay=False))
@click.option("--query", default="diffusion models for protein design", show_default=True)
@click.option("--limit", type=int, default=None, help="Only the first N records (a quick run).")
@click.option("--raw-sample", default=512, show_default=True, help="Texts the raw-model baseline embeds.")
@click.option("--embedder", default=DEFAULT_EMBEDDER, show_default=True, help="Embedding model.")
def bench_first_search_cmd(file: str, query: str, limit: int | None, raw_sample: int, embedder: str) -> None:
    """Seconds from starting an ingest (empty library and vector cache) to the first keyword answer
    and to the first hybrid answer over every paper; embedding papers/s against the raw model.

    Example:

        nice -n 10 paperatlas bench first-search ../shared/data/ml_venue_papers/papers.jsonl.gz
    """
    from ..bench.first_search import main

    click.echo(main(file, query=query, limit=limit, raw_sample=raw_sample, embedder=embedder))


from ..bench.crosslingual import bench_crosslingual_cmd  # noqa: E402

bench.add_command(bench_crosslingual_cmd)


@bench.command("agenda")
@click.argument("file", default=DEFAULT_VENUE, type=click.Path(exists=True, dir_okay=False))
@click.option("--events", default=5000, show_default=True, help="Events in the programme.")
@click.option("--likes", default=100, show_default=True, help="The reader's liked papers.")
@click.option("--repeats", default=5, show_default=True, help="Runs; the median is reported.")
def bench_agenda_cmd(file: str, events: int, likes: int, repeats: int) -> None:
    """Agenda build time on a programme of 5,000 events, beside loading the liked papers.

    Example:

        paperatlas bench agenda ../shared/data/ml_venue_papers/papers.jsonl.gz --events 5000
    """
    from ..bench.programme import bench_agenda

    click.echo(json.dumps(bench_agenda(Path(file), events, likes, repeats), indent=2))


@bench.command("walk")
@click.option("--db", "db_path", metavar="PATH", help="An embedded library of one venue's papers.")
@click.option(
    "--site",
    metavar="CALENDAR",
    type=click.Path(exists=True, dir_okay=False),
    help="Instead of --db: a real programme, a Mini-Conf calendar_papers.csv (its own sessions and posters).",
)
@click.option("--sessions", default=6, show_default=True, help="Poster sessions the papers are spread over (--db).")
@click.option("--readers", default=30, show_default=True, help="Simulated readers (10 likes each; 5 with --site).")
@click.option("--per-poster", default=5.0, show_default=True, help="Minutes at each poster.")
def bench_walk_cmd(db_path: str | None, site: str | None, sessions: int, readers: int, per_poster: float) -> None:
    """The poster-walk planner against top-k and score order: interest collected per minute.

    Example:

        paperatlas bench walk --db neurips2023.db --readers 30

        paperatlas bench walk --site tests/data/programme/pldi-2021/calendar_papers.csv
    """
    from ..bench.programme import bench_walk, bench_walk_site

    if bool(db_path) == bool(site):
        raise click.UsageError("give --db LIBRARY or --site CALENDAR")
    if site:
        click.echo(json.dumps(bench_walk_site(site, readers, per_poster=per_poster), indent=2))
        return
    click.echo(json.dumps(bench_walk(db_path, sessions, readers, per_poster=per_poster), indent=2))


from ..bench.llm import bench_llm_cmd  # noqa: E402

bench.add_command(bench_llm_cmd)

from ..bench.interactive import bench_interactive_cmd  # noqa: E402

bench.add_command(bench_interactive_cmd)
