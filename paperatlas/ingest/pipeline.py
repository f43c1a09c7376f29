"""Ingest files into a store: read every file first, then write in batches.

Reading everything before the first write means a bad record anywhere fails the
ingest with nothing stored. Writing in batches (one transaction each) bounds the
work lost to a crash: the library then holds whole batches and a re-run finishes
the job, because unchanged records are recognised by their hash and skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import IngestError
from ..models import BadRecord, IngestReport, Paper
from ..store.sqlite import SQLiteStore
from .formats import FileError, Format, read_file
from .normalize import RecordError, to_paper

Progress = Callable[[int, int], None]  # (done, total)
# papers per write transaction; the environment override lets the crash test make batches small
BATCH_SIZE = int(os.environ.get("PAPERATLAS_INGEST_BATCH", "1000"))


@dataclass
class _Parsed:
    path: str
    source: str
    format: Format
    rows: list[tuple[int, str, dict[str, Any], str]] = field(default_factory=list)  # (pos, location, row, hash)
    defaults: dict[str, Any] = field(default_factory=dict)


def record_hash(fmt: Format, row: dict[str, Any], defaults: dict[str, Any], overrides: dict[str, Any]) -> str:
    blob = json.dumps([fmt.value, row, defaults, overrides], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(blob.encode("utf-8")).hexdigest()


def ingest_files(
    store: SQLiteStore,
    paths: Sequence[str | Path],
    format: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    encoding: str = "utf-8",
    skip_bad: bool = False,
    progress: Progress | None = None,
    batch_size: int = BATCH_SIZE,
) -> IngestReport:
    """Ingest `paths` into `store`. Raises IngestError (nothing written) on bad input
    unless `skip_bad`, in which case the bad records are listed in the report."""
    report = IngestReport()
    overrides = {k: v for k, v in (("venue", venue), ("year", year)) if v not in (None, "")}
    parsed: list[_Parsed] = []
    bad: list[BadRecord] = []
    for path in paths:
        try:
            rr = read_file(path, format, encoding)
        except FileError as e:
            bad.append(e.bad)
            continue
        item = _Parsed(str(path), Path(path).name, rr.format, defaults=rr.defaults)
        for pos, (loc, row) in enumerate(rr.rows):
            item.rows.append((pos, loc, row, record_hash(rr.format, row, rr.defaults, overrides)))
        bad.extend(rr.bad)
        parsed.append(item)
        report.files.append(str(path))
        report.formats[str(path)] = rr.format.value

    known = store.record_hashes()
    by_id, by_key, by_pos = store.ident_index()
    total = sum(len(p.rows) for p in parsed)
    # normalise everything before writing, so a bad record stops the ingest with nothing stored
    plan: list[tuple[str, Paper | None, str, str, int | None, str]] = []  # (action, paper, chash, key, pos, rhash)
    planned_new: set[str] = set()
    for item in parsed:
        present = {known[h] for _, _, _, h in item.rows if h in known}
        for pos, loc, row, rh in item.rows:
            if rh in known:
                plan.append(("unchanged", None, "", "", None, rh))
                continue
            try:
                paper, key = to_paper(row, item.format, item.source, item.defaults, overrides)
            except (RecordError, ValueError, TypeError, AttributeError) as e:
                bad.append(BadRecord(item.path, loc, f"record {str(e) or type(e).__name__}", "fix or remove the record"))
                continue
            source_id = paper.id != "h" + key[:15]
            chash = paper.content_hash()
            if paper.id in planned_new:
                # the same id twice in this input: the first one wins
                by_key.setdefault(key, paper.id)
                action = "merged"
            elif paper.id in by_id:
                action = "unchanged" if by_id[paper.id] in (chash, "") else "updated"
            elif key in by_key:
                action = "merged"
            elif not source_id and (item.source, pos) in by_pos and by_pos[(item.source, pos)] not in present:
                # an id-less record edited in place: keep the id it had
                paper.id = by_pos[(item.source, pos)]
                chash = paper.content_hash()
                action = "updated"
            else:
                action = "new"
            if action == "new":
                planned_new.add(paper.id)
            if action in ("new", "updated"):
                by_id[paper.id] = chash
                by_key.setdefault(key, paper.id)
            plan.append((action, paper, chash, key, pos, rh))

    if bad and not skip_bad:
        raise IngestError(bad)
    report.bad = bad

    done = 0
    for start in range(0, len(plan), batch_size):
        batch = plan[start : start + batch_size]
        inserts, updates, aliases, records = [], [], [], []
        for action, paper, chash, key, pos, rh in batch:
            if action == "unchanged":
                report.unchanged += 1
                if paper is not None:
                    records.append((rh, paper.id))
                continue
            assert paper is not None
            if action == "merged":
                report.merged += 1
                target = by_key[key]
                if paper.id != target:
                    aliases.append((paper.id, target))
                records.append((rh, target))
                continue
            (inserts if action == "new" else updates).append((paper, chash, key, pos))
            records.append((rh, paper.id))
            setattr(report, action, getattr(report, action) + 1)
        store.write_batch(inserts, updates, aliases, records)
        done += len(batch)
        if progress:
            progress(done, total)
    return report
