"""`.ci/install-llm` waits for another installer's lock: it says so, and on what, instead of hanging silently."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_waiting_for_the_install_lock_is_said_with_the_lock_and_its_holder(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    lock = cache / "install-llm.lock"
    holder = subprocess.Popen(["flock", str(lock), "sleep", "30"])
    try:
        for _ in range(50):
            if lock.exists():
                break
            time.sleep(0.1)
        time.sleep(0.3)
        env = {**os.environ, "PAPERATLAS_CACHE": str(cache)}
        res = subprocess.run(
            ["timeout", "4", str(ROOT / ".ci" / "install-llm"), "--if-cached"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
        assert res.returncode == 124  # still waiting when stopped
        assert "waiting for another .ci/install-llm" in res.stderr and str(lock) in res.stderr, res.stderr
        assert "sleep 30" in res.stderr, res.stderr  # the holder, by its command
    finally:
        holder.kill()
        holder.wait()
