"""The MCP tools of the full text: search the body of the papers whose PDF was read, and read one
paper's full text. Their structured output is the shapes' own `to_dict()` (as the CLI and the web)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

T = TypeVar("T")


class BodyHits(BaseModel):
    hits: list[dict[str, Any]] = Field(
        description="papers found by a passage of their body; each has `passage`: {id, n, page, section, text}"
    )


class FullText(BaseModel):
    id: str
    title: str
    pages: int
    sections: list[dict[str, Any]] = Field(description="{heading, number, page, text, paragraphs}")
    captions: list[dict[str, Any]]
    references: list[dict[str, Any]] = Field(
        description="{raw, title, authors, year, id}: id is a library paper or null"
    )
    status: dict[str, Any] = Field(default_factory=dict)


class PaperTranslation(BaseModel):
    id: str
    lang: str
    complete: bool = Field(description="every section translated")
    sections: list[dict[str, Any]] = Field(
        description="{index, heading, heading_translated, page, source, text, done, note, model, created_at, check}"
    )
    glossary: dict[str, str] = Field(description="the paper's terms and the one rendering each is given")
    check: dict[str, Any] = Field(description="formulas/citations, numbers and glossary terms kept, counted")
    spent_chunks: int = Field(description="model requests this call made")
    stopped: str = Field(description="why this call stopped before the end ('' when it did not)")


def register(server: MCPServer, library: Any, call: Callable[[Callable[[], Any]], Any]) -> None:
    """Add the tools to `server`; `call` runs library work under the server's lock and error mapping."""
    ro = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=ro)
    def search_body(
        query: Annotated[str, Field(min_length=1, max_length=1000, description="words to find in the papers' text")],
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
    ) -> Annotated[CallToolResult, BodyHits]:
        """Search the full text of the papers whose PDF was read: each hit is a paper with the passage that
        matched, its section and page."""
        hits = call(lambda: library.fulltext.hits(query, limit))
        rows = [h.to_dict() for h in hits]
        text = "\n".join(f"{h.paper.id} p.{h.passage.page} ({h.passage.section}): {h.passage.text[:300]}" for h in hits)
        return CallToolResult(
            content=[TextContent(type="text", text=text or "no passage matches")],
            structured_content=BodyHits(hits=rows).model_dump(mode="json"),
        )

    @server.tool(annotations=ro)
    def full_text(
        id: Annotated[str, Field(min_length=1, max_length=500, description="a paper id, as search returns it")],
    ) -> Annotated[CallToolResult, FullText]:
        """A paper's full text as read from its PDF: sections with their pages, captions and references."""
        view = call(lambda: library.fulltext.show(id))
        d = view.to_dict()
        text = "\n\n".join(f"## {s['heading']} (p.{s['page']})\n{s['text']}" for s in d["sections"])
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=FullText(**d).model_dump(mode="json")
        )

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=True))
    def translate_paper(
        id: Annotated[str, Field(min_length=1, max_length=500, description="a paper id with a full text")],
        max_requests: Annotated[
            int, Field(ge=0, le=40, description="model requests this call may make (0: only what is stored)")
        ] = 8,
    ) -> Annotated[CallToolResult, PaperTranslation]:
        """A paper's full text in Chinese, section by section: formulas, numbers and citations kept and
        checked, a section shown only when every passage of it passed the check. Each call goes on where
        the last stopped, spending at most `max_requests` requests of the configured model."""
        r = call(
            lambda: library.translator.translate(
                id, "zh", generate=max_requests > 0, max_chunks=max_requests if max_requests > 0 else None
            )
        )
        d = r.to_dict()
        text = "\n\n".join(
            f"## {s['heading_translated'] or s['heading']} (p.{s['page']})\n{s['text'] if s['done'] else '(' + s['note'] + ')'}"
            for s in d["sections"]
        )
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=PaperTranslation(**d).model_dump(mode="json"),
        )
