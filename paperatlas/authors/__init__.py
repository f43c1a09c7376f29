"""Authors: tolerant name matching ("P. Liang" finds "Percy Liang", "Jurgen" finds "Jürgen"),
an in-memory index from names to papers, and `author:"Name"` filters inside a query. `Authors`
(capability.py) is what `lib.authors` holds."""

from .capability import Authors
from .index import AuthorIndex
from .names import fold, name_tokens, names_match, split_author_filters

__all__ = ["AuthorIndex", "Authors", "fold", "name_tokens", "names_match", "split_author_filters"]
