"""The `paperatlas mcp` command (the SDK is imported only when the server starts)."""

from __future__ import annotations

import click

from .common import Fail, get_library, handle_errors


@click.command("mcp")
@click.option(
    "--http",
    "port",
    type=click.IntRange(1, 65535),
    metavar="PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="With --http: the address to listen on (loopback only by default).",
)
@click.option("--read-only", is_flag=True, help="Refuse the tools that change the library (like, dislike).")
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="With --http: a host name this server answers to besides loopback names and IP addresses "
    "(repeatable; '*' for any). Other names get 421: a guard against DNS rebinding.",
)
@click.pass_context
@handle_errors
def mcp_cmd(ctx: click.Context, port: int | None, host: str, read_only: bool, allowed_hosts: tuple[str, ...]) -> None:
    """Serve the library to AI assistants over the Model Context Protocol (stdio by default).

    Tools: search, get_paper, similar, recommend, topics, like, dislike; papers are resources
    paper://{id}. Add it to an assistant's `mcpServers` config: see README, "Use it from an AI assistant".

    Example:

        paperatlas --db papers.db mcp

        paperatlas --db papers.db mcp --http 8765 --read-only
    """
    if (host != "127.0.0.1" or allowed_hosts) and port is None:
        raise Fail("--host and --allowed-host are for --http", "add --http PORT, or drop them to serve on stdio")
    lib = get_library(ctx)
    from ..mcp.server import create_server

    server = create_server(lib, read_only=read_only)
    if port is None:
        server.run("stdio")  # stdout carries the protocol: nothing else may print there
        return
    where = f"http://{host if ':' not in host else f'[{host}]'}:{port}/mcp"
    click.echo(f"paperatlas MCP server at {where}{' (read-only)' if read_only else ''}; Ctrl-C stops it", err=True)
    if not _loopback(host):  # MCP has no sign-in here: whoever reaches the port acts on the library
        click.echo(
            f"warning: --host {host} lets anyone who can reach port {port} use this library"
            + ("" if read_only else " and record likes; add --read-only, or")
            + " keep the default 127.0.0.1",
            err=True,
        )
    if "*" in (h.strip() for h in allowed_hosts):
        click.echo(
            "warning: --allowed-host '*' answers to any host name, so a web page on any site can call "
            "these tools through DNS rebinding. Name the hosts you use instead: --allowed-host NAME.",
            err=True,
        )
    from ..mcp.http import run_http

    run_http(server, host, port, allowed_hosts)


def _loopback(host: str) -> bool:
    import ipaddress

    try:
        return host.strip("[]").lower() == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


COMMANDS = [mcp_cmd]
