"""Folders of derived data kept beside a library (saved indexes, the recommenders' corpus): written
whole or not at all."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def swap_in(folder: Path, write: Callable[[Path], None]) -> bool:
    """`write(tmp)` fills a new folder beside `folder`, which then replaces it in one rename, so a
    reader never sees half of one. Where nothing can be written (a read-only place) the old folder
    stays and False is returned: what it holds is derived, and the next process derives it again."""
    tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        write(tmp)
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
        return True
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return False
