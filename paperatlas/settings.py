"""Every setting paperatlas reads from the environment, in one table, read in one place.

Each `Setting` names its environment variable, its type, its default and what it does. `get(name)`
returns the typed value (the default when the variable is unset or empty); a value that does not
parse raises `PaperatlasError` naming the variable and the fix, so a typo never silently falls back.
Command-line options take their `envvar=` from `env(name)`; `serve` hands its workers their settings
with `put`. docs/settings.md is generated from this table (`make settings-docs`), and
tests/test_settings.py fails when a variable is missing here or the docs are stale.

    >>> get("ingest_batch")  # doctest: +SKIP
    1000
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .errors import PaperatlasError


@dataclass(frozen=True)
class Setting:
    """One setting: `name` in code, `env` in the environment, a typed `default` and a `help` line.
    `minimum` bounds an int (a smaller value is an error); `internal` marks what paperatlas sets for
    its own worker processes (documented, but not for users to set)."""

    name: str
    env: str
    default: Any
    type: type
    help: str
    minimum: float | None = None
    maximum: float | None = None
    internal: bool = False


SETTINGS: tuple[Setting, ...] = (
    # -- the library --------------------------------------------------------------------------------
    Setting(
        "db",
        "PAPERATLAS_DB",
        "paperatlas.db",
        str,
        "The library every command opens (a file or a postgresql:// URL); `--db` overrides it.",
    ),
    Setting(
        "reader",
        "PAPERATLAS_READER",
        "",
        str,
        "The reader personal commands speak for (default `me`); `--reader` overrides it.",
    ),
    Setting(
        "embedder",
        "PAPERATLAS_EMBEDDER",
        "",
        str,
        "The embedder of a library that has none recorded yet (a registered name such as `minilm`; a retired one only for a library it embedded); default: the packaged model.",
    ),
    # -- embedding ----------------------------------------------------------------------------------
    Setting(
        "vector_cache",
        "PAPERATLAS_VECTOR_CACHE",
        "",
        str,
        "The cache of embeddings shared by every library on the machine (default ~/.cache/paperatlas/vectors.sqlite); `off` turns it off.",
    ),
    Setting(
        "vector_cache_mb",
        "PAPERATLAS_VECTOR_CACHE_MB",
        512,
        int,
        "The vector cache's size bound in MB (least recently used vectors go first); 0: no bound.",
        minimum=0,
    ),
    Setting(
        "cache_dir",
        "PAPERATLAS_CACHE_DIR",
        "",
        str,
        "Where derived model files (the int8 query model) are kept (default $XDG_CACHE_HOME/paperatlas or ~/.cache/paperatlas).",
    ),
    Setting(
        "embed_threads",
        "PAPERATLAS_EMBED_THREADS",
        0,
        int,
        "Threads of the embedding model; 0: one per CPU.",
        minimum=0,
    ),
    Setting(
        "multilingual_threads",
        "PAPERATLAS_MULTILINGUAL_THREADS",
        1,
        int,
        "Threads of the multilingual model (it shares the machine with queries).",
        minimum=1,
    ),
    Setting(
        "multilingual_min_coverage",
        "PAPERATLAS_MULTILINGUAL_MIN_COVERAGE",
        0.95,
        float,
        "The share of the papers the multilingual index must cover before Chinese queries search it; until then they search through the glossary's English, as with no index (a partial index cannot find the papers it lacks).",
        minimum=0,
        maximum=1,
    ),
    Setting(
        "multilingual_build_niceness",
        "PAPERATLAS_MULTILINGUAL_BUILD_NICENESS",
        10,
        int,
        "How much lower than the server's the CPU priority of its background multilingual build is (a nice value added, Linux): queries get the cores first; 0 runs it as the server.",
        minimum=0,
    ),
    Setting(
        "query_int8",
        "PAPERATLAS_QUERY_INT8",
        True,
        bool,
        "Embed queries with the int8 copy of the model (faster; 0 uses the float model).",
    ),
    # -- ingest and its bounds on untrusted input ---------------------------------------------------
    Setting(
        "ingest_batch", "PAPERATLAS_INGEST_BATCH", 1000, int, "Papers per write transaction of an ingest.", minimum=1
    ),
    Setting(
        "ingest_workers",
        "PAPERATLAS_INGEST_WORKERS",
        0,
        int,
        "Processes that normalise a large ingest; 0: one per core (up to 8), 1: none.",
        minimum=0,
    ),
    Setting(
        "max_field_chars",
        "PAPERATLAS_MAX_FIELD_CHARS",
        200_000,
        int,
        "Characters of one field of a record (an abstract, a title).",
        minimum=1,
    ),
    Setting(
        "max_record_chars",
        "PAPERATLAS_MAX_RECORD_CHARS",
        1_000_000,
        int,
        "Characters of all the text of one record.",
        minimum=1,
    ),
    Setting(
        "max_input_bytes",
        "PAPERATLAS_MAX_INPUT_BYTES",
        1 << 30,
        int,
        "Bytes of one input file after decompression.",
        minimum=1,
    ),
    Setting(
        "max_gzip_ratio",
        "PAPERATLAS_MAX_GZIP_RATIO",
        100,
        int,
        "Decompressed / compressed size of a gzipped file (real paper lists compress 3-15x).",
        minimum=1,
    ),
    Setting(
        "max_json_depth",
        "PAPERATLAS_MAX_JSON_DEPTH",
        64,
        int,
        "Nesting of JSON values (real records nest 3-5 levels).",
        minimum=1,
    ),
    Setting(
        "max_xml_depth",
        "PAPERATLAS_MAX_XML_DEPTH",
        64,
        int,
        "Nesting of XML elements (an Anthology or Atom file nests under 10).",
        minimum=1,
    ),
    # -- fetching -----------------------------------------------------------------------------------
    Setting(
        "fetch_max_pages",
        "PAPERATLAS_FETCH_MAX_PAGES",
        1000,
        int,
        "Pages one fetch follows before it stops and says so (the next run resumes).",
        minimum=1,
    ),
    Setting(
        "fetch_max_bytes",
        "PAPERATLAS_FETCH_MAX_BYTES",
        256 << 20,
        int,
        "Bytes of one fetched response body.",
        minimum=1,
    ),
    Setting(
        "fetch_redirect_hosts",
        "PAPERATLAS_FETCH_REDIRECT_HOSTS",
        "",
        str,
        "Comma-separated hosts a fetch may be redirected to besides the source's own.",
    ),
    Setting(
        "fulltext_fetch_hosts",
        "PAPERATLAS_FULLTEXT_FETCH_HOSTS",
        4,
        int,
        "Hosts `fulltext fetch` downloads PDFs from at once (each host still gets one request at a time; 1: one paper at a time).",
        minimum=1,
        maximum=32,
    ),
    Setting(
        "fulltext_semantic_weight",
        "PAPERATLAS_FULLTEXT_SEMANTIC_WEIGHT",
        0.0,
        float,
        "Weight of meaning against keyword when passages of papers' bodies are searched (0: keyword alone, the default: it found more evidence on held-out questions, docs/fulltext.md; above 0, passages are embedded as papers are read or asked about, and `fulltext embed` embeds the rest).",
        minimum=0,
        maximum=1,
    ),
    Setting(
        "fulltext_fetch_max_wait",
        "PAPERATLAS_FULLTEXT_FETCH_MAX_WAIT",
        120.0,
        float,
        "Longest Retry-After `fulltext fetch` waits for; a host that asks for longer is set aside for the run (the next run tries it again).",
        minimum=0,
        maximum=86400,
    ),
    Setting(
        "fulltext_fetch_host_failures",
        "PAPERATLAS_FULLTEXT_FETCH_HOST_FAILURES",
        5,
        int,
        "Failed downloads in a row after which `fulltext fetch` sets a host aside for the run.",
        minimum=1,
    ),
    Setting(
        "cvf_paper_pages",
        "PAPERATLAS_CVF_PAPER_PAGES",
        300,
        int,
        "Paper pages (for their abstracts) one `fetch cvf` reads at most; the next run reads the rest.",
        minimum=0,
    ),
    Setting(
        "zotero_api_key",
        "ZOTERO_API_KEY",
        "",
        str,
        "The Zotero web API key of `import zotero` (never a flag: flags land in shell history).",
    ),
    Setting("zotero_api_url", "ZOTERO_API_URL", "https://api.zotero.org", str, "The Zotero web API's address."),
    # -- a language model ---------------------------------------------------------------------------
    Setting(
        "llm_url",
        "PAPERATLAS_LLM_URL",
        "",
        str,
        "An OpenAI-compatible endpoint (e.g. http://127.0.0.1:8080/v1); nothing is sent without one.",
    ),
    Setting(
        "llm_model",
        "PAPERATLAS_LLM_MODEL",
        "",
        str,
        "The model name to request (default: the first the endpoint lists).",
    ),
    Setting("llm_api_key", "PAPERATLAS_LLM_API_KEY", "", str, "The endpoint's API key, sent in a header only."),
    Setting(
        "llm_max_tokens",
        "PAPERATLAS_LLM_MAX_TOKENS",
        0,
        int,
        "Caps the tokens of every request; 0: each task's own budget.",
        minimum=0,
    ),
    Setting(
        "serve_header_timeout",
        "PAPERATLAS_SERVE_HEADER_TIMEOUT",
        10.0,
        float,
        "Seconds a request's headers may take to arrive before `serve` closes the connection.",
        minimum=0.1,
        maximum=3600,
    ),
    Setting(
        "serve_max_connections",
        "PAPERATLAS_SERVE_MAX_CONNECTIONS",
        0,
        int,
        "Open connections one `serve` process keeps (0: half its descriptor limit, at most 4,000).",
        minimum=0,
    ),
    Setting(
        "files",
        "PAPERATLAS_FILES",
        "",
        str,
        "Folder that keeps the papers' PDFs (default: `<library>.files/` beside the file; required on PostgreSQL).",
    ),
    Setting(
        "openalex_mailto",
        "PAPERATLAS_OPENALEX_MAILTO",
        "",
        str,
        "Contact address sent to OpenAlex (its polite pool: faster, fewer refusals); `--mailto` overrides it.",
    ),
    Setting(
        "s2_api_key",
        "PAPERATLAS_S2_API_KEY",
        "",
        str,
        "Semantic Scholar API key for `enrich --semantic-scholar` (sent as x-api-key); without one the public "
        "rate applies: one request every 1.1 s, and 429 answers are waited out as their Retry-After asks.",
    ),
    Setting(
        "llm_timeout",
        "PAPERATLAS_LLM_TIMEOUT",
        300.0,
        float,
        "Seconds a model request may go without a byte before it is given up (and closed upstream).",
        minimum=1,
        maximum=86_400,
    ),
    Setting(
        "llm_deadline",
        "PAPERATLAS_LLM_DEADLINE",
        600.0,
        float,
        "Seconds one model request may take in all, streamed or not, before it is given up (and closed upstream).",
        minimum=1,
        maximum=86_400,
    ),
    # -- mail (`digest --email`) --------------------------------------------------------------------
    Setting("smtp_host", "PAPERATLAS_SMTP_HOST", "localhost", str, "SMTP server of `digest --email`."),
    Setting("smtp_port", "PAPERATLAS_SMTP_PORT", 0, int, "SMTP port; 0: 587 with STARTTLS, else 25.", minimum=0),
    Setting("smtp_starttls", "PAPERATLAS_SMTP_STARTTLS", False, bool, "Upgrade the SMTP connection with STARTTLS."),
    Setting("smtp_user", "PAPERATLAS_SMTP_USER", "", str, "SMTP login."),
    Setting(
        "smtp_password",
        "PAPERATLAS_SMTP_PASSWORD",
        "",
        str,
        "SMTP password (better than the flag, which shows in `ps`).",
    ),
    Setting(
        "smtp_cafile",
        "PAPERATLAS_SMTP_CAFILE",
        "",
        str,
        "A CA file (PEM) to trust for STARTTLS (default: the system's).",
    ),
    Setting("smtp_from", "PAPERATLAS_SMTP_FROM", "paperatlas@localhost", str, "Sender address of mailed digests."),
    # -- serving ------------------------------------------------------------------------------------
    Setting(
        "port_hint",
        "PAPERATLAS_PORT_HINT",
        "",
        str,
        "How a busy port's message tells the user to pick another (`make demo PORT={port}`).",
    ),
    Setting("serve_db", "PAPERATLAS_SERVE_DB", "", str, "The library a `serve` worker opens.", internal=True),
    Setting(
        "serve_hosts",
        "PAPERATLAS_SERVE_HOSTS",
        "",
        str,
        "The Host names a `serve` worker answers (comma-separated).",
        internal=True,
    ),
    Setting(
        "serve_read_only", "PAPERATLAS_SERVE_READ_ONLY", False, bool, "A `serve --read-only` worker.", internal=True
    ),
    Setting(
        "serve_owner", "PAPERATLAS_SERVE_OWNER", False, bool, "A `serve` worker that signs its owner in.", internal=True
    ),
    Setting(
        "serve_signups",
        "PAPERATLAS_SERVE_SIGNUPS",
        False,
        bool,
        "A `serve` worker that lets readers sign up.",
        internal=True,
    ),
    # -- the laboratory (bench, eval) ---------------------------------------------------------------
    Setting(
        "shared_data",
        "PAPERATLAS_SHARED_DATA",
        "",
        str,
        "The folder of shared evaluation data the benchmarks and evaluations read.",
    ),
    Setting(
        "cache",
        "PAPERATLAS_CACHE",
        "",
        str,
        "Where `bench llm` keeps models and answers (default ~/.cache/paperatlas).",
    ),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
BY_ENV: dict[str, Setting] = {s.env: s for s in SETTINGS}

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def setting(name: str) -> Setting:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no setting {name!r}; the settings are: {', '.join(BY_NAME)}") from None


def env(name: str) -> str:
    """The environment variable of a setting (for click's `envvar=`)."""
    return setting(name).env


def raw(name: str) -> str:
    """The setting's text as the environment gives it, stripped ("" when unset)."""
    return os.environ.get(setting(name).env, "").strip()


def get(name: str) -> Any:
    """The typed value of a setting: its default when unset or empty. Raises PaperatlasError, naming
    the variable and the fix, when the value does not parse or is below the setting's minimum."""
    s = setting(name)
    text = raw(name)
    if not text:
        return s.default
    if s.type is bool:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise _bad(s, text, "1 or 0")
    if s.type is int:
        digits = text.replace("_", "")
        if not digits.lstrip("-").isdigit():
            raise _bad(s, text, "a whole number" + (f" of at least {s.minimum}" if s.minimum is not None else ""))
        value = int(digits)
        if s.minimum is not None and value < s.minimum:
            raise _bad(s, text, f"a whole number of at least {s.minimum}")
        return value
    if s.type is float:
        want = "a number" + (
            f" between {s.minimum:g} and {s.maximum:g}" if s.minimum is not None and s.maximum is not None else ""
        )
        try:
            number = float(text)
        except ValueError:
            raise _bad(s, text, want) from None
        if (
            number != number
            or (s.minimum is not None and number < s.minimum)
            or (s.maximum is not None and number > s.maximum)
        ):
            raise _bad(s, text, want)
        return number
    return text


def _bad(s: Setting, text: str, want: str) -> PaperatlasError:
    return PaperatlasError(
        f"${s.env}={text!r} is not {want} ({s.help[0].lower() + s.help[1:]})",
        f"set {s.env} to {want}, or unset it for the default ({_shown(s.default)})",
    )


def put(name: str, value: Any) -> None:
    """Set a setting for this process and the processes it starts (`serve` hands its workers their
    library this way); None unsets it."""
    s = setting(name)
    if value is None:
        os.environ.pop(s.env, None)
    elif s.type is bool:
        os.environ[s.env] = "1" if value else "0"
    else:
        os.environ[s.env] = str(value)


@contextmanager
def temporarily(name: str, value: Any) -> Iterator[None]:
    """`put` for the length of a block, then the setting as it was (a benchmark's baseline run)."""
    s = setting(name)
    before = os.environ.get(s.env)
    put(name, value)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(s.env, None)
        else:
            os.environ[s.env] = before


def put_default(name: str, value: Any) -> None:
    """`put`, unless the setting is already set (the user's choice wins)."""
    if not raw(name):
        put(name, value)


def external(variable: str) -> str | None:
    """A variable that is not paperatlas's own (XDG_CACHE_HOME, OMP_NUM_THREADS), read in this one
    module like the rest."""
    return os.environ.get(variable)


def put_external(variable: str, value: str | None) -> None:
    """Set (or with None unset) a variable that is not paperatlas's own, for a library it drives."""
    if value is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = value


def environment(**overrides: Any) -> dict[str, str]:
    """This process's environment with some settings overridden: for a child process."""
    out = dict(os.environ)
    for name, value in overrides.items():
        s = setting(name)
        if value is None:
            out.pop(s.env, None)
        else:
            out[s.env] = ("1" if value else "0") if s.type is bool else str(value)
    return out


def _shown(value: Any) -> str:
    if value is True:
        return "1"
    if value is False:
        return "0"
    if value == "":
        return "unset"
    return f"{value:_}".replace("_", ",") if isinstance(value, int) else str(value)


def markdown() -> str:
    """docs/settings.md: the table of every setting (`make settings-docs` writes it)."""
    lines = [
        "# Settings",
        "",
        "<!-- generated by `make settings-docs` (paperatlas.settings.write_docs) from paperatlas/settings.py;",
        "     tests/test_settings.py fails when this file is stale -->",
        "",
        "Every setting paperatlas reads from the environment. A value that does not parse stops the",
        "command with a message naming the variable and the fix; an unset or empty variable means the",
        "default. Command-line options, where there is one, win over the variable.",
        "",
        "| Variable | Type | Default | What it does |",
        "| --- | --- | --- | --- |",
    ]
    for s in SETTINGS:
        what = s.help + (" *(set by paperatlas for its own workers)*" if s.internal else "")
        lines.append(f"| `{s.env}` | {s.type.__name__} | {_shown(s.default)} | {what.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def write_docs(path: str = "docs/settings.md") -> None:
    """Write the settings table to docs/settings.md (`make settings-docs`)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(markdown())
