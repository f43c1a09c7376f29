"""Hostile-file fuzzing of every input format through the real `ingest` command (issue 16, standing attack).

Each example is a whole file in one format (text list, JSONL, JSON, CSV, TSV, BibTeX, OpenReview, arXiv
snapshot, arXiv Atom), built from hostile pieces (control and bidi characters, NULs, quotes and delimiters,
deep nesting, broken markup, huge numbers), sometimes byte-mutated and sometimes gzipped. `ingest` must
either store papers (exit 0) or refuse with a clean error (exit 3 and a message that names the file),
never a traceback. Examples per format: $PAPERATLAS_FUZZ_EXAMPLES (default 40, so the default suite stays
quick); the counts of stored and refused files go to $PAPERATLAS_FUZZ_REPORT when set.
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import re
import sqlite3
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperatlas.cli import cli

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
EXAMPLES = int(os.environ.get("PAPERATLAS_FUZZ_EXAMPLES", "40"))
OUTCOMES: collections.Counter[tuple[str, str]] = collections.Counter()

HOSTILE_CHARS = "\x00\x01\x07\x08\x0b\x0c\x1b\x7f\x85\x9f\u200b\u200e\u202e\u2066\u2028\u2029\ufeff\ufffd\U0001f600"
SPECIAL = "\"',;\t\n\r{}[]<>&@%$#\\=+-|`*_~:"
pieces = st.sampled_from(
    [
        "",
        " ",
        "Title",
        "Abstract",
        "We study graphs.",
        "<script>alert(1)</script>",
        "javascript:alert(1)",
        '=HYPERLINK("http://x","y")',
        "\\cite{x}",
        "$x^2$",
        "\\begin{equation}",
        "}}}}",
        "{{{{",
        "@article{",
        "]]>",
        "<![CDATA[",
        "&amp;",
        "&#0;",
        "&#xD800;",
        "NeurIPS 2026",
        "1.",
        "Authors:",
        "Title:",
        "Abstract:",
        "9" * 40,
        "-1e999",
        "NaN",
        "null",
        "日本語の論文",
        "مقالة",
        "אבי כהן",
        "x" * 300,
        "\ud83d",
        "\udc00",  # lone surrogates: json.dumps writes them as \\ud83d escapes
    ]
)
text = st.lists(
    st.one_of(pieces, st.text(alphabet=st.sampled_from(HOSTILE_CHARS + SPECIAL + "abc XYZ"), max_size=30)), max_size=8
).map("".join)
json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False), text
)
json_value = st.recursive(
    json_scalar,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.one_of(text, st.sampled_from(["title", "abstract", "authors", "id"])), inner, max_size=3)
    ),
    max_leaves=10,
)
KEYS = [
    "title",
    "abstract",
    "authors",
    "author",
    "year",
    "venue",
    "id",
    "_id",
    "text",
    "url",
    "keywords",
    "status",
    "summary",
    "content",
    "date",
]
record = st.dictionaries(st.sampled_from(KEYS) | text, st.one_of(text, json_value), max_size=7)


DEPTHS = st.sampled_from([3, 63, 64, 65, 500, 999, 1000, 1001, 5000])  # around the limit and the parser's stack


def deep(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@st.composite
def text_list(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(["NeurIPS 2026\n\n", "", "# ICML 2025 papers\n", "Venue: X, Year: 2024\n"]))
    blocks = draw(st.lists(text, min_size=1, max_size=6))
    return head + draw(st.sampled_from(["\n\n", "\n", "\r\n\r\n"])).join(blocks)


@st.composite
def jsonl(draw: st.DrawFn) -> str:
    lines = draw(
        st.lists(
            st.one_of(record.map(json.dumps), json_value.map(json.dumps), text, DEPTHS.map(deep)),
            min_size=1,
            max_size=6,
        )
    )
    return "\n".join(lines)


@st.composite
def json_file(draw: st.DrawFn) -> str:
    items = draw(st.lists(st.one_of(record, json_value), max_size=5))
    shape = draw(st.sampled_from(["list", "papers", "notes", "one", "deep"]))
    if shape == "deep":
        return "[" + json.dumps(items[0] if items else {}) + "," + deep(draw(DEPTHS)) + "]"
    obj = {"list": items, "papers": {"papers": items}, "notes": {"notes": items}, "one": items[0] if items else {}}
    return json.dumps(obj[shape], ensure_ascii=draw(st.booleans()))


def _delimited(delim: str) -> Callable[[st.DrawFn], str]:
    @st.composite
    def build(draw: st.DrawFn) -> str:
        header = draw(st.lists(st.sampled_from(KEYS) | text, min_size=1, max_size=5))
        if draw(st.booleans()):
            header.append("abstract")
        rows = draw(st.lists(st.lists(text, max_size=len(header) + 1), max_size=5))

        def cell(c: str) -> str:
            return '"' + c.replace('"', '""') + '"' if draw(st.booleans()) else c

        return "\n".join(delim.join(cell(c) for c in r) for r in [header, *rows])

    return build  # type: ignore[return-value]


@st.composite
def bibtex(draw: st.DrawFn) -> str:
    entries = []
    for _ in range(draw(st.integers(1, 4))):
        fields = draw(
            st.dictionaries(
                st.sampled_from(["title", "abstract", "author", "year", "booktitle", "url"]) | text, text, max_size=5
            )
        )
        quoting = st.sampled_from(["{{{}}}", '"{}"', "{}"])
        body = ",\n".join(f"  {k} = " + draw(quoting).format(v) for k, v in fields.items())
        entries.append(f"@{draw(st.sampled_from(['article', 'inproceedings', 'misc', '']))}{{{draw(text)},\n{body}\n}}")
    return "\n\n".join(entries)


@st.composite
def openreview(draw: st.DrawFn) -> str:
    notes = [
        {
            "id": draw(text),
            "content": {
                k: draw(st.sampled_from([{"value": v}, v]))
                for k, v in draw(
                    st.dictionaries(
                        st.sampled_from(["title", "abstract", "authors", "venue", "keywords"]),
                        st.one_of(text, json_value),
                        max_size=5,
                    )
                ).items()
            },
        }
        for _ in range(draw(st.integers(0, 4)))
    ]
    return json.dumps({"notes": notes})


@st.composite
def arxiv_snapshot(draw: st.DrawFn) -> str:
    rows = [
        {
            "id": draw(text),
            "title": draw(text),
            "abstract": draw(text),
            "authors": draw(text),
            "versions": draw(st.one_of(json_value, st.just([{"version": "v1", "created": "Mon, 2 Apr 2007"}]))),
            "update_date": draw(text),
            "journal-ref": draw(st.one_of(st.none(), text)),
        }
        for _ in range(draw(st.integers(1, 4)))
    ]
    return "\n".join(json.dumps(r) for r in rows)


def _xml(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;") if s and s[0] != "!" else s


@st.composite
def arxiv_atom(draw: st.DrawFn) -> str:
    entries = "".join(
        f"<entry><id>{_xml(draw(text))}</id><title>{_xml(draw(text))}</title><summary>{_xml(draw(text))}</summary>"
        f"<author><name>{_xml(draw(text))}</name></author><published>{_xml(draw(text))}</published>"
        f'<link rel="alternate" href="{_xml(draw(text)).replace(chr(34), "")}"/></entry>'
        for _ in range(draw(st.integers(0, 4)))
    )
    return f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">{entries}</feed>'


FORMATS: dict[str, tuple[str, st.SearchStrategy[str]]] = {
    "text": (".txt", text_list()),
    "jsonl": (".jsonl", jsonl()),
    "json": (".json", json_file()),
    "csv": (".csv", _delimited(",")()),
    "tsv": (".tsv", _delimited("\t")()),
    "bibtex": (".bib", bibtex()),
    "openreview": (".json", openreview()),
    "arxiv": (".jsonl", arxiv_snapshot()),
    "arxiv-atom": (".xml", arxiv_atom()),
}


@st.composite
def mutate(draw: st.DrawFn, data: bytes) -> bytes:
    """Flip, drop or insert a few bytes: parsers meet the broken files people actually have."""
    b = bytearray(data)
    for _ in range(draw(st.integers(0, 4))):
        if not b:
            break
        i = draw(st.integers(0, len(b) - 1))
        op = draw(st.sampled_from(["flip", "drop", "insert", "cut"]))
        if op == "flip":
            b[i] ^= draw(st.integers(1, 255))
        elif op == "drop":
            del b[i]
        elif op == "insert":
            b[i:i] = draw(st.binary(min_size=1, max_size=4))
        else:
            del b[i:]
    return bytes(b)


@pytest.fixture(scope="module")
def workdir():  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory(prefix="paperatlas-fuzz-") as d:
        yield Path(d)
    report = os.environ.get("PAPERATLAS_FUZZ_REPORT")
    if report:
        Path(report).write_text(json.dumps({f"{f} {o}": n for (f, o), n in sorted(OUTCOMES.items())}, indent=1))


@pytest.mark.parametrize("name", list(FORMATS))
def test_ingest_stores_or_refuses_cleanly(name: str, workdir: Path) -> None:
    suffix, strategy = FORMATS[name]
    runner = CliRunner()
    db = workdir / f"{name}.db"

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(body=strategy, data=st.data())
    def run(body: str, data: st.DataObject) -> None:
        raw = body.encode("utf-8", "surrogatepass")
        mutated = data.draw(st.booleans())
        if mutated:
            raw = data.draw(mutate(raw))
        zipped = data.draw(st.booleans())
        path = workdir / f"input-{name}{suffix}{'.gz' if zipped else ''}"
        path.write_bytes(gzip.compress(raw) if zipped else raw)
        force = [] if data.draw(st.booleans()) else ["--format", "openreview" if name == "openreview" else name]
        args = ["--db", str(db), "ingest", "--no-embed", *force, str(path)]
        if data.draw(st.booleans()):
            args.insert(3, "--skip-bad")
        r = runner.invoke(cli, args)
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            tb = "".join(traceback.format_exception(r.exception))
            raise AssertionError(f"traceback on {path.name} {args}:\n{tb}\ninput: {raw[:400]!r}")
        assert r.exit_code in (0, 3, 5), (r.exit_code, r.output, raw[:400])  # 5: stored, with warnings
        if r.exit_code == 3:
            assert path.name in r.output, r.output
        OUTCOMES[(name, "stored" if r.exit_code in (0, 5) else "refused")] += 1
        if r.exit_code in (0, 5):  # what was stored holds no control characters (they break Atom feeds)
            c = sqlite3.connect(db)
            try:
                for row in c.execute("SELECT id, title, abstract, authors, venue, url FROM papers"):
                    assert not any(CONTROL.search(v or "") for v in row), row
            finally:
                c.close()

    run()
