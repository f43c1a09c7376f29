"""`paperatlas serve`: the web UI and the HTTP API (what it runs is web/serve.py)."""

from __future__ import annotations

import click

from .common import get_library, handle_errors


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback only by default).")
@click.option("--port", type=int, default=8000, show_default=True, help="Port to listen on (0 = any free port).")
@click.option("--read-only", is_flag=True, help="Refuse every change (stars, tags, readers) with 403.")
@click.option("--get", "get_path", metavar="PATH", help="Run one GET request, print the body and exit (no server).")
@click.option("--token", help="With --get: send `Authorization: Bearer TOKEN` (a reader's API token).")
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Server processes (one per core serves the most searches per second).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="A host name this server answers to besides loopback names and IP addresses "
    "(repeatable; '*' for any). Other names get 400: a guard against DNS rebinding.",
)
@click.option(
    "--no-owner",
    is_flag=True,
    help="Sign nobody in as the owner, even from this machine (for a server that a proxy or "
    "forwarder on this machine exposes to others).",
)
@click.option(
    "--allow-signup",
    is_flag=True,
    help="On a server reachable from the network: let visitors create readers on /signin "
    "(at most 5 per client address, then one per 10 minutes). Loopback servers always may.",
)
@click.pass_context
@handle_errors
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    read_only: bool,
    get_path: str | None,
    token: str | None,
    workers: int,
    allowed_hosts: tuple[str, ...],
    no_owner: bool,
    allow_signup: bool,
) -> None:
    """Serve the web UI and the HTTP API (every page has a .json twin; docs at /docs).

    Example:

        paperatlas serve --port 8000

        paperatlas serve --get "/search.json?q=user+simulators"
    """
    from ..web.serve import run_serve

    ctx.exit(
        run_serve(
            get_library(ctx),
            host,
            port,
            read_only,
            get_path,
            token,
            workers,
            allowed_hosts,
            owner=not no_owner,
            allow_signup=allow_signup,
        )
    )


COMMANDS = [serve]
