"""`paperatlas serve`: run the app under uvicorn, or answer one request (--get) in-process."""

from __future__ import annotations

import atexit
import multiprocessing
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click

from .. import settings
from ..library import Library
from ..store import is_postgres_url, redact


def tune_for_serving() -> None:
    """One compute thread per request: concurrent requests use the cores side by side.

    Measured on 2 cores: OpenBLAS worker threads spinning after each tiny matrix-vector
    product took a hybrid search from ~9 to ~23 ms of CPU, and 2 ONNX threads per query
    were 2x slower per query than 1 once requests overlap."""
    settings.put_default("embed_threads", 1)  # read when the model is created
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - a dependency; without it only speed suffers
        pass


def app_from_env() -> Any:
    """The app of one `serve --workers N` process: each opens the library itself."""
    from .app import create_app, warm

    tune_for_serving()
    library = Library(settings.get("serve_db"))
    hosts = [h for h in settings.get("serve_hosts").split(",") if h]
    # the last connection's close removes the -wal/-shm files beside the library (read-only or not)
    atexit.register(library.close)
    app = create_app(
        library,
        read_only=settings.get("serve_read_only"),
        inline=True,
        allowed_hosts=hosts,
        owner_signin=settings.get("serve_owner"),
        signups=settings.get("serve_signups"),
    )
    warm(library)
    return app


def _listen(host: str, port: int, reuse_port: bool = False) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    # accepted connections inherit this; without it a keep-alive response written in two parts
    # waits ~40 ms for the client's delayed ACK (measured: 44 ms per request instead of 0.5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    return sock


def _uvicorn_options() -> dict[str, Any]:
    options: dict[str, Any] = {"log_level": "warning", "access_log": False, "lifespan": "off"}
    try:
        from .guard import GuardedHttpTools, max_connections

        # httptools: about twice h11's throughput for small responses; guarded by a header deadline and a
        # connection cap, and uvicorn's own 503 once that many requests are in flight
        options.update(http=GuardedHttpTools, limit_concurrency=max_connections())
    except ImportError:  # pragma: no cover - httptools is a dependency
        options["http"] = "h11"
    return {
        **options,
        "h11_max_incomplete_event_size": 16 * 1024,  # headers of at most 16 KiB where h11 serves
    }


def _worker(host: str, port: int, ready: Any) -> None:
    """One `serve --workers N` process: its own listening socket on the shared port."""
    import uvicorn

    sock = _listen(host, port, reuse_port=True)
    sock.listen(2048)  # connections queue from now on, while the library loads
    ready.set()
    config = uvicorn.Config("paperatlas.web.serve:app_from_env", factory=True, **_uvicorn_options())
    uvicorn.Server(config).run(sockets=[sock])


def _announce(
    library: Library,
    host: str,
    port: int,
    read_only: bool,
    workers: int,
    allowed_hosts: tuple[str, ...] = (),
    signups: bool = False,
) -> None:
    shown = f"[{host}]" if ":" in host else host
    mode = " (read-only)" if read_only else ""
    procs = f", {workers} processes" if workers > 1 else ""
    click.echo(
        f"paperatlas: serving {redact(library.path)} ({library.count()} papers){mode}{procs} at "
        f"http://{shown}:{port}/  (Ctrl+C to stop)"
    )
    if not is_loopback_host(host):
        click.echo(
            "warning: listening beyond this machine; anyone who can reach it can read the papers"
            + (
                ""
                if read_only or not signups
                else " and create readers (at most 5 per address, then one per 10 minutes)"
            )
            + ". Readers sign in with their token (`paperatlas readers token NAME`); host names other "
            "than IP addresses need --allowed-host NAME.",
            err=True,
        )
    if "*" in (h.strip() for h in allowed_hosts):
        click.echo(
            "warning: --allowed-host '*' answers to any host name, so a web page on any site can read this "
            "server's pages through DNS rebinding (its requests never act as the owner). Name the hosts "
            "you use instead: --allowed-host NAME.",
            err=True,
        )
    sys.stdout.flush()


def _supervise(host: str, port: int, workers: int, on_ready: Any) -> None:
    """Run `workers` server processes, each listening on (host, port) with SO_REUSEPORT.

    With one shared listening socket (uvicorn's --workers), a burst of new keep-alive
    connections (a browser's 6, a benchmark's 8) lands whole in whichever worker wakes
    first, and the others idle for the connections' lifetime: measured 130-140 hybrid
    searches/s with one of two cores busy, in 2 runs out of 3. With SO_REUSEPORT the
    kernel spreads connections over the workers' sockets. Dead workers are restarted."""
    ctx = multiprocessing.get_context("spawn")

    def start() -> Any:
        ready = ctx.Event()
        p = ctx.Process(target=_worker, args=(host, port, ready), name="paperatlas-serve", daemon=False)
        p.start()
        if not ready.wait(60):
            raise click.ClickException("a server worker did not start")
        return p

    procs = [start() for _ in range(workers)]
    on_ready()  # every worker listens: the URL works from now on
    stop: list[bool] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(True))
    try:
        while not stop:
            time.sleep(0.2)
            for i, p in enumerate(procs):
                if not p.is_alive() and not stop:
                    click.echo(f"paperatlas: worker {p.pid} exited ({p.exitcode}); restarting it", err=True)
                    procs[i] = start()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()  # uvicorn finishes the requests in flight, then exits
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()


def embed_in_background(library: Library, report_every: float = 10.0) -> threading.Thread | None:
    """Embed the papers that have no vector yet while the server answers.

    Keyword search covers every stored paper at once; search by meaning grows batch by batch (each
    batch of vectors is committed, and the next search uses it). Progress: stderr, /stats and the
    banner every page shows while papers wait."""
    st = library.embedding_status()
    if not st["waiting"]:
        return None
    click.echo(
        f"paperatlas: embedding {st['waiting']} papers in the background; keyword search works now, "
        "search by meaning grows as they are done (progress at /stats)",
        err=True,
    )

    def work() -> None:
        last = [time.monotonic()]

        def progress(done: int, total: int) -> None:
            if time.monotonic() - last[0] >= report_every or done == total:
                last[0] = time.monotonic()
                click.echo(f"paperatlas: embedded {done} of {total} papers", err=True)

        try:
            library.embed(progress=progress)
        except Exception as e:  # noqa: BLE001 - the server keeps serving keyword search; say why meaning waits
            click.echo(f"paperatlas: background embedding stopped: {e}", err=True)

    t = threading.Thread(target=work, name="embed-background", daemon=True)
    t.start()
    return t


def free_port_after(host: str, port: int, tries: int = 100) -> int:
    """The first port above `port` that `host` can bind right now (0 when none of the next `tries`:
    the OS then picks one). A suggestion of `port + 1` is often busy too: a second demo, a dev server."""
    for p in range(port + 1, min(port + 1 + tries, 65536)):
        try:
            _listen(host, p).close()
        except OSError:
            continue
        return p
    return 0


def _port_fix(host: str, port: int) -> str:
    """The fix for a busy port, in the words of the command that started us: `make demo` passes
    PAPERATLAS_PORT_HINT="make demo PORT={port}", since make takes PORT=, not --port."""
    free = free_port_after(host, port)
    hint = settings.get("port_hint")
    if hint and "{port}" in hint:
        return f"pick another port: {hint.format(port=free)} (free now; PORT=0: any free port)"
    return f"pick another port: --port {free} (free now; --port 0: any free port)"


def is_loopback_host(host: str) -> bool:
    """Whether `serve --host` binds to this machine only (the owner may then skip sign-in)."""
    import ipaddress

    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run_serve(
    library: Library,
    host: str,
    port: int,
    read_only: bool,
    get_path: str | None,
    token: str | None = None,
    workers: int = 1,
    allowed_hosts: tuple[str, ...] = (),
    owner: bool = True,
    allow_signup: bool = False,
) -> int:
    """Serve until interrupted (returns 0), or run one GET and return 0 if it succeeded, 1 if not.

    `owner=False` (`--no-owner`) signs nobody in as the owner; `allow_signup` lets visitors of a
    server bound beyond loopback create readers (a loopback server always lets them)."""
    from .app import create_app, request_once, warm

    # the last connection's close removes the -wal/-shm files beside the library (read-only or not)
    atexit.register(library.close)
    # --get runs in this process for the person at this terminal: they are the owner
    owner = get_path is not None or (owner and is_loopback_host(host))
    signups = allow_signup or is_loopback_host(host)
    app = create_app(library, read_only=read_only, allowed_hosts=allowed_hosts, owner_signin=owner, signups=signups)
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

    # One process per core shares the port through SO_REUSEPORT (Linux); elsewhere a port of
    # its own per worker is not balanced, so uvicorn's shared socket is used instead.
    reuse_port = workers > 1 and sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
    try:
        if reuse_port:
            # SO_REUSEPORT would also share a port held by another server with the option set
            # (a second `serve --workers`): check with a plain bind that the port is free first
            probe = _listen(host, port)
            port = probe.getsockname()[1]
            probe.close()
        sock = _listen(host, port, reuse_port)
    except OSError as e:
        raise click.ClickException(
            f"cannot listen on {host}:{port}: {e.strerror}. Fix: {_port_fix(host, port)}"
        ) from None
    real_port = sock.getsockname()[1]
    # warm only once the port is ours: a busy port then fails at once, and never exits while the
    # warming threads are still inside native code (which crashed the interpreter on its way out)
    if workers <= 1:
        tune_for_serving()
        warm(library)
    if not read_only:
        # one process owns the build; with --workers, `paperatlas embed --multilingual` does it
        app.state.web.build_multilingual = workers <= 1

    def ready() -> None:
        """The URL line first, then background work whose progress lines follow it."""
        _announce(library, host, real_port, read_only, workers, allowed_hosts, signups)
        if not read_only:  # a read-only server never writes to the file, vectors included
            embed_in_background(library)

    if workers > 1:
        # a PostgreSQL URL goes to the workers as it is; a file path absolute, whatever their cwd
        settings.put("serve_db", library.path if is_postgres_url(library.path) else str(Path(library.path).resolve()))
        settings.put("serve_read_only", read_only)
        settings.put("serve_hosts", ",".join(allowed_hosts))
        settings.put("serve_owner", owner)
        settings.put("serve_signups", signups)
    if reuse_port:
        # this socket only holds the port: it never listens, so the kernel gives it no connections
        try:
            _supervise(host, real_port, workers, ready)
        finally:
            sock.close()
        return 0
    sock.listen(2048)  # connections queue from now on, so the URL printed below already works
    ready()

    if workers > 1:
        from uvicorn.supervisors import Multiprocess

        config = uvicorn.Config(
            "paperatlas.web.serve:app_from_env", factory=True, workers=workers, **_uvicorn_options()
        )
        try:
            Multiprocess(config, sockets=[sock]).run()
        except TypeError:  # uvicorn < 0.30 took the target explicitly
            Multiprocess(config, target=uvicorn.Server(config).run, sockets=[sock]).run()  # type: ignore[call-arg]
        return 0
    server = uvicorn.Server(uvicorn.Config(app, **_uvicorn_options()))
    server.run(sockets=[sock])
    return 0
