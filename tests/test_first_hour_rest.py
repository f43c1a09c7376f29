"""What a newcomer hit in the first hour, each small: the help that lists every source, the plurals
and readable words of the CLI, the pages at phone size."""

from __future__ import annotations

from click.testing import CliRunner

from paperatlas.cli import cli
from paperatlas.sources.base import SOURCES


def test_fetch_help_lists_every_registered_source() -> None:
    res = CliRunner().invoke(cli, ["fetch", "--help"])
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    for name in SOURCES.names():
        assert f"{name} " in text.split("Example:")[0], name
    assert "virtual CONF YEAR" in text and "miniconf CONF YEAR" in text


def test_recommendation_scores_are_printed_with_the_decimals_that_tell_them_apart() -> None:
    from paperatlas.cli.common import score_decimals

    assert score_decimals([0.99934, 0.99921, 0.99907]) == 4
    assert score_decimals([0.9999912, 0.9999901]) == 6
    assert score_decimals([0.91, 0.52, 0.5]) == 3
    assert score_decimals([0.999, 0.999]) == 3  # equal scores need no more


def test_interest_labels_do_not_repeat_a_word_across_overlapping_n_grams() -> None:
    from types import SimpleNamespace

    import numpy as np

    from paperatlas.recommend.interests import key_phrases

    vocab = np.array(["simulation based", "based inference", "fluid", "inference", "turbulence"])
    corpus = SimpleNamespace(
        keywords={0: [], 1: []},
        tfidf=np.array([[0.9, 0.8, 0.5, 0.1, 0.3], [0.9, 0.8, 0.5, 0.1, 0.3]]),
        label_mask=np.ones(len(vocab)),
        cache={},
        vocab=vocab,
    )
    phrases = key_phrases(corpus, [0, 1], n=3)
    assert phrases == ["simulation based", "fluid", "turbulence"], phrases


def test_embed_with_nothing_to_do_does_not_say_embedded_0_papers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    from paperatlas import Library

    db = str(tmp_path / "demo.db")
    with Library(db, embedder="hashing") as lib:
        lib.ingest(sorted((Path(__file__).parents[1] / "examples").glob("*.txt")))
        lib.embed()
    res = CliRunner().invoke(cli, ["--db", db, "embed", "--embedder", "hashing", "--no-multilingual"])
    assert res.exit_code == 0, res.output
    assert "embedded 0 papers" not in res.output and "nothing to embed" in res.output


def test_make_install_silences_only_setuptools_editable_note() -> None:
    from pathlib import Path

    make = (Path(__file__).parents[1] / "Makefile").read_text(encoding="utf-8")
    assert "EDITABLE := PYTHONWARNINGS=ignore::UserWarning:setuptools.command.editable_wheel" in make
    assert make.count("$(EDITABLE) $(BIN)/pip install") == 2


def test_the_chinese_build_notice_ends_its_sentences_in_chinese() -> None:
    from paperatlas import i18n
    from paperatlas.web.app import make_env

    t = make_env().get_template("_results.html")
    with i18n.language("zh"):
        for eta in (0, 3960):
            html = t.render(
                crosslingual={"building": True, "done": 120, "total": 8088, "eta_s": eta},
                a={"session": None},
                hits=None,
                error=None,
            )
            notice = html[html.index('class="notice crosslingual"') : html.index("</p>")]
            assert "。在此之前" in notice and ". 在此之前" not in notice and "分钟." not in notice, notice


def test_session_shows_each_talk_of_an_oral_session_with_its_time(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    from paperatlas import Library

    db = str(tmp_path / "p.db")
    with Library(db, embedder="hashing") as lib:
        lib.ingest([Path(__file__).parent / "data" / "programme" / "neurips-2025-orals-posters.json"])
    res = CliRunner().invoke(cli, ["--db", db, "session", "neurips-2025-oral-session-17"])
    assert res.exit_code == 0, res.output
    talk = [ln for ln in res.output.splitlines() if "1kPO9vCRbg" in ln][0]
    assert talk.split()[0] == "12:15-12:30", talk
    res = CliRunner().invoke(cli, ["--db", db, "session", "neurips-2025-san-diego-poster-session-6"])
    assert [ln.split()[0] for ln in res.output.splitlines()[1:]] == ["#2449", "#2504"]
