"""Seeds x arms (finetune.py settings) on one prepared data file, and uniform soups of each arm, on a GPU:

    python3 benchmarks/train_embedder/sweep.py --base BASE_DIR --data-file run5-data.json.gz \\
        --out /tmp/sweep --export-to OUT_DIR --seeds 13,14,15,16,17 \\
        --arm "d128=--doc-len 128" --arm "d256=--doc-len 256"

Every member trains `finetune.py --recipe run5` on the same triples (`finetune.py --dump-data`: one
dev split, one set of mined negatives); a seed changes only their order and dropout. A soup averages
the members' weights (all start from the same base, so their average is a model of the same basin,
and it evens out one seed's luck). Each member and soup is scored on finetune.py's dev sets (SciFact
dev claims, the paraphrase set's train half) at --dev-doc-len; the two best soups by the sum of the
two dev figures are exported as the shipped int8 layout (export.py), cut into parts under 16 MiB
(`cat NAME.part-* > NAME`). A test split is never read here.

Seeds are interleaved across arms and stop at --train-seconds, so a slow machine leaves arms of equal size.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import finetune


def average(dirs: list[Path]):  # noqa: ANN201
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(dirs[0])
    acc = {k: v.clone().double() for k, v in model.state_dict().items()}
    for d in dirs[1:]:
        for k, v in AutoModel.from_pretrained(d).state_dict().items():
            acc[k] += v.double()
    model.load_state_dict({k: (v / len(dirs)).to(torch.float32) for k, v in acc.items()})
    return model


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, type=Path)
    ap.add_argument("--data-file", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--export-to", type=Path, help="folder for the two best soups' int8 ONNX parts and the summary")
    ap.add_argument("--seeds", default="13,14,15,16,17")
    ap.add_argument(
        "--arm",
        action="append",
        help="NAME=finetune.py arguments, repeated (default: d128 and d256, documents at 128 and 256 tokens)",
    )
    ap.add_argument("--dev-doc-len", type=int, default=256)
    ap.add_argument("--train-seconds", type=float, default=300)
    ap.add_argument("--device", default="cuda")
    ap.add_argument(
        "--extra", default="--papers 8000 --scifact-epochs 2 --lr 4e-5", help="finetune.py arguments of every arm"
    )
    a = ap.parse_args()

    from transformers import AutoTokenizer

    summary: dict = {"members": [], "soups": []}
    export_to = a.export_to
    if export_to:
        export_to.mkdir(parents=True, exist_ok=True)

    def write() -> None:
        text = json.dumps(summary, indent=1)
        (a.out / "summary.json").write_text(text)
        if export_to:
            (export_to / "summary.json").write_text(text)

    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    settings = dict(x.split("=", 1) for x in (a.arm or ["d128=--doc-len 128", "d256=--doc-len 256"]))
    if "every" in settings:  # its soup would be overwritten by the soup of every member
        raise SystemExit("--arm every=...: 'every' names the soup of all arms; call the arm something else")
    arms: dict[str, list[Path]] = {name: [] for name in settings}
    for seed in (int(s) for s in a.seeds.split(",")):
        for arm in arms:
            if time.time() - t0 > a.train_seconds:
                break
            out = a.out / f"{arm}-s{seed}"
            sys.argv = [
                "finetune.py",
                *("--base", str(a.base), "--out", str(out), "--recipe", "run5"),
                *("--load-data", str(a.data_file), "--device", a.device, "--seed", str(seed)),
                *("--dev-doc-len", str(a.dev_doc_len), "--save-every", "1000000"),
                *a.extra.split(),
                *settings[arm].split(),
            ]
            t = time.time()
            finetune.main()
            last = [json.loads(x) for x in open(out / "train_log.jsonl") if '"checkpoint": "last"' in x][-1]
            summary["members"].append({"arm": arm, "seed": seed, "seconds": round(time.time() - t), **last})
            arms[arm].append(out / "last")
            write()
    parts, dev, venue_dev, _ = finetune.load_data(a.data_file)
    tok = AutoTokenizer.from_pretrained(a.base)
    soups = {f"soup-{n}": dirs for n, dirs in arms.items() if dirs}
    if len(soups) > 1:
        soups["soup-every"] = [d for dirs in arms.values() for d in dirs]
    for name, dirs in soups.items():
        model = average(dirs)
        model.save_pretrained(a.out / name)
        tok.save_pretrained(a.out / name)
        scores = finetune.dev_scores(model.to(a.device), tok, dev, venue_dev, a.dev_doc_len)
        summary["soups"].append({"name": name, "members": [str(d.parent.name) for d in dirs], **scores})
        write()
    if not export_to:
        return
    import export

    # the held-out written paraphrases, where there are some, outvote the paraphrase set's 44 train queries
    para = "paraphrase_dev_mrr10" if "paraphrase_dev_mrr10" in summary["soups"][0] else "paraphrase_train_mrr10"
    best = sorted(summary["soups"], key=lambda s: -(s["scifact_dev_ndcg10"] + s[para]))[:2]
    for s in best:
        onnx_path = a.out / f"{s['name']}.int8.onnx"
        try:
            export.export_fp32(str(a.out / s["name"]), str(onnx_path) + ".fp32.onnx")
            export.int8_weights(str(onnx_path) + ".fp32.onnx", str(onnx_path))
        except Exception as e:  # an exporter that differs on that machine must not lose the soup: weights in fp16
            from safetensors.torch import load_file, save_file

            s["export_error"] = repr(e)[:500]
            onnx_path = a.out / f"{s['name']}.fp16.safetensors"
            sd = load_file(a.out / s["name"] / "model.safetensors")
            save_file({k: v.half().contiguous() for k, v in sd.items()}, onnx_path)
        data = onnx_path.read_bytes()
        step = 15 * 1024 * 1024
        for i in range(0, len(data), step):
            (export_to / f"{onnx_path.name}.part-{i // step}").write_bytes(data[i : i + step])
        s["exported"] = len(data)
        write()
        if s.get("export_error"):
            break  # two soups in fp16 would not fit what comes back
    summary["seconds"] = round(time.time() - t0)
    write()


if __name__ == "__main__":
    main()
