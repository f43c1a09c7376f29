"""The column names each paper field goes by in the files people ingest.

One table, read both by the readers (formats.py: a CSV must have an abstract column) and by the
normaliser (normalize.py: which column fills which field), so neither imports the other for it.
"""

from __future__ import annotations

ID_KEYS = ("id", "_id", "paper_id", "openreview_id", "forum", "arxiv_id", "doi", "key")
TITLE_KEYS = ("title", "paper_title", "name", "paper")
ABSTRACT_KEYS = ("abstract", "summary", "abstractnote", "abstract_text", "abs", "text", "description", "content")
AUTHOR_KEYS = ("authors", "author", "author_names", "authors_list", "creators")
VENUE_KEYS = ("venue", "conference", "booktitle", "journal", "series", "publication")
YEAR_KEYS = ("year", "publication_year", "pub_year", "date", "published", "update_date", "cdate", "pdate")
STATUS_KEYS = ("status", "decision", "presentation", "presentation_type", "session_type")
TRACK_KEYS = ("track",)
KEYWORD_KEYS = ("keywords", "keyword", "tags", "categories", "subjects", "topics")
URL_KEYS = ("url", "link", "forum_url", "site", "pdf_url", "pdf", "html_url")
EXTRA_KEYS = (
    "primary_area",
    "tldr",
    "doi",
    "openreview_id",
    "openalex_id",
    "arxiv_id",
    "categories",
    "journal_ref",
    "primary_category",
    # where and how a paper is presented (docs/fields.md), as pasted lists and programme exports give it
    "presentation",
    "room",
    "poster_position",
    "session",
    "time",
    "affiliations",
    "institutions",
    "comments",
)
