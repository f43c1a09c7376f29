"""Readers: the people who read a library, their feedback, tags, notes and saved searches, and the
import of a reader's own reference library (Zotero, BibTeX, RIS...)."""

from ..store.personal import FEEDBACK_KINDS, Feedback, Reader
from .capability import MAX_TAG, ReaderArg, Readers, check_name, check_tag
from .importer import ImportReport

__all__ = [
    "FEEDBACK_KINDS",
    "MAX_TAG",
    "Feedback",
    "ImportReport",
    "Reader",
    "ReaderArg",
    "Readers",
    "check_name",
    "check_tag",
]
