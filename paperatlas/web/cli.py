"""`paperatlas serve`: run the app under uvicorn, or answer one request (--get) in-process."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path
from typing import Any

import click

from ..library import Library


def tune_for_serving() -> None:
    """One compute thread per request: concurrent requests use the cores side by side.

    Measured on 2 cores: OpenBLAS worker threads spinning after each tiny matrix-vector
    product took a hybrid search from ~9 to ~23 ms of CPU, and 2 ONNX threads per query
    were 2x slower per query than 1 once requests overlap."""
    os.environ.setdefault("PAPERATLAS_EMBED_THREADS", "1")  # read when the model is created
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - a dependency; without it only speed suffers
        pass


class FairAcceptLoop(asyncio.SelectorEventLoop):
    """An event loop that accepts one connection per wake-up (asyncio takes up to `backlog`).

    With `--workers N` every worker waits on the same listening socket. A burst of new
    keep-alive connections (a browser's 6, a benchmark's 8) used to land whole in the
    first worker to wake, leaving the others idle for the connections' lifetime: measured
    119 hybrid searches/s with one of two cores busy. One accept per wake-up lets every
    idle worker take its share."""

    def _accept_connection(self, protocol_factory: Any, sock: Any, sslcontext: Any = None, server: Any = None,
                           backlog: int = 100, *args: Any, **kwargs: Any) -> None:
        super()._accept_connection(protocol_factory, sock, sslcontext, server, 1,  # type: ignore[misc]
                                   *args, **kwargs)


def app_from_env() -> Any:
    """The app of one `serve --workers N` process: each opens the library itself."""
    from .app import create_app, warm

    tune_for_serving()
    library = Library(os.environ["PAPERATLAS_SERVE_DB"])
    app = create_app(library, read_only=os.environ.get("PAPERATLAS_SERVE_READ_ONLY") == "1", inline=True)
    warm(library)
    return app


def run_serve(library: Library, host: str, port: int, read_only: bool, get_path: str | None,
              token: str | None = None, workers: int = 1) -> int:
    """Serve until interrupted (returns 0), or run one GET and return 0 if it succeeded, 1 if not."""
    from .app import create_app, request_once, warm

    app = create_app(library, read_only=read_only)
    if get_path is not None:
        headers = [("authorization", f"Bearer {token}")] if token else []
        status, _, body = request_once(app, get_path, headers=headers)
        sys.stdout.buffer.write(body)
        if body and not body.endswith(b"\n"):
            sys.stdout.buffer.write(b"\n")
        sys.stdout.flush()
        if status >= 400:
            click.echo(f"HTTP {status}", err=True)
        return 0 if status < 400 else 1

    import uvicorn

    if workers <= 1:
        tune_for_serving()
        warm(library)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit this; without it a keep-alive response written in two parts
    # waits ~40 ms for the client's delayed ACK (measured: 44 ms per request instead of 0.5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        raise click.ClickException(f"cannot listen on {host}:{port}: {e.strerror}. "
                                   "Fix: pick another --port (0 = any free port)") from None
    sock.listen(2048)  # connections queue from now on, so the URL printed below already works
    real_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    mode = " (read-only)" if read_only else ""
    procs = f", {workers} processes" if workers > 1 else ""
    click.echo(f"paperatlas: serving {library.path} ({library.count()} papers){mode}{procs} at "
               f"http://{shown}:{real_port}/  (Ctrl+C to stop)")
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo("warning: listening beyond this machine; anyone who can reach it can read the library"
                   + ("" if read_only else " and change stars and tags (add --read-only)"), err=True)
    sys.stdout.flush()
    try:
        import httptools  # noqa: F401

        http = "httptools"  # about twice h11's throughput for small responses
    except ImportError:  # pragma: no cover
        http = "h11"
    if workers > 1:
        from uvicorn.supervisors import Multiprocess

        os.environ["PAPERATLAS_SERVE_DB"] = str(Path(library.path).resolve())
        os.environ["PAPERATLAS_SERVE_READ_ONLY"] = "1" if read_only else "0"
        config = uvicorn.Config("paperatlas.web.cli:app_from_env", factory=True, workers=workers,
                                log_level="warning", access_log=False, http=http, lifespan="off",
                                loop="paperatlas.web.cli:FairAcceptLoop")
        try:
            Multiprocess(config, sockets=[sock]).run()
        except TypeError:  # uvicorn < 0.30 took the target explicitly
            Multiprocess(config, target=uvicorn.Server(config).run, sockets=[sock]).run()  # type: ignore[call-arg]
        return 0
    config = uvicorn.Config(app, log_level="warning", access_log=False, http=http, lifespan="off")
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0
