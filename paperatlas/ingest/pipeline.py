"""Ingest files into a store: read every file first, then write in batches.

Reading everything before the first write means a bad record anywhere fails the
ingest with nothing stored. Writing in batches (one transaction each) bounds the
work lost to a crash: the library then holds whole batches and a re-run finishes
the job, because unchanged records are recognised by their hash and skipped.
"""

from __future__ import annotations

import gc
import hashlib
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import settings
from ..errors import IngestError
from ..models import BadRecord, IngestReport, Paper
from ..store.sqlite import SQLiteStore
from .formats import FileError, Format, read_file
from .normalize import RecordError, preprint_link, swallowed_copy, title_key, to_paper

Progress = Callable[[int, int], None]  # (done, total)
# papers per write transaction; the environment override lets the crash test make batches small
BATCH_SIZE = int(settings.setting("ingest_batch").default)  # the default; $PAPERATLAS_INGEST_BATCH is read per ingest
# Normalising is pure CPU work (regexes over every abstract): above this many records it runs
# in forked worker processes, one per core (PAPERATLAS_INGEST_WORKERS=1 turns that off).
PARALLEL_MIN_RECORDS = 2000
_CHUNK = 250


@dataclass
class _Parsed:
    path: str
    source: str
    format: Format
    rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (location, row)
    defaults: dict[str, Any] = field(default_factory=dict)


_canonical_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str).encode


def record_hash(fmt: Format, row: dict[str, Any], defaults: dict[str, Any], overrides: dict[str, Any]) -> str:
    blob = _canonical_json([fmt.value, row, defaults, overrides])
    return hashlib.sha1(blob.encode("utf-8")).hexdigest()


# A new row's paper: (paper, dedup key, content hash), or the message of the RecordError it raised.
Normalized = tuple[Paper, str, str] | str
Prepared = tuple[str, Normalized | None]  # (record hash, None when the library holds that record)

# What forked workers prepare, inherited through fork so the rows are never pickled.
_WORK: tuple[list[_Parsed], dict[str, Any], dict[str, str]] | None = None


def _prepare(item: _Parsed, row: dict[str, Any], overrides: dict[str, Any], known: dict[str, str]) -> Prepared:
    rh = record_hash(item.format, row, item.defaults, overrides)
    if rh in known:
        return rh, None
    try:
        paper, key = to_paper(row, item.format, item.source, item.defaults, overrides)
    except (RecordError, ValueError, TypeError, AttributeError) as e:
        return rh, f"record {str(e) or type(e).__name__}"
    return rh, (paper, key, paper.content_hash())


def _prepare_chunk(job: tuple[int, int, int]) -> list[tuple[str, Any]]:
    """A worker's share: rows lo..hi of one file. Papers travel as plain tuples (pickling
    dataclasses costs 3x more)."""
    assert _WORK is not None
    parsed, overrides, known = _WORK
    fi, lo, hi = job
    item = parsed[fi]
    out: list[tuple[str, Any]] = []
    for _, row in item.rows[lo:hi]:
        rh, r = _prepare(item, row, overrides, known)
        out.append((rh, r if r is None or isinstance(r, str) else (tuple(r[0].__dict__.values()), r[1], r[2])))
    return out


def _workers(n_records: int) -> int:
    workers = settings.get("ingest_workers")
    if workers:
        return int(workers)
    if n_records < PARALLEL_MIN_RECORDS or not sys.platform.startswith("linux"):
        return 1  # fork is cheap, and safe for this pure-Python work, on Linux
    return min(len(os.sched_getaffinity(0)), 8)


def prepare_all(parsed: list[_Parsed], overrides: dict[str, Any], known: dict[str, str]) -> list[list[Prepared]]:
    """Hash every row and normalise the ones the library lacks: on every core when there are many."""
    global _WORK
    workers = _workers(sum(len(p.rows) for p in parsed))
    if workers == 1:
        return [[_prepare(item, row, overrides, known) for _, row in item.rows] for item in parsed]
    jobs = [
        (fi, lo, min(lo + _CHUNK, len(item.rows)))
        for fi, item in enumerate(parsed)
        for lo in range(0, len(item.rows), _CHUNK)
    ]
    out: list[list[Prepared]] = [[] for _ in parsed]
    _WORK = (parsed, overrides, known)
    gc.freeze()  # the children would otherwise touch (and so copy) every inherited object when they collect
    try:
        with multiprocessing.get_context("fork").Pool(workers, initializer=gc.disable) as pool:
            for (fi, _, _), res in zip(jobs, pool.imap(_prepare_chunk, jobs)):
                out[fi].extend(
                    (rh, r if r is None or isinstance(r, str) else (Paper(*r[0]), r[1], r[2])) for rh, r in res
                )
    finally:
        _WORK = None
        gc.unfreeze()
    return out


def ingest_files(
    store: SQLiteStore,
    paths: Sequence[str | Path],
    format: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    encoding: str = "utf-8",
    skip_bad: bool = False,
    progress: Progress | None = None,
    batch_size: int | None = None,
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
        item = _Parsed(str(path), Path(path).name, rr.format, list(rr.rows), rr.defaults)
        bad.extend(rr.bad)
        report.notes.extend(rr.notes)
        report.warnings.extend(rr.problems)
        if rr.shape:
            report.shapes[str(path)] = rr.shape
        parsed.append(item)
        report.files.append(str(path))
        report.formats[str(path)] = rr.format.value
    return store_parsed(store, parsed, report, bad, overrides, skip_bad, progress, batch_size)


@dataclass
class PreviewFile:
    """What an ingest of one file would store: its papers (with the line each starts at), how the
    file was read, and what was refused."""

    path: str
    format: str
    shape: str
    papers: list[tuple[str, Paper]] = field(default_factory=list)  # (location, paper)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    bad: list[BadRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "shape": self.shape,
            "papers": [
                {"location": loc} | {k: v for k, v in p.to_dict().items() if k != "raw"} for loc, p in self.papers
            ],
            "notes": self.notes,
            "warnings": self.warnings,
            "bad": [str(b) for b in self.bad],
        }


def preview_files(
    paths: Sequence[str | Path],
    format: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    encoding: str = "utf-8",
) -> list[PreviewFile]:
    """Read and normalise `paths` exactly as an ingest would, writing nothing anywhere."""
    overrides = {k: v for k, v in (("venue", venue), ("year", year)) if v not in (None, "")}
    out: list[PreviewFile] = []
    for path in paths:
        try:
            rr = read_file(path, format, encoding)
        except FileError as e:
            out.append(PreviewFile(str(path), "", "", bad=[e.bad]))
            continue
        pf = PreviewFile(
            str(path), rr.format.value, rr.shape, notes=list(rr.notes), warnings=list(rr.problems), bad=list(rr.bad)
        )
        for loc, row in rr.rows:
            try:
                paper, _ = to_paper(row, rr.format, Path(path).name, rr.defaults, overrides)
            except (RecordError, ValueError, TypeError, AttributeError) as e:
                pf.bad.append(
                    BadRecord(str(path), loc, f"record {str(e) or type(e).__name__}", "fix or remove the record")
                )
                continue
            pf.papers.append((loc, paper))
        out.append(pf)
    return out


@dataclass
class Records:
    """Papers that did not come from a file: a page a source fetched, the papers of a programme feed.
    `name` says where they came from in messages (a URL, a file); `source` is the papers' source;
    `state` (key, json) is saved in the same transaction as the last batch (a fetch's position)."""

    name: str
    source: str
    format: Format
    rows: list[tuple[str, dict[str, Any]]]  # (location, row)
    defaults: dict[str, Any] = field(default_factory=dict)
    state: tuple[str, str] | None = None


def ingest_rows(
    store: SQLiteStore,
    name: str,
    source: str,
    fmt: Format,
    rows: list[tuple[str, dict[str, Any]]],
    defaults: dict[str, Any] | None = None,
    skip_bad: bool = False,
    state: tuple[str, str] | None = None,
    batch_size: int | None = None,
) -> IngestReport:
    """Ingest rows that did not come from a file (a page a source fetched), exactly as `ingest` would.

    `name` says where the rows came from in error messages (a URL); `source` is the papers' source.
    `state` (key, json) is saved in the same transaction as the last batch: a fetch's position."""
    report = IngestReport(files=[name], formats={name: fmt.value})
    parsed = [_Parsed(name, source, fmt, list(rows), dict(defaults or {}))]
    return store_parsed(store, parsed, report, [], {}, skip_bad, None, batch_size, state)


def store_parsed(
    store: SQLiteStore,
    parsed: list[_Parsed],
    report: IngestReport,
    bad: list[BadRecord],
    overrides: dict[str, Any],
    skip_bad: bool,
    progress: Progress | None,
    batch_size: int | None,
    state: tuple[str, str] | None = None,
) -> IngestReport:
    """Normalise, plan and write parsed rows (the part of an ingest after reading)."""
    batch_size = batch_size or int(settings.get("ingest_batch"))
    known = store.record_hashes()
    store.fill_title_keys(title_key)
    by_id, by_key, by_pos = store.ident_index()
    total = sum(len(p.rows) for p in parsed)
    # normalise everything before writing, so a bad record stops the ingest with nothing stored
    prepared = prepare_all(parsed, overrides, known)
    plan: list[tuple[str, Paper | None, str, str, int | None, str]] = []  # (action, paper, chash, key, pos, rhash)
    planned_new: set[str] = set()
    tkeys = {
        id(res[0]): title_key(res[0].title)
        for results in prepared
        for _, res in results
        if res is not None and not isinstance(res, str) and not res[0].title_derived
    }
    matches = store.title_matches(list(tkeys.values()))
    absorb_into: dict[str, str] = {}  # new venue paper id -> the arXiv preprint it absorbs
    for item, results in zip(parsed, prepared):
        present = {known[h] for h, res in results if res is None}
        for pos, ((loc, _), (rh, res)) in enumerate(zip(item.rows, results)):
            if res is None:
                plan.append(("unchanged", None, "", "", None, rh))
                continue
            if isinstance(res, str):
                bad.append(BadRecord(item.path, loc, res, "fix or remove the record"))
                continue
            paper, key, chash = res
            source_id = paper.id != "h" + key[:15]
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
            if action == "new" and matches.get(tkeys.get(id(paper), "")):
                link = preprint_link(paper, matches[tkeys[id(paper)]], set(absorb_into.values()))
                if link is not None and link[0] == "into":
                    # the arXiv preprint of a paper the library has: one paper, known by both ids
                    by_key[key] = link[1]
                    action = "merged"
                elif link is not None:
                    absorb_into[paper.id] = link[1]
                else:
                    ids = [m[0] for m in matches[tkeys[id(paper)]]]
                    same = swallowed_copy(paper, list(store.get_papers(ids).values()))
                    if same is not None:
                        by_key[key] = same
                        action = "merged"
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
    starts = list(range(0, len(plan), batch_size)) or ([0] if state else [])
    for start in starts:
        batch = plan[start : start + batch_size]
        inserts, updates, aliases, records, tks, absorbs = [], [], [], [], [], []
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
            if tkeys.get(id(paper)):
                tks.append((paper.id, tkeys[id(paper)]))
            if paper.id in absorb_into:
                absorbs.append((absorb_into[paper.id], paper.id))
            records.append((rh, paper.id))
            setattr(report, action, getattr(report, action) + 1)
        last = start == starts[-1]
        store.write_batch(inserts, updates, aliases, records, state if last else None, tks, absorbs)
        report.merged += len(absorbs)
        done += len(batch)
        if progress:
            progress(done, total)
    return report
