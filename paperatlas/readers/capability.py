"""Readers: who reads the library, and what each of them did with its papers (likes, dismissals,
seen marks, tags, notes, saved searches, triage answers)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, PaperatlasError
from ..i18n import gettext
from ..models import Paper
from ..store.personal import Feedback, Reader
from .importer import ImportReport, match, read_entries
from .skeleton import looks_like

if TYPE_CHECKING:
    from ..core import LibraryCore

ReaderArg = str | Reader | None
MAX_NAME = 64  # characters of a reader name
# Unicode categories a reader name may not hold: control characters, format characters (the
# invisible ones: zero-width spaces and joiners, bidi overrides) and lone surrogates. Private-use and
# unassigned code points are neither: they show as a box or a font's own glyph.
BAD_NAME_CATEGORIES = ("Cc", "Cf", "Cs")
# characters of a tag: one rule for every surface (a tag written by the CLI must stay removable on the web)
MAX_TAG = 64


def check_tag(tag: str) -> str:
    """The tag, stripped; an error naming the fix for an empty or long one."""
    tag = tag.strip()
    if not tag or len(tag) > MAX_TAG:
        raise PaperatlasError(gettext("bad tag {tag!r}", tag=tag), gettext("use 1-64 characters"))
    return tag


def check_name(name: str, existing: Iterable[str] = ()) -> str:
    """The name, stripped; an error naming the fix for an empty, long or unprintable one, or for a
    new name that reads as one of the `existing` names without being it (skeleton.py: "mе" with a
    Cyrillic е, "ме", "ME" beside "me"), so no reader can pose as another."""
    name = name.strip()
    if not name or len(name) > MAX_NAME:
        raise PaperatlasError(gettext("bad reader name {name!r}", name=name), gettext("use 1-64 characters"))
    if any(unicodedata.category(ch) in BAD_NAME_CATEGORIES for ch in name):
        raise PaperatlasError(
            gettext("bad reader name {name!r}: it holds control or invisible characters", name=name),
            gettext("use letters, digits, spaces and punctuation"),
        )
    if "=?" in name and "?=" in name:  # an RFC 2047 encoded word: mail headers would decode it
        raise PaperatlasError(
            gettext("bad reader name {name!r}: it looks like MIME-encoded text (=?...?=)", name=name),
            gettext("write the name as plain text"),
        )
    for other in existing:
        if other != name and looks_like(name, other):
            raise PaperatlasError(
                gettext("bad reader name {name!r}: it looks like the reader {other!r}", name=name, other=other),
                gettext("choose a name that reads differently"),
            )
    return name


class Readers:
    """The library's readers and their feedback, tags, notes and saved searches.

    Example:
        >>> lib.readers.set_feedback("me", ["2106.09685"], "like")  # doctest: +SKIP
        >>> lib.readers.tag("me", ["2106.09685"], "to-read")  # doctest: +SKIP
    """

    def __init__(self, lib: LibraryCore) -> None:
        self._lib = lib
        self._store = lib.store

    # -- who --------------------------------------------------------------------------------
    def get(self, name: ReaderArg = None, create: bool = True) -> Reader:
        """The reader called `name` (default "me"), created on first use unless `create` is False."""
        if isinstance(name, Reader):
            return name
        try:
            name = check_name(name or "me")
        except PaperatlasError:
            if create:
                raise
            # looking one up: a name no reader can have is simply not there
            raise NotFound(f"no reader {name!r}", "`paperatlas readers` lists them") from None
        r = self._store.readers.get_reader(name)
        if r is None:
            if not create:
                raise NotFound(f"no reader {name!r}", "`paperatlas readers` lists them")
            # "me" is the owner's even before its first write creates it
            check_name(name, {"me", *(r.name for r in self._store.readers.list_readers())})
            r = self._store.readers.create_reader(name)
        return r

    def find(self, name_or_id: str | int) -> Reader | None:
        """The reader with this name or id, or None (never creates one)."""
        return self._store.readers.get_reader(name_or_id)

    # -- web sessions: a sign-in is a row in the library, so signing out ends it everywhere
    def new_session(self, reader_id: int, max_age: int) -> str:
        """A new web session of the reader for `max_age` seconds; its secret id (only a hash is kept)."""
        return self._store.readers.create_session(reader_id, max_age)

    def session_is_live(self, reader_id: int, sid: str) -> bool:
        """Whether `sid` is an unexpired session of this reader (not signed out, token not reset)."""
        return self._store.readers.session_is_live(reader_id, sid)

    def end_session(self, sid: str) -> None:
        self._store.readers.end_session(sid)

    def by_token(self, token: str) -> Reader | None:
        """The reader whose secret token this is, or None."""
        return self._store.readers.reader_by_token(token)

    def all(self) -> list[Reader]:
        """Every reader, oldest first."""
        return self._store.readers.list_readers()

    def reset_token(self, reader: ReaderArg) -> str:
        """A new secret token for the reader (the old one stops working). Returns it."""
        return self._store.readers.reset_token(self.get(reader, create=False).id)

    check_name = staticmethod(check_name)

    # -- feedback ---------------------------------------------------------------------------
    def set_feedback(self, reader: ReaderArg, paper_ids: Sequence[str], kind: str, on: bool = True) -> None:
        """Like (= star), dislike ("not interested") or mark seen; `on=False` clears it."""
        r = self.get(reader)
        ids = [self._lib.get(pid).id for pid in paper_ids]
        self._store.readers.set_feedback(r.id, ids, kind, on)

    def feedback(self, reader: Reader, kind: str | None = None) -> list[Feedback]:
        """The reader's feedback (of one kind, or all), oldest first; none for an unsaved reader."""
        return self._store.readers.feedback(reader.id, kind) if reader.id else []

    def feedback_for(self, reader: Reader | None, paper_ids: Sequence[str]) -> dict[str, set[str]]:
        """paper id -> the kinds of feedback the reader gave it (only papers with some)."""
        if reader is None or not reader.id or not paper_ids:
            return {}
        return self._store.readers.feedback_for_papers(reader.id, list(paper_ids))

    def choices(self, reader: Reader) -> list[tuple[str, str, str]]:
        """The reader's triage answers: (winner, loser, created_at), oldest first."""
        return self._store.readers.choices(reader.id) if reader.id else []

    def liked(self, reader: ReaderArg = None) -> list[Paper]:
        """A reader's liked (starred, saved) papers, oldest first."""
        r = self.get(reader)
        return self._lib.get_many([f.paper_id for f in self._store.readers.feedback(r.id, "like")])

    # -- tags and notes ---------------------------------------------------------------------
    def tag(self, reader: ReaderArg, paper_ids: Sequence[str], tag: str, remove: bool = False) -> None:
        """Add (or remove) a tag of 1-64 characters on papers."""
        r = self.get(reader)
        tag = check_tag(tag)
        for pid in paper_ids:
            real = self._lib.get(pid).id
            if remove:
                self._store.readers.remove_tag(r.id, real, tag)
            else:
                self._store.readers.add_tag(r.id, real, tag)

    def tags(self, reader: Reader | None, paper_id: str | None = None) -> dict[str, list[str]]:
        """paper id -> the reader's tags on it (of one paper, or of all)."""
        if reader is None or not reader.id:
            return {}
        return self._store.readers.tags(reader.id, paper_id)

    def note(self, reader: ReaderArg, paper_id: str, text: str) -> None:
        """Set (or, with empty text, clear) the reader's note on a paper."""
        r = self.get(reader)
        self._store.readers.set_note(r.id, self._lib.get(paper_id).id, text)

    def notes(self, reader: Reader | None) -> dict[str, str]:
        """paper id -> the reader's note on it."""
        if reader is None or not reader.id:
            return {}
        return self._store.readers.notes(reader.id)

    # -- saved searches ---------------------------------------------------------------------
    def saved_searches(self, reader: Reader | None) -> list[dict[str, Any]]:
        """{"id", "name", "query", "params", "created_at"} of each of the reader's saved searches."""
        if reader is None or not reader.id:
            return []
        return self._store.readers.saved_searches(reader.id)

    def save_search(self, reader: ReaderArg, name: str, query: str, params: dict[str, Any]) -> int:
        """Save a search under `name`; returns its id. Saving the same search again keeps its id,
        so a feed reader's subscription stays valid; a new query under an old name replaces it."""
        r = self.get(reader)
        same = next((s for s in self._store.readers.saved_searches(r.id) if s["name"] == name), None)
        if same is not None and same["query"] == query and same["params"] == params:
            return int(same["id"])
        return self._store.readers.save_search(r.id, name, query, params)

    def delete_saved_search(self, reader: ReaderArg, search_id: int) -> None:
        self._store.readers.delete_saved_search(self.get(reader).id, search_id)

    def saved_search_owner(self, search_id: int) -> Reader | None:
        """The reader who saved this search (a feed URL carries only the search's id)."""
        return next(
            (r for r in self.all() if any(s["id"] == search_id for s in self._store.readers.saved_searches(r.id))), None
        )

    # -- import -----------------------------------------------------------------------------
    def import_file(self, reader: ReaderArg, path: str | Path, format: str | None = None) -> ImportReport:
        """Like every paper of a reference file (CSL-JSON, RIS, BibTeX, Zotero RDF, a title/id list), or of a
        Zotero library read through the web API (`zotero:users/ID`), that is in the library; report the rest.
        The source is read whole before anything is written."""
        from ..refs import zotero_api
        from ..refs.readers import sniff

        if zotero_api.is_spec(str(path)):  # zotero:users/ID: the Zotero web API
            fmt, entries = "zotero-api", zotero_api.read_zotero_api(str(path))
        else:
            fmt = format or sniff(Path(path).read_text(encoding="utf-8-sig", errors="replace"))
            entries = read_entries(path, fmt)
        r = self.get(reader)
        report = match(self._lib, entries)
        report.format = fmt
        ids = list(dict.fromkeys(pid for _, pid, _ in report.matched))
        if ids:
            self._store.readers.set_feedback(r.id, ids, "like", True)
        return report
