"""NAME=VALUE,... text -> typed overrides of a settings dataclass's fields (search settings on the
command line, recommender weights in a benchmark): one parser, so each reads values and refuses bad
names the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import PaperatlasError


def parse_overrides(defaults: Mapping[str, Any], text: str, what: str = "setting") -> dict[str, Any]:
    """ "a=1,b=x" -> {"a": 1, "b": "x"}, each value read as the type of its default; an unknown name or
    a value of the wrong type is refused with the fix. `what` names the fields in messages."""
    out: dict[str, Any] = {}
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        name, eq, raw = (x.strip() for x in part.partition("="))
        if not eq or name not in defaults:
            raise PaperatlasError(
                f"not a {what}: {part!r}", f"give NAME=VALUE pairs, NAME one of: {', '.join(defaults)}"
            )
        kind = type(defaults[name])
        try:
            if kind is bool:
                if raw.lower() not in ("true", "false", "1", "0"):
                    raise ValueError(raw)
                out[name] = raw.lower() in ("true", "1")
            else:
                out[name] = kind(raw)
        except ValueError:
            raise PaperatlasError(
                f"{what} {name} takes a {kind.__name__}, not {raw!r}", f"for example {name}={defaults[name]}"
            ) from None
    return out
