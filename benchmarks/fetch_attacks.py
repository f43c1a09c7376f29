"""The hostile source server's attacks at the default caps: how long each takes and the peak memory.

    PYTHONPATH=. nice -n 19 python benchmarks/fetch_attacks.py [--deadline 5]

Each attack runs in a fresh Python process against a loopback `tests/sourceserver.py` (or, for SMTP,
a server greeting one byte per second), with the client's default body cap (256 MiB) and the given
whole-request deadline (default 5 s, the `--timeout 5` of the report; the fetch default is 120 s).
The baseline in the same run is a normal fetch of the recorded colt2024.json. Prints, per attack:
seconds until the client gave up, its peak resident memory (ru_maxrss), and the error's first line.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

ATTACKS = {
    "baseline (normal 7 KB answer)": "",
    "2 GiB Content-Length": "huge:2147483648",
    "endless chunked stream": "endless",
    "headers, 1 byte/s": "trickle-headers:1",
    "body, 1 byte/s": "trickle-body:1",
    "chunks, 1 byte/s": "trickle-chunks:1",
    "redirect to another port": "redirect:http://127.0.0.1:9/internal",
    "SMTP greeting, 1 byte/s": "smtp",
}


def one(fault: str, deadline: float) -> dict[str, object]:
    """Run one attack in this process; returns seconds, peak RSS and the outcome."""
    from paperatlas.errors import PaperatlasError
    from paperatlas.mail import SmtpSettings, digest_message, send
    from paperatlas.sources import HttpClient
    from sourceserver import SourceServer, slow_smtp

    body = (ROOT / "tests" / "data" / "sources" / "colt2024.json").read_bytes()
    start = time.monotonic()
    outcome = "ok"
    if fault == "smtp":
        (listener, stop), port = slow_smtp(1.0)
        msg = digest_message("me@example.org", "s", "t", "<p>h</p>", "a@example.org")
        start = time.monotonic()
        try:
            send(msg, SmtpSettings("127.0.0.1", port, timeout=30, deadline=deadline))
        except PaperatlasError as e:
            outcome = e.message
        finally:
            stop.set()
            listener.close()
    else:
        s = SourceServer(routes={"/x.json": body}).start()
        if fault:
            s.faults["/x.json"] = [fault]
        try:
            HttpClient(total_timeout=deadline, retries=0).get(s.url + "/x.json")
        except PaperatlasError as e:
            outcome = e.message
        finally:
            s.stop()
    took = time.monotonic() - start
    return {
        "seconds": round(took, 2),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "outcome": outcome.splitlines()[0][:110],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deadline", type=float, default=5.0)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one is not None:
        print(json.dumps(one(a.one, a.deadline)))
        return
    print(f"deadline {a.deadline:g} s, body cap 256 MiB (defaults otherwise)")
    print(f"{'attack':32} {'seconds':>8} {'peak MB':>8}  outcome")
    for name, fault in ATTACKS.items():
        out = subprocess.run(
            [sys.executable, __file__, "--one", fault, "--deadline", str(a.deadline)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if out.returncode:
            print(f"{name:32} failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name:32} {r['seconds']:>8} {r['peak_mb']:>8}  {r['outcome']}")


if __name__ == "__main__":
    main()
