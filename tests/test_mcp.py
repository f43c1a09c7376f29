"""`paperatlas mcp`: the SDK's own client against the real server, over stdio and streamable HTTP.

The library is real (SQLite file, the packaged embedding model); the server runs as a subprocess
(`python -m paperatlas --db X mcp`), exactly as an assistant starts it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from paperatlas import Library

from conftest import EXAMPLES, ROOT
from ports import free_port

pytestmark = pytest.mark.slow

EXTRA = [  # papers with authors and ids, for the author filter and DOI / arXiv lookups
    {
        "id": "2106.09685",
        "title": "LoRA: Low-Rank Adaptation of Large Language Models",
        "abstract": "We propose low-rank adaptation, which freezes the pretrained weights and injects trainable "
        "rank decomposition matrices into each layer of the Transformer.",
        "authors": ["Edward J. Hu", "Yelong Shen", "Phillip Wallis"],
        "venue": "ICLR",
        "year": 2022,
        "doi": "10.48550/arXiv.2106.09685",
        "url": "https://arxiv.org/abs/2106.09685",
    },
    {
        "id": "2305.14314",
        "title": "QLoRA: Efficient Finetuning of Quantized LLMs",
        "abstract": "We present QLoRA, an efficient finetuning approach that reduces memory usage enough to finetune "
        "a 65B parameter model on a single GPU, using low-rank adapters over a 4-bit quantized model.",
        "authors": ["Tim Dettmers", "Artidoro Pagnoni"],
        "venue": "NeurIPS",
        "year": 2023,
    },
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("mcp")
    extra = d / "extra.jsonl"
    extra.write_text("".join(json.dumps(p) + "\n" for p in EXTRA), encoding="utf-8")
    path = d / "lib.db"
    with Library(path) as lib:  # the default, packaged embedding model
        lib.ingest(EXAMPLES)
        lib.ingest([extra])
        lib.embed()
        lib.readers.set_feedback("dora", ["2106.09685"], "like")
        lib.topics.build()
    return path


def stdio(db: Path, *flags: str) -> StdioServerParameters:
    env = {"PYTHONPATH": str(ROOT), **{k: v for k, v in os.environ.items() if k.startswith("PAPERATLAS_")}}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "paperatlas", "--db", str(db), "mcp", *flags], env=env, cwd=str(ROOT)
    )


def session(server: Any, body: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        async with Client(server, read_timeout_seconds=300) as c:  # a loaded CI machine is slow
            await body(c)

    anyio.run(main)


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_tools_over_stdio(db: Path) -> None:
    async def body(c: Client) -> None:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert {"search", "get_paper", "similar", "recommend", "topics", "like", "dislike"} <= set(tools)
        assert tools["search"].input_schema["required"] == ["query"]
        assert set(tools["search"].input_schema["properties"]) == {
            "query",
            "mode",
            "sort",  # an order a capability contributes (citations, rising)
            "venue",
            "year",
            "status",  # every filter of the library's table (contrib.py), as the CLI and the web take
            "author",
            "limit",
            "institution",
            "country",
            "type",
            "session",
            "day",
            "room",
            "min_citations",  # contributed by the citations capability
            "fulltext",  # contributed by the full text
        }
        assert tools["get_paper"].input_schema["required"] == ["id"]
        assert tools["similar"].input_schema["required"] == ["id"]
        assert "hits" in tools["search"].output_schema["properties"]
        assert tools["search"].annotations.read_only_hint and not tools["like"].annotations.read_only_hint

        r = await c.call_tool("search", {"query": "low-rank adaptation of language models", "limit": 5})
        assert not r.is_error
        hits = r.structured_content["hits"]
        assert hits[0]["id"] == "2106.09685" and hits[0]["venue"] == "ICLR" and hits[0]["year"] == 2022
        assert hits[0]["authors"][0] == "Edward J. Hu" and isinstance(hits[0]["score"], float)
        assert "<mark>" not in hits[0]["snippet"] and "low-rank" in hits[0]["snippet"].lower()
        assert "LoRA: Low-Rank Adaptation" in text(r) and "id 2106.09685" in text(r)

        # filters: venue / year / author, and each mode
        r = await c.call_tool("search", {"query": "low-rank", "author": "dettmers"})
        assert [h["id"] for h in r.structured_content["hits"]] == ["2305.14314"]
        r = await c.call_tool("search", {"query": "user simulators", "venue": "neurips", "year": 2026, "limit": 3})
        assert r.structured_content["hits"] and all(h["venue"] == "NeurIPS" for h in r.structured_content["hits"])
        for mode in ("keyword", "semantic"):
            r = await c.call_tool("search", {"query": "conversational user simulators", "mode": mode, "limit": 3})
            assert r.structured_content["mode"] == mode and len(r.structured_content["hits"]) == 3
        r = await c.call_tool("search", {"query": "low-rank", "year": 1999})
        assert r.structured_content["hits"] == [] and "year=1999" in r.structured_content["note"]

        r = await c.call_tool("get_paper", {"id": "2106.09685"})
        rec = r.structured_content
        assert rec["id"] == "2106.09685" and rec["abstract"].startswith("We propose low-rank")
        assert rec["uri"] == "paper://2106.09685" and "Edward J. Hu" in text(r)

        r = await c.call_tool("similar", {"id": "2106.09685", "limit": 3})
        near = r.structured_content["hits"]
        assert len(near) == 3 and "2106.09685" not in [h["id"] for h in near] and all(h["reason"] for h in near)
        assert r.structured_content["of"] == "2106.09685" and near[0]["reason"] in text(r)

        res = await c.read_resource("paper://2106.09685")
        assert json.loads(res.contents[0].text)["title"].startswith("LoRA")
        templates = (await c.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["paper://{+id}"]

        r = await c.call_tool("topics", {"level": "fine", "limit": 5})
        ts = r.structured_content["topics"]
        assert not r.is_error and r.structured_content["level"] == "fine" and 1 <= len(ts) <= 5
        assert all(t["label"] and t["size"] >= 1 and t["central"] and t["parent"] is not None for t in ts)
        assert ts[0]["label"] in text(r) and sum(t["size"] for t in ts) <= 32

        # like -> recommend, then undo
        r = await c.call_tool("like", {"ids": ["2106.09685"], "reader": "alice"})
        assert not r.is_error and r.structured_content == {
            "reader": "alice",
            "kind": "like",
            "ids": ["2106.09685"],
            "undone": False,
        }
        r = await c.call_tool("recommend", {"reader": "alice", "limit": 3})
        assert r.structured_content["hits"] and "2106.09685" not in [h["id"] for h in r.structured_content["hits"]]
        assert r.structured_content["hits"][0]["reason"]
        r = await c.call_tool("dislike", {"ids": ["2305.14314"], "reader": "alice"})
        assert r.structured_content["kind"] == "dislike"

    session(stdio(db), body)
    with Library(db) as lib:
        assert [p.id for p in lib.readers.liked("alice")] == ["2106.09685"]


def test_errors_are_tool_errors_with_the_fix(db: Path) -> None:
    async def body(c: Client) -> None:
        r = await c.call_tool("get_paper", {"id": "no-such-paper"})
        assert r.is_error and "no paper with id 'no-such-paper'" in text(r) and "Fix:" in text(r)
        r = await c.call_tool("similar", {"id": "no-such-paper"})
        assert r.is_error and "Fix:" in text(r)
        assert "use an id from the hits of the `search` tool" in text(r)
        r = await c.call_tool("search", {"query": "x", "mode": "bogus"})
        assert r.is_error and "mode: Input should be 'hybrid', 'keyword' or 'semantic' (got 'bogus')" in text(r)
        assert "Fix: call search with arguments that fit its input schema" in text(r)
        assert "pydantic.dev" not in text(r)
        r = await c.call_tool("search", {"limit": 3})  # no query
        assert r.is_error and "query: Field required" in text(r)
        r = await c.call_tool("search", {"query": "x", "limit": 0})
        assert r.is_error and "limit: Input should be greater than or equal to 1 (got 0)" in text(r)
        r = await c.call_tool("search", {"query": ""})
        assert r.is_error and "query" in text(r)
        r = await c.call_tool("like", {"ids": []})
        assert r.is_error and "ids" in text(r)
        r = await c.call_tool("like", {"ids": ["2106.09685", "no-such-paper"], "reader": "bob"})
        assert r.is_error and "no-such-paper" in text(r)
        r = await c.call_tool("recommend", {"reader": "nobody-here"})
        assert r.is_error and "no reader 'nobody-here'" in text(r) and "call the `like` tool" in text(r)
        with pytest.raises(Exception, match="no paper"):
            await c.read_resource("paper://no-such-paper")
        # the server is still there, answering
        r = await c.call_tool("search", {"query": '"unbalanced quote AND OR (', "limit": 2})
        assert not r.is_error

    session(stdio(db), body)
    with Library(db) as lib:  # the failed like wrote nothing (every id is checked first)
        assert lib.store.readers.get_reader("bob") is None or not lib.readers.liked("bob")


def _folder(db: Path) -> dict[str, bytes]:
    """Every file in the library's folder (the library, its index folders, anything beside it)."""
    return {str(p.relative_to(db.parent)): p.read_bytes() for p in sorted(db.parent.rglob("*")) if p.is_file()}


def test_read_only_refuses_changes(db: Path) -> None:
    before = _folder(db)

    async def body(c: Client) -> None:
        r = await c.call_tool("like", {"ids": ["2305.14314"], "reader": "carol"})
        assert r.is_error and "read-only" in text(r) and "without --read-only" in text(r)
        r = await c.call_tool("dislike", {"ids": ["2305.14314"], "reader": "carol"})
        assert r.is_error and "read-only" in text(r)
        r = await c.call_tool("search", {"query": "quantized finetuning", "limit": 1})
        assert r.structured_content["hits"][0]["id"] == "2305.14314"
        r = await c.call_tool("recommend", {"reader": "dora", "limit": 2})  # computes, saves nothing
        assert not r.is_error and r.structured_content["hits"]

    session(stdio(db, "--read-only"), body)
    assert _folder(db) == before  # not a byte written beside or into the library
    with Library(db) as lib:
        assert lib.store.readers.get_reader("carol") is None


def test_streamable_http(db: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperatlas", "--db", str(db), "mcp", "--http", str(port), "--read-only"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                assert time.monotonic() < deadline, "the MCP HTTP server did not start"
                time.sleep(0.2)

        async def body(c: Client) -> None:
            r = await c.call_tool("search", {"query": "low-rank adaptation", "limit": 2})
            assert r.structured_content["hits"][0]["id"] == "2106.09685"
            r = await c.call_tool("like", {"ids": ["2106.09685"]})
            assert r.is_error and "read-only" in text(r)

        session(f"http://127.0.0.1:{port}/mcp", body)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_cli_refuses_a_missing_library(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from paperatlas.cli import cli

    missing = tmp_path / "none.db"
    r = CliRunner().invoke(cli, ["--db", str(missing), "mcp"])
    assert r.exit_code == 1 and "no library at" in r.stderr and not missing.exists()
    assert r.stdout == ""  # stdout belongs to the protocol
    r = CliRunner().invoke(cli, ["--db", str(missing), "mcp", "--host", "0.0.0.0"])
    assert r.exit_code == 1 and "--http" in r.stderr


def test_in_process_server_without_topics(tmp_path: Path) -> None:
    """create_server(library) is the Python API: the SDK's client talks to it in-process too."""
    from paperatlas.mcp import create_server

    with Library(tmp_path / "t.db", embedder="hashing") as lib:
        lib.ingest(EXAMPLES)

        async def body(c: Client) -> None:
            r = await c.call_tool("topics", {})
            assert r.is_error and "no topics yet" in text(r) and "paperatlas topics build" in text(r)
            r = await c.call_tool("like", {"ids": ["h4185992fcd6e189"], "reader": "eve", "undo": False})
            assert r.structured_content["ids"] == ["h4185992fcd6e189"]
            r = await c.call_tool("like", {"ids": ["h4185992fcd6e189"], "reader": "eve", "undo": True})
            assert r.structured_content["undone"] and "no longer liked" in text(r)
            r = await c.call_tool("similar", {"id": "h4185992fcd6e189"})  # nothing embedded yet
            assert r.is_error and "no embeddings yet" in text(r) and "paperatlas embed" in text(r)

        session(create_server(lib), body)
        assert lib.readers.liked("eve") == []
