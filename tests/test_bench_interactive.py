"""`paperatlas bench interactive` (bench/interactive.py): what it times and how it prints."""

from __future__ import annotations

import importlib
import re

from click.testing import CliRunner

from paperatlas_lab.bench.interactive import NOT_TIMED, OPS, table
from paperatlas.cli import cli
from paperatlas.web.app import ROUTE_MODULES


def test_every_get_page_of_the_app_is_timed_or_said_not_to_be() -> None:
    places = {
        "pid": "neurips2023/abc",
        "sid": "neurips-2023-poster-session-1",
        "author": "Jane%20Doe",
        "agenda_key": "k",
        "feed_key": "k",
        "tmp": "",
    }
    timed = [o.target.format(**places).split("?")[0] for o in OPS if o.surface == "web"]
    missing = []
    for module in [*ROUTE_MODULES, "paperatlas.web.openapi"]:
        for e in importlib.import_module(module).ENDPOINTS:
            if "GET" not in e.methods or e.path in NOT_TIMED:
                continue
            route = re.compile(
                "".join(".+" if part.startswith("{") else re.escape(part) for part in re.split(r"(\{[^}]+\})", e.path))
            )
            if not any(route.fullmatch(t) for t in timed):
                missing.append(e.path)
    assert missing == []


def test_the_table_puts_each_op_beside_the_baseline_version() -> None:
    row = {"cold_s": 2.0, "warm_p50_s": 0.5, "warm_p95_s": 0.7, "ok": True, "note": ""}
    slow = {**row, "warm_p50_s": 5.0}
    res = {
        "cpus": 2,
        "load_avg_at_start": [1.0],
        "load_avg_at_end": [1.0],
        "repeats": 3,
        "versions": {"baseline": "/tmp/main", "candidate": "this checkout"},
        "sizes": [
            {
                "size": "8k",
                "papers": 8088,
                "data": "real",
                "index_build_s": {"baseline": 3.0, "candidate": 3.0},
                "rows": [
                    {"surface": "cli", "op": "recommend", "baseline": slow, "candidate": row},
                    {"surface": "web", "op": "map", "baseline": row, "candidate": {**row, "ok": False, "note": "boom"}},
                ],
            }
        ],
    }
    out = table(res)
    line = next(x for x in out.splitlines() if "recommend" in x)
    assert "5.00" in line and "0.50" in line and "10.0" in line  # before, after, and how many times faster
    assert "FAILED" in next(x for x in out.splitlines() if x.startswith("web  map")) and "boom" in out


def test_an_unknown_op_is_a_usage_error(tmp_path) -> None:
    db = tmp_path / "x.db"
    db.write_bytes(b"")
    res = CliRunner().invoke(cli, ["bench", "interactive", "--db", str(db), "--only", "nonsense"])
    assert res.exit_code == 2, res.output
    assert "recommend" in res.output
