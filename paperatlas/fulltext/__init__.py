"""The body of papers: PDFs read into sections, captions and references, searched and asked."""

from .capability import AddResult, BodyHit, Fulltext, FulltextView, Passage, SectionText
from .reader import REASONS, Document, FulltextError, read_pdf

__all__ = [
    "REASONS",
    "AddResult",
    "BodyHit",
    "Document",
    "Fulltext",
    "FulltextError",
    "FulltextView",
    "Passage",
    "SectionText",
    "read_pdf",
]
