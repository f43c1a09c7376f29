"""Fusion functions are pure: checked against values computed by hand."""

from __future__ import annotations

import pytest

from paperatlas.search.fusion import convex, maxscale, minmax, rrf, zscore

KW = [("a", 12.0), ("b", 9.0), ("c", 3.0)]
SEM = [("b", 0.80), ("d", 0.70), ("a", 0.40)]


def test_rrf_by_hand() -> None:
    out = dict(rrf([KW, SEM], k=60))
    assert out["a"] == pytest.approx(1 / 61 + 1 / 63)
    assert out["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert out["c"] == pytest.approx(1 / 63)
    assert out["d"] == pytest.approx(1 / 62)
    assert [pid for pid, _ in rrf([KW, SEM], k=60)] == ["b", "a", "d", "c"]


def test_rrf_weights_and_k() -> None:
    out = dict(rrf([KW, SEM], weights=[2.0, 0.5], k=1))
    assert out["a"] == pytest.approx(2 / 2 + 0.5 / 4)
    assert out["d"] == pytest.approx(0.5 / 3)
    # a zero weight drops that list entirely
    assert [pid for pid, _ in rrf([KW, SEM], weights=[1.0, 0.0])] == ["a", "b", "c"]


def test_rrf_ties_break_by_id_and_limit() -> None:
    out = rrf([[("z", 1.0)], [("y", 1.0)]], k=60)
    assert [pid for pid, _ in out] == ["y", "z"]
    assert rrf([KW, SEM], limit=2) == rrf([KW, SEM])[:2]
    assert rrf([]) == [] and rrf([[], []]) == []


def test_minmax_by_hand() -> None:
    assert minmax([("a", 3.0), ("b", 1.0), ("c", 2.0)]) == {"a": 1.0, "b": 0.0, "c": 0.5}
    assert minmax([("a", 5.0), ("b", 5.0)]) == {"a": 1.0, "b": 1.0}
    assert minmax([]) == {}


def test_convex_by_hand() -> None:
    # keyword normalised: a 1, b (9-3)/9 = 2/3, c 0; semantic: b 1, d 0.75, a 0
    out = dict(convex([KW, SEM], [0.4, 0.6]))
    assert out["a"] == pytest.approx(0.4 * 1 + 0.6 * 0)
    assert out["b"] == pytest.approx(0.4 * 2 / 3 + 0.6 * 1)
    assert out["c"] == pytest.approx(0.0)
    assert out["d"] == pytest.approx(0.6 * 0.75)
    assert [pid for pid, _ in convex([KW, SEM], [0.4, 0.6])] == ["b", "d", "a", "c"]


def test_convex_weights_are_normalised_and_missing_value() -> None:
    assert dict(convex([KW, SEM], [2, 3])) == pytest.approx(dict(convex([KW, SEM], [0.4, 0.6])))
    out = dict(convex([KW, SEM], [0.5, 0.5], missing=0.5))
    assert out["c"] == pytest.approx(0.5 * 0 + 0.5 * 0.5)  # c is absent from the semantic list
    assert convex([KW], [1.0]) == [(p, s) for p, s in sorted(minmax(KW).items(), key=lambda x: -x[1])]
    assert convex([[], []], [0.5, 0.5]) == []


def test_convex_one_list_only_keeps_its_order() -> None:
    assert [p for p, _ in convex([KW, []], [0.5, 0.5])] == ["a", "b", "c"]
    assert [p for p, _ in convex([[], SEM], [0.5, 0.5])] == ["b", "d", "a"]


def test_zscore_by_hand() -> None:
    z = zscore([("a", 3.0), ("b", 1.0), ("c", 2.0)])  # mean 2, population std sqrt(2/3)
    assert z["a"] == pytest.approx(1 / (2 / 3) ** 0.5) and z["c"] == pytest.approx(0.0)
    assert z["b"] == pytest.approx(-z["a"])
    assert zscore([("a", 4.0), ("b", 4.0)]) == {"a": 0.0, "b": 0.0} and zscore([]) == {}


def test_maxscale_by_hand() -> None:
    assert maxscale([("a", 4.0), ("b", 1.0), ("c", 2.0)]) == {"a": 1.0, "b": 0.25, "c": 0.5}
    # a negative cosine counts as 0; a list with no positive score is all 0, not all 1 as min-max makes it
    assert maxscale([("a", 0.5), ("b", -0.1)]) == {"a": 1.0, "b": 0.0}
    assert maxscale([("a", 0.0), ("b", 0.0)]) == {"a": 0.0, "b": 0.0} and maxscale([]) == {}


def test_maxscale_keeps_a_close_list_close_and_does_not_move_with_depth() -> None:
    close = [("a", 0.62), ("b", 0.61), ("c", 0.60)]
    assert maxscale(close)["c"] == pytest.approx(0.60 / 0.62)  # min-max would make it 0
    assert minmax(close)["c"] == 0.0
    # fetching fewer candidates changes min-max's scale, not max's
    assert maxscale(close[:2])["b"] == maxscale(close)["b"] and minmax(close[:2])["b"] != minmax(close)["b"]


def test_convex_max_by_hand() -> None:
    out = dict(convex([KW, SEM], [0.45, 0.55], norm="max"))
    assert out["a"] == pytest.approx(0.45 * 1.0 + 0.55 * 0.40 / 0.80)
    assert out["d"] == pytest.approx(0.45 * 0.25 + 0.55 * 0.70 / 0.80)  # absent from KW: that list's lowest


def test_convex_zscore_missing_defaults_to_the_lists_floor() -> None:
    out = dict(convex([KW, SEM], [0.5, 0.5], norm="zscore"))
    zk, zs = zscore(KW), zscore(SEM)
    assert out["c"] == pytest.approx(0.5 * zk["c"] + 0.5 * min(zs.values()))
    assert out["d"] == pytest.approx(0.5 * min(zk.values()) + 0.5 * zs["d"])


def test_calibrated_convex_keeps_a_weak_best_match_weak() -> None:
    from paperatlas.search.fusion import calibrated_convex
    from paperatlas.search.floor import ScoreScale

    scale = ScoreScale(low=0.75, high=0.85)
    assert scale(0.70) == 0.0 and scale(0.80) == pytest.approx(0.5) and scale(0.90) == 1.0
    # no keyword match at all (BM25 0 everywhere): the keyword side adds nothing, min-max would add 1.0
    out = calibrated_convex([("a", 0.0), ("b", 0.0)], [("a", 0.80), ("b", 0.78)], scale, 0.8)
    assert [pid for pid, _ in out] == ["a", "b"] and out[0][1] == pytest.approx(0.4)
    # a clearly better meaning match beats a paper that only shares an acronym with the query
    out = calibrated_convex([("acr", 3.0)], [("meaning", 0.86), ("acr", 0.76)], scale, 0.8)
    assert out[0][0] == "meaning"
    # beyond the scale's ends, the higher cosine still ranks first
    out = calibrated_convex([], [("x", 0.70), ("y", 0.72)], scale, 1.0)
    assert [pid for pid, _ in out] == ["y", "x"]
