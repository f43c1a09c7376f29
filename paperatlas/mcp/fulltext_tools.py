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


def register(server: MCPServer, library: Any, call: Callable[[Callable[[], T]], T]) -> None:
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
