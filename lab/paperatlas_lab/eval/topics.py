"""`paperatlas eval topics PAPERS_FILE`: do the topics match the authors' own areas?

ICLR 2024 papers carry an author-chosen `primary_area` (20 areas). The papers that have
one go into a temporary library (embedded through the shared vector cache), the topic
pipeline clusters them exactly as `paperatlas topics build` would (coarse level, k
chosen automatically), and NMI / ARI against `primary_area` are reported beside a
baseline measured in the same run: k-means on TF-IDF vectors of the same texts with the
same k and seed.

Tuning protocol: the pipeline's choices (cluster in a 5-D neighbour embedding, the k
range 10-40 and the max-mean-silhouette rule over 5 seeds) were made on the ICLR papers
whose sha1(id) is even ("half A") and on NeurIPS 2023 (no labels: silhouette only). The report gives the
full set (as asked) and the untouched half B on its own.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np

from paperatlas.errors import PaperatlasError

LABEL_FIELD = "primary_area"


def read_labelled(path: str | Path, field: str = LABEL_FIELD) -> list[dict[str, Any]]:
    """Records of a JSONL(.gz) file that have a non-empty `field`."""
    opener = gzip.open if str(path).endswith(".gz") else open
    out: list[dict[str, Any]] = []
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if str(r.get(field) or "").strip():
                out.append(r)
    if not out:
        raise PaperatlasError(
            f"no record in {path} has a {field!r}",
            "use the ml_venue_papers file (its ICLR 2024 records carry primary_area)",
        )
    return out


def half_b(pid: str) -> bool:
    """The held-out half: ids whose sha1 is odd (half A, even, was used for tuning)."""
    return int(hashlib.sha1(pid.encode("utf-8")).hexdigest(), 16) % 2 == 1


def tfidf_kmeans(texts: Sequence[str], k: int, seed: int) -> np.ndarray:
    """The baseline: scikit-learn TF-IDF (English stop words, sublinear tf) + k-means."""
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    m = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=2, max_df=0.5).fit_transform(texts)
    return KMeans(k, n_init=3, random_state=seed).fit_predict(m)


def score(truth: Sequence[str], labels: Sequence[int]) -> dict[str, float]:
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    return {
        "nmi": round(float(normalized_mutual_info_score(truth, labels)), 4),
        "ari": round(float(adjusted_rand_score(truth, labels)), 4),
    }


def compare(
    ids: Sequence[str], vectors: np.ndarray, texts: Sequence[str], truth: Sequence[str], seeds: Sequence[int]
) -> dict[str, Any]:
    """Pipeline vs TF-IDF k-means on one set of papers, each seed run side by side."""
    from paperatlas.topics.pipeline import TopicPipeline

    runs: list[dict[str, Any]] = []
    for seed in seeds:
        t = time.perf_counter()
        model = TopicPipeline(seed=seed).fit(ids, vectors, texts)
        ours_s = time.perf_counter() - t
        k = int(model.meta["k"]["coarse"])
        t = time.perf_counter()
        base = tfidf_kmeans(texts, k, seed)
        base_s = time.perf_counter() - t
        runs.append(
            {
                "seed": seed,
                "k": k,
                "paperatlas": score(truth, model.coarse),
                "baseline": score(truth, base),
                "seconds": {"paperatlas": round(ours_s, 1), "baseline": round(base_s, 1)},
                "silhouette_by_k": model.meta["silhouette"],
            }
        )

    def summary(name: str) -> dict[str, Any]:
        return {
            "nmi": round(statistics.mean(r[name]["nmi"] for r in runs), 4),
            "ari": round(statistics.mean(r[name]["ari"] for r in runs), 4),
            "k": int(statistics.median(r["k"] for r in runs)),
        }

    ours, base = summary("paperatlas"), summary("baseline")
    return {
        "paperatlas": ours,
        "baseline": base,
        "nmi_ratio": round(ours["nmi"] / base["nmi"], 3) if base["nmi"] else None,
        "papers": len(ids),
        "classes": len(set(truth)),
        "runs": runs,
    }


def eval_topics(
    path: str | Path,
    seeds: Sequence[int] = (0, 1, 2),
    embedder: str | None = None,
    heldout: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Ingest and embed the labelled papers, then compare on all of them and on half B."""
    from paperatlas.library import Library

    say = progress or (lambda s: None)
    records = read_labelled(path)
    with tempfile.TemporaryDirectory(prefix="paperatlas-topics-") as tmp:
        src = Path(tmp) / "labelled.jsonl"
        with open(src, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        with Library(Path(tmp) / "eval.db", embedder=embedder) as lib:
            say(f"ingesting {len(records)} labelled papers")
            lib.ingest([src], format="jsonl")
            say("embedding (through the vector cache)")
            t = time.perf_counter()
            lib.embed()
            embed_s = time.perf_counter() - t

            ids, vectors = lib.topics.vectors()
            texts = lib.topics.texts(ids)
            label_of = {}
            for r in records:
                p = lib.store.resolve_id(str(r.get("id", "")))
                if p:
                    label_of.setdefault(p, str(r[LABEL_FIELD]))
            keep = [i for i, pid in enumerate(ids) if pid in label_of]
            ids = [ids[i] for i in keep]
            vectors, texts = vectors[keep], [texts[i] for i in keep]
            truth = [label_of[pid] for pid in ids]
            embedder_id = lib.embedder.id
    say(f"clustering {len(ids)} papers, seeds {list(seeds)}")
    out = compare(ids, vectors, texts, truth, seeds)
    if heldout:
        b = [i for i, pid in enumerate(ids) if half_b(pid)]
        say(f"held-out half: {len(b)} papers")
        out["heldout_half_b"] = compare(
            [ids[i] for i in b], vectors[b], [texts[i] for i in b], [truth[i] for i in b], seeds
        )
    out["info"] = {
        "file": str(path),
        "label": LABEL_FIELD,
        "embedder": embedder_id,
        "embed_s": round(embed_s, 1),
        "baseline": "TfidfVectorizer(stop_words='english', sublinear_tf, min_df=2, max_df=0.5) + "
        "KMeans(k, n_init=3), same k and seed",
        "tuning": "choices made on ICLR half A (sha1(id) even) and NeurIPS 2023; half B untouched",
    }
    return out


@click.command("topics")
@click.argument("papers_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--seeds", default=3, show_default=True, help="Run seeds 0..N-1 and report the mean.")
@click.option("--embedder", help="Embedding model (default: minilm).")
@click.option("--no-heldout", is_flag=True, help="Skip the held-out half-B report.")
@click.option("--json", "as_json", is_flag=True, help='Print JSON: {"paperatlas": {nmi, ari, k}, "baseline": {...}}.')
def topics_cmd(papers_file: str, seeds: int, embedder: str | None, no_heldout: bool, as_json: bool) -> None:
    """NMI and ARI of the coarse topics against ICLR's primary_area, beside TF-IDF k-means.

    Uses the shared vector cache ($PAPERATLAS_VECTOR_CACHE), so only the first run embeds.

    Example:

        paperatlas eval topics ../shared/data/ml_venue_papers/papers.jsonl.gz --json
    """
    try:
        res = eval_topics(
            papers_file,
            range(max(1, seeds)),
            embedder,
            not no_heldout,
            progress=None if as_json else (lambda s: click.echo(s, err=True)),
        )
    except PaperatlasError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps(res))
        return
    for name, block in [("all labelled papers", res), ("held-out half B", res.get("heldout_half_b"))]:
        if not block:
            continue
        click.echo(f"{name}: {block['papers']} papers, {block['classes']} areas")
        for who in ("paperatlas", "baseline"):
            b = block[who]
            click.echo(f"  {who:<11} NMI {b['nmi']:.4f}  ARI {b['ari']:.4f}  k {b['k']}")
        click.echo(f"  NMI ratio {block['nmi_ratio']}")
