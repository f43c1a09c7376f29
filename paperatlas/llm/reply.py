"""A model's reply is untrusted input: every field the endpoint sends is checked here, once, before
anything is stored or shown.

What a reply may be: a chat completion whose `content` is a string, whose `usage` (when present) is
an object of small counts, a streamed chunk an object whose `delta.content` is a string; its text no
longer than the task's token budget allows (`char_cap`), without control or terminal-escape
characters; its citations bounded numbers or ids of what the model was given. A reply that is not
this is a `BadReply`, which the client turns into an error naming the endpoint (a 502 on the web),
and nothing of it is stored. A text stored before today's checks that fails them is treated as absent
(`usable`), so it is written afresh instead of breaking a page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# characters per token a model may write, generously: English runs about 4 per token, CJK 1-2, but a
# tokenizer may spend one token on a long URL or a run of punctuation
CHARS_PER_TOKEN = 8
MIN_CHARS = 256
# the JSON around a text (escapes of CJK as \uXXXX are 6 bytes a character) and the envelope's fields
BYTES_PER_CHAR = 6
ENVELOPE_BYTES = 64 * 1024
MAX_COUNT = 10_000_000  # usage counts above this are not counts
MAX_CITE_DIGITS = 3  # no prompt numbers more than 999 papers: a longer number is not a citation

# ESC-introduced sequences (CSI ... final byte; OSC/DCS/APC/PM/SOS ... ST or BEL; two-byte escapes),
# then any C0/C1 control but newline and tab: clear-screen, window titles (OSC 0), hyperlinks (OSC 8),
# clipboard writes (OSC 52), carriage-return overwrites and bells never reach a terminal or a page
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC up to their end
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|[\x90\x9d\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # 8-bit string controls
    r"|\x1b[ -/]*[0-~]?"  # other escapes (charset switches, RIS ...)
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CITE = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
# an id-like citation: letters, digits and the punctuation of paper ids, with at least one digit
_ID_CITE = re.compile(r"\[([A-Za-z0-9][\w.:/#-]{2,199})\]")
# an abstract's own reference markers ("as shown in [2, 5]"): removed before a prompt numbers papers
_ABSTRACT_REFS = re.compile(r"\s?\[\d{1,4}(?:\s*[-–,;]\s*\d{1,4})*\]")


class BadReply(ValueError):
    """The endpoint's reply is not what was asked for; the message says what is wrong with it."""


def char_cap(max_tokens: int) -> int:
    """The most characters a reply to a request of `max_tokens` tokens may have."""
    return max(MIN_CHARS, int(max_tokens) * CHARS_PER_TOKEN)


def byte_cap(max_tokens: int) -> int:
    """The most bytes of HTTP body a reply of `max_tokens` tokens may take (JSON escapes included)."""
    return char_cap(max_tokens) * BYTES_PER_CHAR + ENVELOPE_BYTES


def clean_text(text: str) -> str:
    """`text` without control characters and terminal escapes (newlines and tabs stay)."""
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def for_terminal(text: str) -> str:
    """What a terminal may print of a stored or generated text (the same cleaning: kept texts from
    before it and paper fields pass through here too)."""
    return clean_text(str(text))


def _count(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise BadReply(f"`usage.{what}` is not a count: {str(value)[:40]!r}")
    return value


def _short(value: Any) -> str:
    return str(value)[:120]


def completion(data: Any, max_tokens: int) -> tuple[str, str, str, int, int]:
    """(text, model, finish_reason, prompt_tokens, completion_tokens) of a non-streamed chat completion.

    Raises:
        BadReply: any field of the wrong type, or a text longer than `char_cap(max_tokens)`.
    """
    if not isinstance(data, dict):
        raise BadReply(f"the answer is not a JSON object: {_short(data)!r}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadReply(f"the answer has no `choices` list: {_short(data)!r}")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise BadReply(f"`choices[0].message` is not an object: {_short(message)!r}")
    content = message.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise BadReply(f"`message.content` is not a string: {_short(content)!r}")
    usage = data.get("usage")
    if usage is None:
        usage = {}
    if not isinstance(usage, dict):
        raise BadReply(f"`usage` is not an object: {_short(usage)!r}")
    model = data.get("model")
    finish = choice.get("finish_reason")
    cap = char_cap(max_tokens)
    if len(content) > cap:
        raise BadReply(
            f"the model wrote {len(content):,} characters where {max_tokens} tokens (at most {cap:,}) were asked for"
        )
    return (
        clean_text(content),
        model[:200] if isinstance(model, str) else "",
        finish[:40] if isinstance(finish, str) else "",
        _count(usage.get("prompt_tokens"), "prompt_tokens"),
        _count(usage.get("completion_tokens"), "completion_tokens"),
    )


def chunk(data: Any) -> tuple[str, str, str]:
    """(text piece, model, finish_reason) of one streamed chunk.

    Raises:
        BadReply: the chunk is not an object, or a `delta.content` is not a string.
    """
    if not isinstance(data, dict):
        raise BadReply(f"a streamed piece is not a JSON object: {_short(data)!r}")
    choices = data.get("choices") or []
    if not isinstance(choices, list):
        raise BadReply(f"a streamed piece's `choices` is not a list: {_short(choices)!r}")
    pieces, finish = [], ""
    for ch in choices:
        if not isinstance(ch, dict):
            raise BadReply(f"a streamed choice is not an object: {_short(ch)!r}")
        delta = ch.get("delta") or {}
        if not isinstance(delta, dict):
            raise BadReply(f"a streamed `delta` is not an object: {_short(delta)!r}")
        content = delta.get("content")
        if content is not None and not isinstance(content, str):
            raise BadReply(f"a streamed `delta.content` is not a string: {_short(content)!r}")
        if content:
            pieces.append(content)
        f = ch.get("finish_reason")
        if isinstance(f, str):
            finish = f[:40]
    model = data.get("model")
    return clean_text("".join(pieces)), model[:200] if isinstance(model, str) else "", finish


def citation_numbers(group: str) -> list[int | None]:
    """The numbers of a bracket like "1, 3; 12"; None for one too long to be a citation."""
    return [int(n) if len(n) <= MAX_CITE_DIGITS else None for n in re.split(r"\s*[,;]\s*", group.strip())]


def resolve_citations(text: str, ids: Sequence[str]) -> tuple[str, list[str], int]:
    """(the text with each [n] replaced by [paper id], the cited ids in order, citations dropped).

    A number outside the papers given, or a bracketed id that is not one of them, is a citation of
    something the model was not shown: it is removed from the text and counted, never shown as if a
    paper said it."""
    cited: list[str] = []
    dropped = 0
    known = set(ids)

    def cite(pid: str) -> str:
        if pid not in cited:
            cited.append(pid)
        return f"[{pid}]"

    def numbers(m: re.Match[str]) -> str:
        nonlocal dropped
        out = []
        for n in citation_numbers(m.group(1)):
            if n is not None and 1 <= n <= len(ids):
                out.append(cite(ids[n - 1]))
            else:
                dropped += 1
        return "".join(out)

    def named(m: re.Match[str]) -> str:
        nonlocal dropped
        token = m.group(1)
        if token in known:
            return cite(token)
        if any(c.isdigit() for c in token):
            dropped += 1
            return ""
        return m.group(0)  # a word in brackets ("[sic]"), not a citation

    # ids first, so that a numeric id among the retrieved ("2106.09685") is not read as a number
    text = _ID_CITE.sub(lambda m: named(m) if not m.group(1).isdigit() else m.group(0), text)
    text = _CITE.sub(numbers, text)
    return re.sub(r"[ \t]{2,}", " ", text).strip(), cited, dropped


def strip_reference_marks(text: str) -> str:
    """An abstract without its own "[2]" or "[3, 5]" markers, so a model numbering the papers it was
    given cannot take them for citations of those papers."""
    return _ABSTRACT_REFS.sub("", text)


def usable(text: Any, max_tokens: int) -> bool:
    """Whether a stored text passes today's checks (a string within the task's cap, without control
    characters); one that does not is treated as never written."""
    return isinstance(text, str) and len(text) <= char_cap(max_tokens) and clean_text(text) == text


def model_name(model: str) -> str:
    """The model's name as shown beside what it wrote: a local file path becomes the file's name
    without its extension (a hosted "org/model" name stays whole)."""
    m = str(model or "").strip()
    if m.startswith(("/", "~", "\\", "./", "../")) or re.match(r"^[A-Za-z]:[\\/]", m) or m.lower().endswith(".gguf"):
        m = re.split(r"[\\/]", m)[-1]
        m = re.sub(r"\.(gguf|bin|safetensors)$", "", m, flags=re.IGNORECASE)
    return clean_text(m)[:200]
