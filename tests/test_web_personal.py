"""Personal web pages (issue 6) through an ASGI test client: For you, not interested, the
editable profile, triage, reading groups, digest, Atom feeds and saved searches."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from bs4 import BeautifulSoup
from starlette.testclient import TestClient

from paperatlas import Library
from paperatlas.web import auth, create_app
from paperatlas.web.common import CSRF_COOKIE


ATOM = "{http://www.w3.org/2005/Atom}"

# Three clear topics, so a like or a phrase has a visible effect even with the hashing embedder.
TOPICS = {
    "protein": [
        "Protein language models predict folding",
        "Protein structure design with language models",
        "Protein binding affinity from sequence",
        "Protein language model adapters for enzymes",
    ],
    "diffusion": [
        "Diffusion models for image generation",
        "Faster sampling for diffusion models",
        "Diffusion models generate video frames",
        "Guidance in diffusion models for images",
    ],
    "graph": [
        "Graph neural networks for molecules",
        "Message passing graph networks at scale",
        "Graph transformers for node classification",
        "Oversmoothing in deep graph networks",
    ],
}
PAPERS = [
    {
        "id": f"{topic}/{i}",
        "title": title,
        "venue": "TestConf",
        "year": 2025,
        "abstract": f"{title}. We study {topic} {topic} methods and report {topic} results.",
    }
    for topic, titles in TOPICS.items()
    for i, title in enumerate(titles)
]


def csrf_of(client: TestClient) -> dict[str, str]:
    assert client.get("/healthz").status_code == 200
    return {"x-csrf-token": client.cookies.get(CSRF_COOKIE) or "", "accept": "application/json"}


def ids(hits: list[dict]) -> list[str]:
    return [h["id"] for h in hits]


def topic_share(hit_ids: list[str], topic: str) -> int:
    return sum(i.startswith(topic + "/") for i in hit_ids)


# -- For you ---------------------------------------------------------------------------------------
def test_foryou_learns_from_a_like(client: TestClient, web_lib: Library) -> None:
    cold = client.get("/foryou.json", params={"per_page": 8}).json()
    assert cold["reader"] == "me" and cold["likes"] == 0 and len(cold["hits"]) == 8
    assert all("no likes yet" in h["reason"] for h in cold["hits"])
    assert web_lib.readers.all() == []  # looking never creates a reader
    h = csrf_of(client)
    for pid in ("protein/0", "protein/1"):
        assert client.post(f"/paper/{pid}/star", data={"on": "1"}, headers=h).json()["starred"] is True
    warm = client.get("/foryou.json", params={"per_page": 8}).json()
    assert warm["likes"] == 2
    assert not {"protein/0", "protein/1"} & set(ids(warm["hits"]))  # judged papers leave the list
    assert ids(warm["hits"]) != ids(cold["hits"])
    assert topic_share(ids(warm["hits"])[:2], "protein") == 2  # the other protein papers come first
    assert "because you liked" in warm["hits"][0]["reason"] and "Protein" in warm["hits"][0]["reason"]
    # the page says why on each card, and offers the method switch and the card actions
    soup = BeautifulSoup(client.get("/foryou").text, "html.parser")
    first = soup.select_one("#foryou-list .paper-item")
    assert first["data-id"] == warm["hits"][0]["id"]
    assert "because you liked" in first.select_one(".why").get_text()
    assert {i["value"] for i in soup.select(".method-switch input[name=method]")} == {"default", "svm"}
    assert first.select_one("form.dismiss-form") and first.select_one("form.tag-form")
    frag = client.get("/foryou", params={"fragment": 1}).text
    assert "<html" not in frag and "paper-item" in frag


def test_foryou_methods_and_paging(client: TestClient) -> None:
    h = csrf_of(client)
    client.post("/paper/graph/0/star", data={"on": "1"}, headers=h)
    svm = client.get("/foryou.json", params={"method": "svm", "per_page": 5}).json()
    assert svm["method"] == "svm" and len(svm["hits"]) == 5 and svm["methods"] == ["default", "svm"]
    p1 = client.get("/foryou.json", params={"per_page": 4}).json()
    p2 = client.get("/foryou.json", params={"per_page": 4, "page": 2}).json()
    assert p1["has_more"] and not set(ids(p1["hits"])) & set(ids(p2["hits"]))
    only = client.get("/foryou.json", params={"venue": "TestConf", "per_page": 50}).json()
    assert only["hits"] and all(x["venue"] == "TestConf" for x in only["hits"])
    bad = client.get("/foryou.json", params={"method": "magic"})
    assert bad.status_code == 400 and "default" in bad.json()["error"]


def test_not_interested_needs_csrf_and_pushes_papers_down(client: TestClient, web_lib: Library) -> None:
    url = "/paper/diffusion/0/dismiss"
    assert client.post(url, data={"on": "1"}, headers={"accept": "application/json"}).status_code == 403
    h = csrf_of(client)
    client.post("/paper/diffusion/1/star", data={"on": "1"}, headers=h)
    before = ids(client.get("/foryou.json", params={"per_page": 6}).json()["hits"])
    r = client.post(url, data={"on": "1"}, headers=h)
    assert r.status_code == 200 and r.json() == {"id": "diffusion/0", "dismissed": True, "reader": "me"}
    kinds = [
        f.kind for f in web_lib.store.readers.feedback(web_lib.readers.get("me").id) if f.paper_id == "diffusion/0"
    ]
    assert kinds == ["dislike"]
    after = ids(client.get("/foryou.json", params={"per_page": 6}).json()["hits"])
    assert "diffusion/0" not in after and after != before
    assert client.get("/paper/diffusion/0.json").json()["dismissed"] is True
    paper = BeautifulSoup(client.get("/paper/diffusion/0").text, "html.parser")
    assert paper.select_one(".actions button.dismiss")["aria-pressed"] == "true"
    # undo, and a form post without JavaScript goes back to the page it came from
    r = client.post(
        url,
        data={"on": "0", "csrf": h["x-csrf-token"]},
        headers={"referer": "http://127.0.0.1/foryou"},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/foryou"
    assert client.get("/paper/diffusion/0.json").json()["dismissed"] is False


def test_every_card_has_like_not_interested_and_tag(client: TestClient) -> None:
    soup = BeautifulSoup(client.get("/search", params={"q": "protein"}).text, "html.parser")
    cards = soup.select(".paper-item")
    assert cards
    for c in cards:
        pid = c["data-id"]
        assert c.select_one("form.star-form")["action"] == f"/paper/{pid}/star"
        assert c.select_one("form.dismiss-form")["action"] == f"/paper/{pid}/dismiss"
        assert c.select_one("form.tag-form")["action"] == f"/paper/{pid}/tags"
        assert c.select_one("form.dismiss-form input[name=csrf]")["value"]
    # tags from a card land on the reader's saved list
    h = csrf_of(client)
    assert client.post("/paper/protein/2/tags", data={"tag": "to read"}, headers=h).json()["tags"] == ["to read"]


# -- profile ---------------------------------------------------------------------------------------
def test_profile_edits_change_the_ranking(client: TestClient, web_lib: Library) -> None:
    h = csrf_of(client)
    for pid in ("protein/0", "protein/1", "graph/0"):
        client.post(f"/paper/{pid}/star", data={"on": "1"}, headers=h)
    prof = client.get("/profile.json").json()
    assert prof["reader"] == "me" and prof["likes"] == 3 and prof["interests"]
    it = prof["interests"][0]
    assert it["label"] and it["phrases"] and it["examples"][0]["title"]
    base = ids(client.get("/foryou.json", params={"per_page": 4}).json()["hits"])
    assert topic_share(base, "diffusion") == 0

    # add a phrase as a new interest: diffusion papers come up, and the answer carries the new top
    r = client.post("/profile/edit", data={"add_phrase": "diffusion models"}, headers=h)
    assert r.status_code == 200, r.text
    edited = r.json()
    assert any("diffusion models" in i["added"] for i in edited["interests"])
    top = ids(edited["recommendations"])
    assert top == ids(client.get("/foryou.json", params={"per_page": 5}).json()["hits"])
    assert topic_share(top, "diffusion") >= 2 and top[:4] != base

    # remove every interest learnt from likes: the liked topics stop counting
    for i in edited["interests"]:
        if not i["added"]:
            r = client.post("/profile/edit", data={"remove": i["id"]}, headers=h)
            assert r.status_code == 200
    removed = r.json()
    assert all(i["removed"] for i in removed["interests"] if not i["added"])
    assert topic_share(ids(removed["recommendations"])[:4], "diffusion") == 4

    # free-text preferences are stored, shown and cleared
    assert (
        client.post("/profile/edit", data={"preferences": "more theory, fewer benchmark papers"}, headers=h).json()[
            "preferences"
        ]
        == "more theory, fewer benchmark papers"
    )
    soup = BeautifulSoup(client.get("/profile").text, "html.parser")
    assert soup.select_one("textarea[name=preferences]").get_text() == "more theory, fewer benchmark papers"
    assert client.post("/profile/edit", data={"preferences": ""}, headers=h).json()["preferences"] == ""

    # errors carry the fix
    r = client.post("/profile/edit", data={}, headers=h)
    assert r.status_code == 400 and "add_phrase" in r.json()["fix"]
    r = client.post("/profile/edit", data={"remove": "i999"}, headers=h)
    assert r.status_code == 404 and r.json()["fix"]
    no_token = {"accept": "application/json"}
    assert client.post("/profile/edit", data={"add_phrase": "x"}, headers=no_token).status_code == 403


def test_profile_page_is_editable(client: TestClient) -> None:
    h = csrf_of(client)
    for pid in ("graph/0", "graph/1"):
        client.post(f"/paper/{pid}/star", data={"on": "1"}, headers=h)
    prof = client.get("/profile.json").json()
    soup = BeautifulSoup(client.get("/profile").text, "html.parser")
    cards = soup.select(".interest")
    assert [c["data-interest"] for c in cards] == [i["id"] for i in prof["interests"]]
    card = cards[0]
    assert card.select_one("h3").get_text() == prof["interests"][0]["label"]
    assert card.select_one("input[name=remove]")["value"] == prof["interests"][0]["id"]
    phrases = [li.get_text(" ", strip=True).rstrip(" ×") for li in card.select(".phrases li")]
    assert phrases == prof["interests"][0]["phrases"]
    assert card.select(".examples a")
    assert soup.select_one("form.add-phrase.new input[name=add_phrase]")
    assert soup.select(".preview .paper-item")
    # a plain form post (no JavaScript) is redirected back to the profile
    r = client.post(
        "/profile/edit",
        data={"csrf": h["x-csrf-token"], "add_phrase": "molecules", "interest": prof["interests"][0]["id"]},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/profile"
    assert "molecules" in client.get("/profile.json").json()["interests"][0]["added"]


# -- triage ----------------------------------------------------------------------------------------
def test_triage_pairs_and_choices(client: TestClient, web_lib: Library) -> None:
    first = client.get("/triage.json").json()
    assert first["choices"] == 0 and len(first["pair"]) == 2
    a, b = (p["id"] for p in first["pair"])
    assert a != b
    assert client.get("/triage.json").json()["pair"] == first["pair"]  # a reload shows the same pair
    soup = BeautifulSoup(client.get("/triage").text, "html.parser")
    forms = soup.select(".duel form.choose")
    pairs = [(f.select_one("[name=winner]")["value"], f.select_one("[name=loser]")["value"]) for f in forms]
    assert pairs == [(a, b), (b, a)]
    assert [f["data-key"] for f in forms] == ["a", "b"]

    assert (
        client.post("/triage", data={"winner": a, "loser": b}, headers={"accept": "application/json"}).status_code
        == 403
    )
    h = csrf_of(client)
    r = client.post("/triage", data={"winner": a, "loser": b}, headers=h)
    assert r.status_code == 200, r.text
    nxt = r.json()
    assert nxt["choices"] == 1 and not {a, b} & {p["id"] for p in nxt["next"]}
    assert web_lib.store.readers.choices(web_lib.readers.get("me").id)[0][:2] == (a, b)
    c, d = (p["id"] for p in nxt["next"])
    r = client.post("/triage", data={"winner": c, "loser": d, "action": "skip"}, headers=h)
    assert r.json()["choices"] == 1
    seen = {f.paper_id for f in web_lib.store.readers.feedback(web_lib.readers.get("me").id, "seen")}
    assert seen == {c, d}
    e, f = (p["id"] for p in r.json()["next"])
    r = client.post("/triage", data={"winner": e, "loser": f, "action": "neither"}, headers=h)
    assert r.status_code == 200 and r.json()["choices"] == 2  # one answer, stored as two rows
    assert not {e, f} & {p["id"] for p in r.json()["next"]}
    assert [row[:2] for row in web_lib.store.readers.choices(web_lib.readers.get("me").id)][1:] == [("", e), ("", f)]
    assert client.post("/triage", data={"winner": a, "loser": a}, headers=h).status_code == 400
    assert client.post("/triage", data={"winner": a}, headers=h).status_code == 400
    # a plain form post goes on to the next pair
    r = client.post("/triage", data={"csrf": h["x-csrf-token"], "winner": b, "loser": c}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/triage"


def test_bearer_token_writes_without_csrf(client: TestClient, web_lib: Library) -> None:
    bot = web_lib.readers.get("bot")
    auth = {"authorization": f"Bearer {bot.token}"}
    pair = client.get("/triage.json", headers=auth).json()["pair"]
    r = client.post("/triage", data={"winner": pair[0]["id"], "loser": pair[1]["id"]}, headers=auth)
    assert r.status_code == 200 and r.json()["reader"] == "bot"
    assert client.post("/profile/edit", data={"add_phrase": "graph networks"}, headers=auth).status_code == 200
    assert client.get("/profile.json", headers=auth).json()["reader"] == "bot"
    assert client.post("/paper/graph/2/dismiss", headers=auth).json()["reader"] == "bot"
    assert (
        client.post("/profile/edit", data={"add_phrase": "x"}, headers={"authorization": "Bearer wrong"}).status_code
        == 401
    )


# -- groups ------------------------------------------------------------------------------------------
def _group_lib(web_lib: Library) -> None:
    web_lib.readers.set_feedback("ana", ["protein/0", "protein/1"], "like")
    web_lib.readers.set_feedback("ben", ["protein/2", "protein/3", "graph/3"], "like")
    web_lib.readers.set_feedback("cy", ["diffusion/0", "diffusion/1"], "like")


def test_group_list_is_fair_and_compares_with_sum(client: TestClient, web_lib: Library) -> None:
    _group_lib(web_lib)
    g = client.get("/group.json", params={"readers": "ana,ben,cy", "n": 6}).json()
    assert g["method"] == "nash" and len(g["papers"]) == 6
    assert [m["reader"] for m in g["members"]] == ["ana", "ben", "cy"]
    assert abs(sum(m["share"] for m in g["members"]) - 1) < 1e-6
    assert all(m["satisfaction"] > 0 for m in g["members"])  # nobody is left out
    assert set(g["compare"]) == {"sum"} and len(g["compare"]["sum"]) == 3
    assert all(p["reason"].startswith("in the top") for p in g["papers"])
    nash_min = min(m["satisfaction"] for m in g["members"])
    s = client.get("/group.json", params={"readers": ["ana", "ben", "cy"], "n": 6, "method": "sum"}).json()
    assert s["method"] == "sum" and min(m["satisfaction"] for m in s["members"]) <= nash_min + 1e-9
    assert [m["satisfaction"] for m in s["compare"]["nash"]] == [m["satisfaction"] for m in g["members"]]

    soup = BeautifulSoup(client.get("/group", params={"readers": "ana,ben,cy", "n": 6}).text, "html.parser")
    rows = soup.select("table.members tbody tr")
    assert [r.select_one("b").get_text() for r in rows] == ["ana", "ben", "cy"]
    assert rows[0].select_one("meter")["value"] == f"{g['members'][0]['share']:.3f}"
    assert "method=sum" in soup.select_one("a.method-toggle")["href"]
    assert len(soup.select(".paper-item")) == 6
    assert {i["value"] for i in soup.select("input[name=readers][checked]")} == {"ana", "ben", "cy"}


def test_group_errors(client: TestClient, web_lib: Library) -> None:
    _group_lib(web_lib)
    one = client.get("/group.json", params={"readers": "ana"}).json()  # a group of one: their own list
    assert [m["reader"] for m in one["members"]] == ["ana"] and one["papers"]
    r = client.get("/group.json", params={"readers": "ana,nobody"})
    assert r.status_code == 404 and "nobody" in r.json()["error"]
    assert client.get("/group.json", params={"readers": "ana,ben", "method": "max"}).status_code == 400
    page = BeautifulSoup(client.get("/group").text, "html.parser")  # no members yet: just the form
    assert {i["value"] for i in page.select("input[type=checkbox][name=readers]")} == {"ana", "ben", "cy"}
    assert not page.select("table.members")
    assert not page.select("fieldset .hint")  # the owner sees every reader: no hint needed
    page = BeautifulSoup(client.get("/group", params={"readers": "ana,nobody"}).text, "html.parser")
    assert "nobody" in page.select_one(".error").get_text()


# -- digest, feeds, saved searches --------------------------------------------------------------------
def test_digest_lists_only_unseen_unjudged_papers(client: TestClient, web_lib: Library) -> None:
    h = csrf_of(client)
    client.post("/paper/protein/0/star", data={"on": "1"}, headers=h)
    client.post("/paper/protein/1/dismiss", data={"on": "1"}, headers=h)
    d = client.get("/digest.json", params={"limit": 5}).json()
    assert d["count"] == 5 and d["feed"].startswith("/feeds/reader/me.atom?key=")
    shown = ids(d["hits"])
    assert not {"protein/0", "protein/1"} & set(shown)
    r = client.post("/digest/seen", data={"ids": ",".join(shown[:3])}, headers=h)
    assert r.json()["seen"] == 3
    again = ids(client.get("/digest.json", params={"limit": 5}).json()["hits"])
    assert not set(shown[:3]) & set(again)

    feed = client.get(d["feed"] + "&limit=5")
    assert feed.status_code == 200 and feed.headers["content-type"].startswith("application/atom+xml")
    root = ET.fromstring(feed.content)
    entries = root.findall(f"{ATOM}entry")
    assert [e.find(f"{ATOM}id").text for e in entries] == [f"urn:paperatlas:paper:{i}" for i in again]
    assert client.get("/feeds/reader/nobody.atom").status_code == 404
    # a feed is private: without its key (or with another reader's) there is nothing there
    assert client.get("/feeds/reader/me.atom").status_code == 404
    assert client.get(d["feed"][:-3] + "abc").status_code == 404
    assert "urn:paperatlas:paper:" in client.get("/digest", params={"format": "atom"}).text
    md = client.get("/digest", params={"format": "markdown", "limit": 2})
    assert md.headers["content-type"].startswith("text/markdown") and md.text.startswith("# paperatlas digest for me")
    assert client.get("/digest.json", params={"since": "2999-01-01"}).json()["count"] == 0
    assert client.get("/digest.json", params={"since": "last week"}).status_code == 400
    soup = BeautifulSoup(client.get("/digest", params={"limit": 5}).text, "html.parser")
    assert len(soup.select(".paper-item")) == 5
    assert soup.select_one('link[rel=alternate][type="application/atom+xml"]')["href"] == d["feed"]
    assert soup.select_one("form.mark-seen input[name=ids]")["value"] == ",".join(again)


def test_saved_search_feed(client: TestClient, web_lib: Library) -> None:
    soup = BeautifulSoup(client.get("/search", params={"q": "graph", "mode": "keyword"}).text, "html.parser")
    form = soup.select_one("form.save-search")
    fields = {i["name"]: i["value"] for i in form.select("input")}
    assert fields["q"] == "graph" and fields["mode"] == "keyword" and fields["csrf"]
    h = csrf_of(client)
    saved = client.post("/searches", data={"q": "graph", "mode": "keyword"}, headers=h).json()
    assert saved["name"] == "graph · keyword" and saved["feed"].startswith(f"/feeds/search/{saved['id']}.atom?key=")
    assert client.get(f"/feeds/search/{saved['id']}.atom").status_code == 404  # the key is the feed's secret
    assert client.post("/searches", data={"q": "graph", "mode": "keyword"}, headers=h).json()["id"] == saved["id"]
    client.post("/paper/graph/0/star", data={"on": "1"}, headers=h)
    feed = ET.fromstring(client.get(saved["feed"]).content)
    got = [e.find(f"{ATOM}id").text.rsplit(":", 1)[1] for e in feed.findall(f"{ATOM}entry")]
    hits = ids(client.get("/search.json", params={"q": "graph", "mode": "keyword", "per_page": 50}).json()["hits"])
    assert got and "graph/0" not in got and set(got) <= set(hits)
    listed = client.get("/digest.json").json()["saved_searches"]
    assert [s["feed"] for s in listed] == [saved["feed"]]
    # a form post without JavaScript lands where the feed is listed
    r = client.post("/searches", data={"q": "protein", "csrf": h["x-csrf-token"]}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/digest#searches"
    assert client.post(f"/searches/{saved['id']}/delete", headers=h).status_code == 200
    assert client.get(saved["feed"]).status_code == 404
    assert client.post("/searches", data={"q": "x"}, headers={"accept": "application/json"}).status_code == 403


# -- read-only, reader switch, API docs --------------------------------------------------------------
def test_read_only_refuses_every_personal_write(web_lib: Library) -> None:
    web_lib.readers.set_feedback("me", ["protein/0"], "like")
    with TestClient(
        create_app(web_lib, read_only=True, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 1)
    ) as c:
        h = csrf_of(c)
        for url, data in [
            ("/paper/protein/1/dismiss", {}),
            ("/profile/edit", {"add_phrase": "x"}),
            ("/triage", {"winner": "protein/1", "loser": "protein/2"}),
            ("/digest/seen", {"ids": "x"}),
            ("/searches", {"q": "x"}),
            ("/searches/1/delete", {}),
        ]:
            r = c.post(url, data=data, headers=h)
            assert r.status_code == 403 and "read-only" in r.json()["error"], url
        for path in ("/foryou", "/profile", "/triage", "/group?readers=me,me2", "/digest"):
            r = c.get(path)
            assert r.status_code == 200, path
            soup = BeautifulSoup(r.text, "html.parser")
            assert not soup.select("main form[method=post]"), path  # no write buttons to press
        assert c.get("/foryou.json").json()["likes"] == 1
        assert c.get(c.get("/digest.json").json()["feed"]).status_code == 200


def test_new_readers_come_from_the_reader_switch(client: TestClient, web_lib: Library) -> None:
    h = csrf_of(client)
    r = client.post("/reader", data={"name": "zoe", "csrf": h["x-csrf-token"]}, follow_redirects=False)
    # a new reader is answered with its confirmation (who is signed in, the token once), not a redirect
    assert r.status_code == 200 and "zoe" in r.text
    assert client.get("/foryou.json").json()["reader"] == "zoe"
    client.post("/paper/graph/1/star", data={"on": "1"}, headers=h)
    assert [p.id for p in web_lib.readers.liked("zoe")] == ["graph/1"] and web_lib.readers.liked("me") == []
    assert client.get("/profile.json").json()["likes"] == 1


def test_nav_and_openapi_list_the_personal_pages(client: TestClient) -> None:
    soup = BeautifulSoup(client.get("/foryou").text, "html.parser")
    nav = [a["href"] for a in soup.select("header nav a")]
    assert {"/foryou", "/triage", "/profile", "/group", "/digest"} <= set(nav)
    assert soup.select_one('header nav a[aria-current="page"]')["href"] == "/foryou"
    paths = client.get("/openapi.json").json()["paths"]
    for p in (
        "/foryou.json",
        "/profile.json",
        "/profile/edit",
        "/triage.json",
        "/triage",
        "/group.json",
        "/digest.json",
        "/feeds/reader/{name}.atom",
        "/feeds/search/{search_id}.atom",
        "/searches",
        "/paper/{paper_id}/dismiss",
    ):
        assert p in paths, p
    assert "post" in paths["/triage"] and "get" in paths["/triage.json"]


def test_feed_of_a_reader_whose_name_has_a_slash(client: TestClient, web_lib: Library) -> None:
    web_lib.readers.set_feedback("lab/ana", ["graph/0"], "like")
    key = auth.feed_key(web_lib, "reader", web_lib.readers.get("lab/ana"))
    r = client.get(f"/feeds/reader/lab%2Fana.atom?key={key}")
    assert r.status_code == 200 and "paperatlas digest for lab/ana" in r.text
    assert "urn:paperatlas:paper:graph/0<" not in r.text  # liked: never in the feed
