"""The multilingual index (`lib.multilingual`): a second set of vectors, from a multilingual model,
that queries in CJK script search by meaning. The model itself is embed/multilingual.py."""

from .capability import Multilingual

__all__ = ["Multilingual"]
