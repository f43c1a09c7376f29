"""`paperatlas eval tldr`: the extractive TL;DR against the authors' own TL;DRs (ICLR 2024 records of
the venue data carry `tldr`), with ROUGE, against the first sentence of the abstract as baseline.

The split is fixed by a hash of each paper id (one in five is test), so every run sees the same
papers; `--tune` searches the cue weights on the train split only, and test is only ever reported."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import random
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from paperatlas import settings
from paperatlas.llm.extractive import DEFAULT_WEIGHTS, Weights, extractive_tldr, first_sentence, rouge


def default_venue_file() -> str | None:
    for root in (settings.raw("shared_data"), "../shared/data", "/work/shared/data"):
        if root and (Path(root) / "ml_venue_papers" / "papers.jsonl.gz").exists():
            return str(Path(root) / "ml_venue_papers" / "papers.jsonl.gz")
    return None


def split_of(paper_id: str) -> str:
    """ "test" for one paper in five (by a hash of its id), else "train"."""
    return "test" if int(hashlib.sha1(paper_id.encode()).hexdigest(), 16) % 5 == 0 else "train"


def load_tldr_records(path: str | Path) -> list[dict[str, Any]]:
    """Records with an abstract and the authors' TL;DR (in the venue data: the ICLR 2024 ones)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    out = []
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        for line in f:
            r = json.loads(line)
            if (r.get("tldr") or "").strip() and (r.get("abstract") or "").strip():
                out.append(r)
    return out


def mean_rouge(summarise: Callable[[str], str], records: Iterable[dict[str, Any]]) -> dict[str, float]:
    tot = {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    n = 0
    for r in records:
        s = rouge(summarise(r["abstract"]), r["tldr"])
        for k in tot:
            tot[k] += s[k]
        n += 1
    return {k: round(v / max(n, 1), 4) for k, v in tot.items()}


_GRID: dict[str, list[Any]] = {
    "contrib": [2.0, 3.0, 4.0],
    "we": [0.5, 1.0, 1.5],
    "result": [0.0, 0.5, 1.0],
    "background": [-2.5, -1.5, -0.5],
    "first": [-0.5, 0.0, 0.5, 1.0],
    "position": [-0.3, -0.15, -0.05, 0.0],
    "short": [-2.0],
    "long": [-2.0, -1.0, 0.0],
    "long_words": [35, 45, 60],
}


def tune(train: list[dict[str, Any]], tries: int = 40, seed: int = 0) -> tuple[Weights, float]:
    """The best of `tries` random weight settings by ROUGE-L on `train` (the defaults compete too)."""
    rng = random.Random(seed)
    best_w = DEFAULT_WEIGHTS
    best = mean_rouge(lambda a: extractive_tldr(a, best_w), train)["rougeL"]
    for _ in range(tries):
        w = Weights(**{k: rng.choice(v) for k, v in _GRID.items()})
        r = mean_rouge(lambda a, w=w: extractive_tldr(a, w), train)["rougeL"]
        if r > best:
            best_w, best = w, r
    return best_w, best


@click.command("tldr")
@click.option(
    "--data",
    "data",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Venue records with `tldr` (default: ml_venue_papers/papers.jsonl.gz of the shared data).",
)
@click.option("--split", type=click.Choice(["test", "train"]), default="test", show_default=True)
@click.option("--tune", "do_tune", is_flag=True, help="Search the cue weights on the train split first.")
@click.option("--json", "as_json", is_flag=True)
def tldr_cmd(data: str | None, split: str, do_tune: bool, as_json: bool) -> None:
    """The extractive TL;DR against the authors' TL;DRs (ROUGE-1/2/L F1), first sentence as baseline.

    Example:

        paperatlas eval tldr --split test
    """
    data = data or default_venue_file()
    if not data:
        raise click.ClickException("no venue data found\nFix: pass --data ml_venue_papers/papers.jsonl.gz")
    records = load_tldr_records(data)
    parts = {
        "train": [r for r in records if split_of(r["id"]) == "train"],
        "test": [r for r in records if split_of(r["id"]) == "test"],
    }
    weights = DEFAULT_WEIGHTS
    started = time.perf_counter()
    tuned: dict[str, Any] | None = None
    if do_tune:
        weights, score = tune(parts["train"])
        tuned = {"weights": dataclasses.asdict(weights), "train_rougeL": round(score, 4)}
    chosen = parts[split]
    result = {
        "data": data,
        "split": split,
        "papers": len(chosen),
        "train_papers": len(parts["train"]),
        "extractive": mean_rouge(lambda a: extractive_tldr(a, weights), chosen),
        "first_sentence": mean_rouge(first_sentence, chosen),
        "tuned_on_train": tuned,
        "seconds": round(time.perf_counter() - started, 2),
    }
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"{split} split: {len(chosen)} ICLR 2024 papers with the authors' TL;DR ({data})")
    for name in ("extractive", "first_sentence"):
        r = result[name]
        click.echo(f"  {name:<15} ROUGE-1 {r['rouge1']:.4f}  ROUGE-2 {r['rouge2']:.4f}  ROUGE-L {r['rougeL']:.4f}")
    if tuned:
        click.echo(f"  weights tuned on train ({len(parts['train'])} papers): {tuned}")
