"""Reader names that read as another reader's are refused where every surface creates readers
(readers.check_name, through Readers.get): the UTS #39 skeleton of Unicode's confusables table."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.errors import PaperatlasError
from paperatlas.readers import check_name
from paperatlas.readers.skeleton import looks_like, skeleton

CYRILLIC_E = "m\u0435"  # Latin m, Cyrillic е
CYRILLIC_ME = "\u043c\u0435"  # Cyrillic м and е


@pytest.mark.parametrize("name", [CYRILLIC_E, CYRILLIC_ME, "ME", "ｍｅ", "\U0001d426\U0001d41e", "rne"])
def test_look_alikes_of_me_are_refused(name):
    with pytest.raises(PaperatlasError, match="looks like the reader 'me'"):
        check_name(name, ["me"])


def test_distinct_names_pass_and_a_name_is_not_its_own_look_alike():
    assert check_name("me", ["me"]) == "me"
    assert check_name("mei", ["me", "alice"]) == "mei"
    assert check_name("李雷", ["me", "韩梅梅"]) == "李雷"
    assert skeleton("a1ice") == skeleton("alice") and not looks_like("alice", "bob")


def test_a_look_alike_of_an_existing_reader_is_not_created(tmp_path: Path):
    db = tmp_path / "lib.db"
    runner = CliRunner()
    with Library(str(db)) as lib:
        lib.readers.get("alice")
    for name in ("\u0430lice", "a1ice", CYRILLIC_ME):  # Cyrillic а; digit one; "me" before it exists
        res = runner.invoke(cli, ["--db", str(db), "readers", "add", name])
        assert res.exit_code != 0 and "looks like the reader" in res.output, (name, res.output)
    with Library(str(db)) as lib:
        assert [r.name for r in lib.readers.all()] == ["alice"]
        assert lib.readers.get("me").name == "me"  # the owner's own name is always fine
        assert lib.readers.get("alice").name == "alice"
