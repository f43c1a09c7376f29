"""How long something takes or will take, as a person reads it: `40 s`, `12 min`, `1.5 h`."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """`40 s`, `12 min`, `1.5 h`: an estimate or a wait, rounded."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
