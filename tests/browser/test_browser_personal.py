"""The personal pages in a real browser: a like re-ranks For you in place, a profile edit
re-ranks the list, triage by keyboard, the reading-group page, the digest and a saved-search feed.
Each test acts as its own reader, created from the reader switch in the header."""

from __future__ import annotations

import re

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the `server` fixture skips (or fails in CI) with the reason
    expect = None

from .conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def become(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """Create a reader and sign in as them from the header's sign-in link, as a person would."""
    page.goto("/foryou")
    page.locator("header .reader a").click()  # "switch" (the owner) or "sign in"
    page.locator('form.signin input[name="name"]').fill(name)
    page.locator("form.signin button").click()
    page.wait_for_load_state()
    expect(page.locator("header .reader b")).to_have_text(name)


def like(page, *paper_ids: str) -> None:  # type: ignore[no-untyped-def]
    """Star papers over HTTP, as this browser (its cookies and CSRF token)."""
    token = page.locator('meta[name="csrf-token"]').get_attribute("content")
    for pid in paper_ids:
        r = page.request.post(
            f"/paper/{pid}/star", form={"on": "1"}, headers={"X-CSRF-Token": token, "Accept": "application/json"}
        )
        assert r.ok, r.text()


def list_ids(page, scope: str) -> list[str]:  # type: ignore[no-untyped-def]
    return page.locator(f"{scope} .paper-item").evaluate_all("els => els.map(e => e.dataset.id)")


def test_like_reranks_for_you(page) -> None:  # type: ignore[no-untyped-def]
    become(page, "liker")
    page.goto("/foryou")
    expect(page.locator("#foryou-list .why.shared")).to_contain_text("no likes yet")
    before = list_ids(page, "#foryou-list")
    assert len(before) >= 10
    third = page.locator("#foryou-list .paper-item").nth(2)
    liked = third.get_attribute("data-id")
    third.locator("button.star").click()
    # the list refreshes in place: the liked paper leaves it and every card says why
    expect(page.locator(f'#foryou-list .paper-item[data-id="{liked}"]')).to_have_count(0)
    expect(page.locator("#foryou-list .paper-item .why").first).to_contain_text("because you liked")
    after = list_ids(page, "#foryou-list")
    assert after != before and liked not in after
    assert page.request.get("/foryou.json").json()["likes"] == 1
    shot(page, "foryou", full_page=False)

    # "not interested" on the top card: it goes too, and the list changes again
    top = page.locator("#foryou-list .paper-item").first
    gone = top.get_attribute("data-id")
    top.locator("button.dismiss").click()
    expect(page.locator(f'#foryou-list .paper-item[data-id="{gone}"]')).to_have_count(0)
    assert page.request.get(f"/paper/{gone}.json").json()["dismissed"] is True

    # a tag from a card, without leaving the page
    card = page.locator("#foryou-list .paper-item").first
    card.locator(".tagger summary").click()
    card.locator(".tag-form input[name=tag]").fill("later")
    card.locator(".tag-form button").click()
    expect(card.locator(".taglist")).to_contain_text("later")

    # the method switch reloads with the other recommender
    page.locator('.method-switch input[value="svm"]').check()
    page.wait_for_url(re.compile(r"method=svm"))
    assert page.locator("#foryou-list .paper-item").count() >= 10


def test_profile_edit_reranks(page) -> None:  # type: ignore[no-untyped-def]
    become(page, "editor")
    like(page, "h4d3f4009a668243", "hbe57b4c254fe18d", "hd5faeb7e4f49d44")  # LLM routing, providers, signed graphs
    page.goto("/profile")
    assert page.locator(".interest").count() >= 1
    before = list_ids(page, ".preview")

    # add a phrase as a new interest: the preview under the profile re-ranks
    page.locator("form.add-phrase.new input[name=add_phrase]").fill("brain stimulation")
    page.locator("form.add-phrase.new button").click()
    page.wait_for_load_state()
    expect(page.locator(".interest .phrases li.added").first).to_contain_text("brain stimulation")
    added = list_ids(page, ".preview")
    assert added != before
    assert added[0] == "h97dff6a2b01d681"  # "Brain stimulation: a computational framework ..."
    expect(page.locator(".preview .paper-item .why").first).to_contain_text("brain stimulation")

    page.locator("textarea[name=preferences]").fill("more theory, fewer benchmark papers")
    page.locator(".prefs-form button").click()
    page.wait_for_load_state()
    expect(page.locator("textarea[name=preferences]")).to_have_value("more theory, fewer benchmark papers")
    shot(page, "profile", full_page=True)

    # remove the interest learnt from the likes: the list changes again
    learnt = (
        page.locator(".interest:not(.removed)", has=page.locator("button.remove"))
        .filter(has_not=page.locator("li.added"))
        .first
    )
    learnt.locator("button.remove").click()
    page.wait_for_load_state()
    expect(page.locator(".interest.removed")).to_have_count(1)
    assert list_ids(page, ".preview") != added
    prof = page.request.get("/profile.json").json()
    assert sum(i["removed"] for i in prof["interests"]) == 1
    assert prof["preferences"] == "more theory, fewer benchmark papers"


def test_triage_by_keyboard(page) -> None:  # type: ignore[no-untyped-def]
    become(page, "chooser")
    page.goto("/triage")
    duel = page.locator(".duel")
    a, b = duel.get_attribute("data-a"), duel.get_attribute("data-b")
    assert a and b and a != b
    expect(page.locator(".duel-card")).to_have_count(2)
    shot(page, "triage")
    page.keyboard.press("a")
    expect(page.locator(".duel")).not_to_have_attribute("data-a", a)
    a2, b2 = duel.get_attribute("data-a"), duel.get_attribute("data-b")
    assert not {a, b} & {a2, b2}
    page.keyboard.press("ArrowRight")
    expect(page.locator(".duel")).not_to_have_attribute("data-a", a2)
    page.locator("form.choose button.choose-a").click()  # and with the mouse
    page.wait_for_load_state()
    a3 = duel.get_attribute("data-a")
    page.keyboard.press("n")  # neither
    expect(page.locator(".duel")).not_to_have_attribute("data-a", a3 or "")
    state = page.request.get("/triage.json").json()
    assert state["choices"] == 4 and state["reader"] == "chooser"
    expect(page.locator(".count").first).to_contain_text("4 answered")
    # papers met in triage are judged: they leave For you
    listed = {h["id"] for h in page.request.get("/foryou.json?per_page=100").json()["hits"]}
    assert not {a, b, a2, b2} & listed


def test_group_digest_and_feeds(page) -> None:  # type: ignore[no-untyped-def]
    for name, ids in [
        ("g-ann", ["h4185992fcd6e189", "h5a46f26bf4351de"]),  # user simulators
        ("g-bo", ["h70c65e847c18a1c", "h58c089a73dae338"]),  # preferences, bandits
        ("g-cy", ["h1da075f3b15d85f", "h4eee51aaad2dd4d"]),
    ]:  # chess, Lean
        become(page, name)
        like(page, *ids)
    page.goto("/group?readers=g-ann&readers=g-bo&readers=g-cy&n=6")
    expect(page.locator("table.members tbody tr")).to_have_count(3)
    expect(page.locator("#main .paper-item")).to_have_count(6)
    shares = page.locator("table.members meter").evaluate_all("els => els.map(e => Number(e.value))")
    assert abs(sum(shares) - 1) < 0.01 and min(shares) > 0
    shot(page, "group", full_page=True)
    page.locator("a.method-toggle").click()
    page.wait_for_url(re.compile(r"method=sum"))
    expect(page.locator("input[name=method][value=sum]")).to_be_checked()

    page.goto("/digest")
    expect(page.locator("#main .paper-item").first).to_be_visible()
    feed = page.request.get(page.locator("a.feed").first.get_attribute("href"))
    assert feed.ok and "<feed" in feed.text() and "urn:paperatlas:paper:" in feed.text()
    shot(page, "digest", full_page=True)

    page.goto("/search?q=user+simulators")
    page.locator("form.save-search button").click()
    expect(page.locator("a.saved-search")).to_be_visible()
    page.goto("/digest")
    search_feed = page.locator("#searches a.feed", has_text="user simulators")
    expect(search_feed).to_have_count(1)
    got = page.request.get(search_feed.get_attribute("href"))
    assert got.ok and "<entry>" in got.text()
    # the ones g-cy liked are never in g-cy's feeds
    assert "urn:paperatlas:paper:h1da075f3b15d85f" not in feed.text()


def test_personal_pages_on_a_phone_in_dark(browser, server) -> None:  # type: ignore[no-untyped-def]
    ctx = browser.new_context(
        base_url=server, viewport={"width": 390, "height": 844}, color_scheme="dark", is_mobile=True, has_touch=True
    )
    pg = ctx.new_page()
    for path, name in [("/triage", "triage-phone-dark"), ("/foryou", "foryou-phone-dark")]:
        pg.goto(path)
        assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
        shot(pg, name)
    ctx.close()
