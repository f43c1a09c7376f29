"""Reference-manager files in and out: Zotero's CSL-JSON, RIS, BibTeX/BibLaTeX and Zotero RDF.

`readers.read_entries(path)` turns an export into Entries that `readers.importer.match` finds
in the library; `writers` renders papers as RIS and CSL-JSON for Zotero to import.
"""

from __future__ import annotations

from .readers import FORMATS, READERS, Entry, read_entries, sniff

__all__ = ["FORMATS", "READERS", "Entry", "read_entries", "sniff"]
