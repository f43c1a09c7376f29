"""The poster-walk planner against its baselines, on hand-made halls (pure functions)."""

from __future__ import annotations

import random

from paperatlas.programme.walk import Poster, plan, score_order, topk


def hall(n: int = 300, seed: int = 0) -> list[Poster]:
    rng = random.Random(seed)
    return [Poster(f"p{i}", i, rng.random() ** 4) for i in range(1, n + 1)]


def test_the_walk_fits_the_budget_and_goes_in_hall_order() -> None:
    posters = hall()
    for minutes in (20, 45, 90):
        w = plan(posters, minutes, per_poster=5, walk_per_100=4)
        numbers = [s.poster.number for s in w.stops]
        assert numbers == sorted(numbers) and w.used <= minutes + 1e-9
        assert len(w.stops) <= minutes // 5


def test_walking_cost_makes_the_planner_beat_both_baselines() -> None:
    better = 0
    for seed in range(20):
        posters = hall(seed=seed)
        p, t, s = (f(posters, 60, per_poster=4, walk_per_100=5) for f in (plan, topk, score_order))
        assert p.interest >= t.interest - 1e-9 and p.interest >= s.interest - 1e-9
        better += p.interest > max(t.interest, s.interest) + 1e-9
    assert better >= 15  # far apart posters cost the baselines their time


def test_without_walking_cost_the_planner_equals_top_k() -> None:
    posters = hall(seed=3)
    assert abs(plan(posters, 60, 5, 0).interest - topk(posters, 60, 5, 0).interest) < 1e-9


def test_must_sees_come_first_and_missing_ones_are_named() -> None:
    posters = hall(seed=1)
    posters[0].must_see = posters[-1].must_see = True  # the two ends of the hall
    w = plan(posters, 30, per_poster=5, walk_per_100=10)  # no time to walk 300 numbers
    visited = {s.poster.paper_id for s in w.stops}
    assert len(visited & {"p1", "p300"}) == 1
    assert [p.paper_id for p in w.missed_must_see] == list({"p1", "p300"} - visited)


def test_a_replan_starts_where_the_walker_stands() -> None:
    posters = hall(seed=2)
    w = plan(posters, 30, per_poster=5, walk_per_100=20, start=150)
    assert all(abs(s.poster.number - 150) <= 150 for s in w.stops)
    assert w.stops[0].arrive == abs(w.stops[0].poster.number - 150) * 20 / 100


def test_a_group_split_covers_posters_once_and_fairly() -> None:
    from paperatlas.programme.groups import split

    rng = random.Random(5)
    numbers = {f"p{i}": (i, f"t{i}", f"#{i}") for i in range(1, 101)}
    # two members who want the same posters, a third with other tastes
    shared = {pid: (rng.random(), False) for pid in numbers}
    other = {pid: (rng.random() ** 3, False) for pid in numbers}
    s = split("s", numbers, {"ana": shared, "bo": shared, "chen": other}, minutes=30, per_poster=5, walk_per_100=0)
    d = s.to_dict()
    assert d["overlap"] == 0 and d["covered"] == 18  # 6 posters each, none twice
    ana, bo = (sh.interest for sh in s.shares[:2])
    assert abs(ana - bo) < 0.5 * max(ana, bo)  # the draft keeps the two rivals close
    best = max(numbers, key=lambda p: shared[p][0] * 2 + other[p][0])  # the group's favourite
    assert best in {st.poster.paper_id for sh in s.shares for st in sh.walk.stops}
