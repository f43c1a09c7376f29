"""schemathesis `--checks all` against a normal `paperatlas serve` (tests/schemathesis_attack.py has the
attack and its configuration; the other server mode is in its own file, so a second worker runs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemathesis_attack import attack, build_library

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_library(tmp_path_factory)


def test_no_operation_answers_5xx(library: Path, tmp_path: Path) -> None:
    attack(library, "normal", tmp_path)
