"""A real PostgreSQL server for the tests: initdb into a temporary folder, pg_ctl start on a free
loopback port, stopped at the end. Debian's postgresql-15 (or any PostgreSQL whose bin folder
is found below) provides the binaries; CI installs it (.ci/run)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ports import free_port


def pg_bin() -> Path | None:
    """The folder holding initdb and pg_ctl ($PAPERATLAS_PG_BIN, PATH, or /usr/lib/postgresql/*/bin)."""
    env = os.environ.get("PAPERATLAS_PG_BIN")
    if env and (Path(env) / "initdb").exists():
        return Path(env)
    cands = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if cands:  # before PATH: Debian puts version-switching wrappers there
        return Path(cands[0]).parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class PgServer:
    """One throw-away cluster. `url(db)` creates database `db` on first use."""

    def __init__(self) -> None:
        bindir = pg_bin()
        if bindir is None:
            raise RuntimeError("PostgreSQL binaries not found: apt-get install postgresql-15")
        self.bin = bindir
        self.root = Path(tempfile.mkdtemp(prefix="paperatlas-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user = "paperatlas"
        # initdb and postgres refuse to run as root: run them as the postgres system user then
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.root, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-sync")
        self.start()
        self._dbs: set[str] = set()

    def start(self) -> None:
        """Start the server (again, after kill(): same folder, same port; the killed server's
        backends may hold its shared memory for a moment, so a refused start is tried again)."""
        deadline = time.monotonic() + 30
        while True:
            try:
                self._run(
                    "pg_ctl",
                    "-D",
                    str(self.data),
                    "-l",
                    str(self.root / "log"),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
                    "start",
                )
                self.running = True
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def kill(self) -> None:
        """kill -9 the postmaster, as a crash would; its backends end when they notice it is gone."""
        import signal

        pid = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)
        self.running = False
        for _ in range(200):  # wait until the port is free and the backends are gone
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        (self.data / "postmaster.pid").unlink(missing_ok=True)

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run([*self._as, str(self.bin / tool), *args], capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")

    def url(self, db: str) -> str:
        if db not in self._dbs:
            self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, db)
            self._dbs.add(db)
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{db}"

    def stop(self) -> None:
        try:
            if getattr(self, "running", True):
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


_counter = [0]


def fresh_db_name(prefix: str = "t") -> str:
    _counter[0] += 1
    return f"{prefix}{os.getpid()}_{_counter[0]}_{int(time.time() * 1000) % 100000}"
