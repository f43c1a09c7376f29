"""Reading a pasted list: the paste reader on thousands of real records, beside the readers of the
same records in the shapes that need no guessing (JSON lines, and untitled abstracts one per
paragraph: the seed shape), all in the same run.

The records are rendered as the two shapes a long paste takes: a numbered list with no blank line
anywhere (`N. Title` / authors / abstract) and title/authors/abstract blocks with a blank line
between papers. Each reading is timed in CPU seconds (what the reader costs, whatever else the
machine runs) and wall seconds; the exact titles it found are counted, so a faster reader that
reads worse shows it."""

from __future__ import annotations

import gzip
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paperatlas.ingest import textlist
from paperatlas.ingest.formats import read_file

_CACHES = (
    textlist.is_author_line,
    textlist.is_title_like,
    textlist.numbered,
    textlist._is_name,
    textlist._author_parts,
)


def _records(path: Path, n: int) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("title") and r.get("authors") and r.get("abstract"):
                out.append(r)
                if len(out) >= n:
                    break
    return out


def render(records: list[dict[str, Any]], folder: Path) -> dict[str, Path]:
    """The same records as each shape read here, one file each."""
    shapes: dict[str, Callable[[int, dict[str, Any]], str]] = {
        "numbered, no blank lines": lambda i, r: f"{i}. {r['title']}\n{', '.join(r['authors'])}\n{r['abstract']}\n",
        "title blocks, blank lines": lambda i, r: f"{r['title']}\n{', '.join(r['authors'])}\n{r['abstract']}\n\n",
        "baseline: untitled abstracts (seed shape)": lambda i, r: f"{r['abstract']}\n\n",
    }
    files = {}
    for k, (name, line) in enumerate(shapes.items()):
        p = folder / f"paste-{k}.txt"
        p.write_text("".join(line(i, r) for i, r in enumerate(records, 1)), encoding="utf-8")
        files[name] = p
    p = folder / "papers.jsonl"
    fields = ("title", "authors", "abstract")
    p.write_text("".join(json.dumps({f: r[f] for f in fields}) + "\n" for r in records), encoding="utf-8")
    files["baseline: JSON lines"] = p
    return files


def _time(path: Path, repeats: int) -> tuple[float, float, Any]:
    cpu, wall, res = [], [], None
    for _ in range(repeats):
        for fn in _CACHES:  # each run reads as a first paste does, with no line seen before
            fn.cache_clear()
        c, w = time.process_time(), time.perf_counter()
        res = read_file(path)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(cpu), statistics.median(wall), res


def bench_paste(path: Path, n: int = 8088, repeats: int = 3) -> dict[str, Any]:
    records = _records(path, n)
    titles = {r["title"] for r in records}
    out: dict[str, Any] = {"papers": len(records), "repeats": repeats, "shapes": {}}
    with tempfile.TemporaryDirectory() as d:
        files = render(records, Path(d))
        for name, file in files.items():
            cpu, wall, res = _time(file, repeats)
            found = sum(1 for _, row in res.rows if row.get("title") in titles)
            out["shapes"][name] = {
                "cpu_s_median": round(cpu, 3),
                "wall_s_median": round(wall, 3),
                "papers_per_cpu_s": round(len(records) / cpu) if cpu else None,
                "rows": len(res.rows),
                "exact_titles": found if not name.startswith("baseline: untitled") else None,
                "problems": len(res.problems),
            }
    base = out["shapes"]["baseline: JSON lines"]["cpu_s_median"]
    seed = out["shapes"]["baseline: untitled abstracts (seed shape)"]["cpu_s_median"]
    for name, s in out["shapes"].items():
        if not name.startswith("baseline"):
            s["cpu_vs_jsonl"] = round(s["cpu_s_median"] / base, 2) if base else None
            s["cpu_vs_seed_shape"] = round(s["cpu_s_median"] / seed, 2) if seed else None
    return out


def table(r: dict[str, Any]) -> str:
    lines = [
        f"{r['papers']} papers, median of {r['repeats']} runs (CPU seconds: what the reader costs; wall: on this machine now)",
        f"{'shape':44} {'cpu s':>7} {'wall s':>7} {'papers/s':>9} {'rows':>6} {'titles':>7} {'vs jsonl':>9}",
    ]
    for name, s in r["shapes"].items():
        titles = "-" if s["exact_titles"] is None else str(s["exact_titles"])
        ratio = f"{s['cpu_vs_jsonl']:.2f}x" if "cpu_vs_jsonl" in s else "-"
        lines.append(
            f"{name:44} {s['cpu_s_median']:7.2f} {s['wall_s_median']:7.2f} {s['papers_per_cpu_s']:9} "
            f"{s['rows']:6} {titles:>7} {ratio:>9}"
        )
    return "\n".join(lines)
