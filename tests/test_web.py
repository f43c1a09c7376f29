"""Web UI and HTTP API through an ASGI test client, on a small library (hashing embedder)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from starlette.testclient import TestClient

from paperatlas import Library
from paperatlas.web import create_app
from paperatlas.web.common import CSRF_COOKIE, Endpoint, json_response, render


XSS_ABSTRACT = "<script>window.__x=1</script> We study escaping of abstracts & titles in web pages."
XSS_TITLE = '<img src=x onerror="window.__y=1">Escaping titles'

PAPERS = [
    {
        "id": "neurips2023/NnMEadcdyD",
        "title": "Low-rank adapters for protein language models",
        "abstract": "We adapt protein language models with low-rank adapters and study folding accuracy.",
        "authors": ["Ada Lovelace", "Alan Turing"],
        "venue": "NeurIPS",
        "year": 2023,
        "status": "Oral",
        "url": "https://openreview.net/forum?id=NnMEadcdyD",
    },
    {
        "id": "neurips2023/abc123",
        "title": "Diffusion models for protein design",
        "abstract": "Diffusion models generate protein backbones; we evaluate designability.",
        "authors": ["Grace Hopper"],
        "venue": "NeurIPS",
        "year": 2023,
        "status": "Poster",
    },
    {"id": "xss/1", "title": XSS_TITLE, "abstract": XSS_ABSTRACT, "venue": "TestConf", "year": 2024},
]


def csrf_of(client: TestClient) -> str:
    r = client.get("/stats")
    assert r.status_code == 200
    return client.cookies.get(CSRF_COOKIE) or ""


# -- search ----------------------------------------------------------------------------------
def test_search_json_has_the_fields_and_highlights(client: TestClient) -> None:
    r = client.get("/search.json", params={"q": "protein adapters"})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["query"] == "protein adapters" and data["mode"] == "hybrid"
    top = data["hits"][0]
    assert top["id"] == "neurips2023/NnMEadcdyD"
    for key in ("id", "title", "abstract", "venue", "year", "score"):
        assert key in top
    # the snippet is text and the spans of its matched words, which this page would mark
    snip = top["snippet"]
    assert "<mark>" not in snip["text"] and "protein" in [snip["text"][x:y].lower() for x, y in snip["marks"]]
    assert top["page"] == "/paper/neurips2023/NnMEadcdyD"
    assert "raw" not in top


def test_search_filters_modes_and_pages(client: TestClient) -> None:
    r = client.get(
        "/search.json", params={"q": "protein", "venue": "neurips", "year": 2023, "status": "Poster", "mode": "keyword"}
    )
    assert [h["id"] for h in r.json()["hits"]] == ["neurips2023/abc123"]
    first = client.get("/search.json", params={"q": "models", "per_page": 3}).json()
    second = client.get("/search.json", params={"q": "models", "per_page": 3, "page": 2}).json()
    assert first["has_more"] and len(first["hits"]) == 3
    assert not {h["id"] for h in first["hits"]} & {h["id"] for h in second["hits"]}
    assert client.get("/search.json", params={"q": ""}).json()["hits"] == []


def test_search_page_html(client: TestClient) -> None:
    r = client.get("/search", params={"q": "protein", "mode": "keyword"})
    soup = BeautifulSoup(r.text, "html.parser")
    assert soup.select_one("#q")["value"] == "protein"
    assert soup.select_one('input[name="mode"][value="keyword"]').has_attr("checked")
    titles = [a.get_text() for a in soup.select(".paper-item a.title")]
    assert any("protein" in t.lower() for t in titles)
    assert soup.select(".paper-item .snippet mark")
    # the fragment (search as you type) is the results block only
    frag = client.get("/search", params={"q": "protein", "fragment": 1}).text
    assert "<html" not in frag and "paper-item" in frag


@pytest.mark.parametrize("params,status", [({"q": "x", "mode": "fuzzy"}, 400), ({"q": "x", "year": "soon"}, 400)])
def test_bad_parameters_are_json_errors(client: TestClient, params: dict, status: int) -> None:
    r = client.get("/search.json", params=params)
    assert r.status_code == status
    body = r.json()
    assert body["status"] == status and body["error"] and body["fix"]


# -- paper -------------------------------------------------------------------------------------
def test_paper_page_with_slash_in_id(client: TestClient) -> None:
    r = client.get("/paper/neurips2023/NnMEadcdyD")
    assert r.status_code == 200
    soup = BeautifulSoup(r.text, "html.parser")
    assert soup.h1.get_text(" ", strip=True).startswith("Low-rank adapters for protein language models")
    assert "folding accuracy" in soup.select_one(".abstract").get_text()
    assert soup.select_one('a[href="https://openreview.net/forum?id=NnMEadcdyD"]')
    assert "@inproceedings" in soup.select_one("#bibtex").get_text()
    assert soup.select(".related .paper-item")
    j = client.get("/paper/neurips2023/NnMEadcdyD.json").json()
    assert j["id"] == "neurips2023/NnMEadcdyD" and j["authors"] == ["Ada Lovelace", "Alan Turing"]
    assert j["bibtex"].startswith("@inproceedings{lovelace2023") and j["related"]
    assert j["starred"] is False and j["tags"] == []


def test_missing_paper_is_404_in_both_forms(client: TestClient) -> None:
    r = client.get("/paper/nope/none.json")
    assert r.status_code == 404 and "no paper" in r.json()["error"]
    r = client.get("/paper/nope/none")
    assert r.status_code == 404 and "text/html" in r.headers["content-type"]
    assert client.get("/nowhere.json").json()["status"] == 404


def test_derived_titles_are_marked(client: TestClient) -> None:
    r = client.get("/browse", params={"venue": "ICLR", "year": 2026})
    soup = BeautifulSoup(r.text, "html.parser")
    items = soup.select(".paper-item")
    assert len(items) == 19
    assert all(i.select_one(".derived") for i in items)  # the example lists have no titles
    j = client.get("/browse.json", params={"venue": "ICLR", "year": 2026}).json()
    assert j["total"] == 19 and all(p["title_derived"] for p in j["papers"])


def test_browse_sorts_counts_and_indexes(client: TestClient) -> None:
    j = client.get("/browse.json", params={"venue": "NeurIPS", "year": 2023, "sort": "title", "order": "desc"}).json()
    assert [p["title"] for p in j["papers"]] == sorted([p["title"] for p in j["papers"]], reverse=True)
    assert j["status_counts"] == {"Oral": 1, "Poster": 1}
    oral = client.get("/browse.json", params={"venue": "NeurIPS", "year": 2023, "status": "Oral"}).json()
    assert oral["matching"] == 1 and oral["total"] == 2
    index = client.get("/browse.json").json()
    assert {(g["venue"], g["year"], g["papers"]) for g in index["groups"]} >= {
        ("ICLR", 2026, 19),
        ("NeurIPS", 2026, 10),
    }
    assert client.get("/browse.json", params={"venue": "ICLR", "sort": "rowid; drop"}).status_code == 400


# -- escaping ------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/paper/xss/1", "/search?q=escaping", "/browse?venue=TestConf", "/paper/xss/1.json"])
def test_paper_fields_are_escaped(client: TestClient, path: str) -> None:
    text = client.get(path).text
    assert "<script>window.__x" not in text
    assert "<img src=x" not in text
    if not path.endswith(".json"):
        assert "&lt;img src=x onerror=" in text
        soup = BeautifulSoup(text, "html.parser")
        assert not soup.select("img")  # no element was injected
        assert all("window.__x" not in (s.string or "") for s in soup.select("script"))
    if path.startswith("/paper/xss/1") and not path.endswith(".json"):
        assert "&lt;script&gt;window.__x=1&lt;/script&gt;" in text
    if path.endswith(".json"):  # JSON holds the text as it is, with < > & as \u escapes
        data = json.loads(text)
        assert data["abstract"] == XSS_ABSTRACT and data["title"] == XSS_TITLE


def test_csp_and_security_headers(client: TestClient) -> None:
    r = client.get("/")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    cookie = r.headers["set-cookie"]
    assert CSRF_COOKIE in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie


# -- writes: CSRF, tokens, stars, tags -------------------------------------------------------------
def test_star_needs_csrf_token(client: TestClient, web_lib: Library) -> None:
    url = "/paper/neurips2023/NnMEadcdyD/star"
    assert client.post(url, data={"on": "1"}, headers={"accept": "application/json"}).status_code == 403
    assert (
        client.post(
            url, data={"on": "1", "csrf": "forged-token-forged-token"}, headers={"accept": "application/json"}
        ).status_code
        == 403
    )
    token = csrf_of(client)
    r = client.post(url, data={"on": "1"}, headers={"x-csrf-token": token, "accept": "application/json"})
    assert r.status_code == 200, r.text
    assert r.json() == {"id": "neurips2023/NnMEadcdyD", "starred": True, "reader": "me"}
    assert [p.id for p in web_lib.readers.liked("me")] == ["neurips2023/NnMEadcdyD"]
    # a plain form post (no JavaScript) carries the token as a field and is redirected back
    r = client.post(
        url, data={"on": "0", "csrf": token}, headers={"referer": "http://127.0.0.1/search?q=x"}, follow_redirects=False
    )
    assert r.status_code == 303 and r.headers["location"] == "/search?q=x"
    assert web_lib.readers.liked("me") == []
    # never redirect to another site
    r = client.post(
        url, data={"on": "0", "csrf": token}, headers={"referer": "http://evil.example/"}, follow_redirects=False
    )
    assert r.headers["location"] == "/paper/neurips2023/NnMEadcdyD"


def test_get_cannot_change_anything(client: TestClient, web_lib: Library) -> None:
    r = client.get("/paper/neurips2023/NnMEadcdyD/star", params={"on": 1})
    assert r.status_code == 404
    assert client.get("/reader.json").status_code in (404, 405)
    assert web_lib.readers.all() == []  # pages do not even create the default reader


def test_bearer_token_writes_for_scripts(web_lib: Library) -> None:
    alice = web_lib.readers.get("alice")
    with TestClient(create_app(web_lib), base_url="http://127.0.0.1") as c:  # a fresh client: no CSRF cookie at all
        auth = {"authorization": f"Bearer {alice.token}"}
        r = c.post("/paper/neurips2023/abc123/star", json={"on": True}, headers=auth)
        assert r.status_code == 200 and r.json()["reader"] == "alice"
        saved = c.get("/saved.json", headers=auth).json()
        assert saved["reader"] == "alice" and [p["id"] for p in saved["papers"]] == ["neurips2023/abc123"]
        r = c.post("/api/feedback", json={"ids": ["xss/1", "neurips2023/NnMEadcdyD"], "kind": "like"}, headers=auth)
        assert r.status_code == 200
        assert len(web_lib.readers.liked("alice")) == 3 and web_lib.readers.liked("me") == []
        bad = c.post("/paper/neurips2023/abc123/star", json={"on": True}, headers={"authorization": "Bearer nope"})
        assert bad.status_code == 401 and bad.json()["error"] == "unknown API token"
        assert c.post("/api/feedback", json={"ids": ["no-such-paper"]}, headers=auth).status_code == 404


def test_tags_saved_list_and_exports(client: TestClient) -> None:
    token = csrf_of(client)
    h = {"x-csrf-token": token, "accept": "application/json"}
    for pid in ("neurips2023/NnMEadcdyD", "neurips2023/abc123"):
        assert client.post(f"/paper/{pid}/star", data={"on": "1"}, headers=h).status_code == 200
    r = client.post("/paper/neurips2023/abc123/tags", data={"tag": "to read"}, headers=h)
    assert r.json()["tags"] == ["to read"]
    assert client.post("/paper/neurips2023/abc123/tags", data={"tag": ""}, headers=h).status_code == 400
    saved = client.get("/saved.json").json()
    assert [p["id"] for p in saved["papers"]] == ["neurips2023/NnMEadcdyD", "neurips2023/abc123"]
    assert client.get("/saved.json", params={"tag": "to read"}).json()["count"] == 1
    soup = BeautifulSoup(client.get("/saved").text, "html.parser")
    assert len(soup.select(".paper-item")) == 2 and soup.select('a[href^="/saved/export?format=bibtex"]')

    bib = client.get("/saved/export", params={"format": "bibtex"})
    assert bib.text.count("@inproceedings") == 2 and "attachment" in bib.headers["content-disposition"]
    csv_ = client.get("/saved/export", params={"format": "csv"}).text.splitlines()
    assert csv_[0].startswith("id,title") and len(csv_) == 3
    md = client.get("/saved/export", params={"format": "markdown", "tag": "to read"}).text
    assert "Diffusion models for protein design" in md and "Low-rank" not in md
    js = client.get("/saved/export", params={"format": "json"}).json()
    assert [p["id"] for p in js] == ["neurips2023/NnMEadcdyD", "neurips2023/abc123"]
    r = client.post("/paper/neurips2023/abc123/tags", data={"tag": "to read", "action": "remove"}, headers=h)
    assert r.json()["tags"] == []


def test_sign_in_as_a_new_reader_then_only_the_session_speaks_for_them(client: TestClient, web_lib: Library) -> None:
    token = csrf_of(client)
    r = client.post(
        "/reader",
        data={"name": "bob", "csrf": token},
        follow_redirects=False,
        headers={"referer": "http://127.0.0.1/signin"},
    )
    assert "pa_session=" in r.headers["set-cookie"] and "HttpOnly" in r.headers["set-cookie"]
    # the answer says who is signed in now and shows the new token once, not the empty form again
    assert r.status_code == 200
    soup = BeautifulSoup(r.text, "html.parser")
    assert "bob" in soup.select_one("section.signed-in").get_text()
    assert soup.select_one("section.signed-in pre.token").get_text() == web_lib.readers.get("bob").token
    assert "bob" in soup.select_one("header .reader").get_text()
    # back on /signin later: who is signed in, no token
    soup = BeautifulSoup(client.get("/signin").text, "html.parser")
    assert "bob" in soup.select_one("section.signed-in").get_text() and soup.select_one("pre.token") is None
    zh = BeautifulSoup(client.get("/signin?lang=zh").text, "html.parser")
    assert "你已以" in zh.select_one("section.signed-in").get_text()
    client.get("/signin?lang=en")
    client.post("/paper/xss/1/star", data={"on": "1"}, headers={"x-csrf-token": token, "accept": "application/json"})
    assert [p.id for p in web_lib.readers.liked("bob")] == ["xss/1"] and web_lib.readers.liked("me") == []
    soup = BeautifulSoup(client.get("/saved").text, "html.parser")
    assert "bob" in soup.select_one("header .reader").get_text()
    # bob's own page shows bob's API token, which scripts use instead of the CSRF cookie
    assert soup.select_one("details.token pre").get_text().endswith(web_lib.readers.get("bob").token)
    # signing in again as bob needs bob's token
    assert (
        client.post("/reader", data={"name": "bob", "csrf": token}, headers={"accept": "application/json"}).status_code
        == 403
    )
    ok = client.post(
        "/reader",
        data={"name": "bob", "token": web_lib.readers.get("bob").token, "csrf": token},
        headers={"accept": "application/json"},
    )
    assert ok.status_code == 200 and ok.json()["reader"]["name"] == "bob" and "token" not in ok.json()


def test_a_reader_name_in_a_cookie_grants_nothing(web_lib: Library) -> None:
    bob = web_lib.readers.get("bob")
    web_lib.readers.set_feedback(bob, ["xss/1"], "like")
    # a shared server (not bound to loopback): no owner sign-in; a remote client
    with TestClient(create_app(web_lib), base_url="http://127.0.0.1", cookies={"pa_reader": "bob"}) as c:
        saved = c.get("/saved.json").json()
        assert saved["papers"] == [] and saved["reader"] is None
        assert bob.token not in c.get("/saved").text
        token = csrf_of(c)
        r = c.post(
            "/api/feedback",
            data={"ids": "neurips2023/abc123", "kind": "like", "csrf": token},
            headers={"accept": "application/json"},
        )
        assert r.status_code == 401 and "sign in" in r.json()["error"]
        forged = c.get("/saved.json", cookies={"pa_session": f"{bob.id}.0000.0000"}).json()
        assert forged["papers"] == []
    assert [p.id for p in web_lib.readers.liked("bob")] == ["xss/1"]


def test_read_only_refuses_every_write(web_lib: Library) -> None:
    me = web_lib.readers.get("me")
    with TestClient(create_app(web_lib, read_only=True), base_url="http://127.0.0.1") as c:
        token = csrf_of(c)
        # (POST /search: no view takes it, so it is a 405 as anywhere: the test below)
        for url in ("/paper/xss/1/star", "/paper/xss/1/tags", "/reader", "/api/feedback"):
            r = c.post(
                url,
                data={"on": "1", "tag": "t", "name": "x", "ids": "xss/1"},
                headers={"x-csrf-token": token, "accept": "application/json"},
            )
            assert r.status_code == 403 and "read-only" in r.json()["error"]
        r = c.post("/paper/xss/1/star", json={"on": True}, headers={"authorization": f"Bearer {me.token}"})
        assert r.status_code == 403
        assert c.get("/search.json", params={"q": "protein"}).status_code == 200
        assert "read-only" in c.get("/").text and 'action="/reader"' not in c.get("/").text
    assert web_lib.readers.liked("me") == [] and [r.name for r in web_lib.readers.all()] == ["me"]


def test_size_limits(client: TestClient) -> None:
    token = csrf_of(client)
    r = client.post(
        "/api/feedback", content=b"x" * 70_000, headers={"x-csrf-token": token, "content-type": "application/json"}
    )
    assert r.status_code == 413 and r.json()["status"] == 413
    r = client.get("/search.json", params={"q": "a" * 5000})
    assert r.status_code == 414 and "longer" in r.json()["error"]
    r = client.get("/search.json", params={"q": "a" * 1500})
    assert r.status_code == 400  # under the URL limit, over the parameter's own limit


def test_method_not_allowed_is_json_on_the_api(client: TestClient) -> None:
    r = client.get("/api/feedback")
    assert r.status_code == 405 and r.json()["error"] == "method not allowed"


# -- stats, docs, openapi ---------------------------------------------------------------------------
def test_stats(client: TestClient) -> None:
    s = client.get("/stats.json").json()
    assert s["papers"] == 32 and s["embedding"]["indexed"] == 32 and s["embedding"]["model"].startswith("hashing")
    assert "path" not in s
    assert "NeurIPS" in client.get("/stats").text
    assert client.get("/healthz").json() == {"ok": True}


def test_openapi_documents_the_api(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    op = doc["paths"]["/search.json"]["get"]
    names = {p["name"] for p in op["parameters"]}
    assert {"q", "mode", "venue", "year", "status", "page", "per_page"} <= names
    assert "hits" in op["responses"]["200"]["content"]["application/json"]["schema"]["properties"]
    assert "/paper/{paper_id}.json" in doc["paths"] and "post" in doc["paths"]["/paper/{paper_id}/star"]
    soup = BeautifulSoup(client.get("/docs").text, "html.parser")
    assert "/search.json" in soup.get_text()
    assert not soup.select('script[src^="http"], link[href^="http"]')  # every asset is local


def test_static_assets_are_local(client: TestClient) -> None:
    soup = BeautifulSoup(client.get("/").text, "html.parser")
    srcs = [t.get("src") or t.get("href") for t in soup.select("script[src], link[href]")]
    assert srcs and all(s.startswith("/static/") for s in srcs)
    for s in srcs:
        assert client.get(s).status_code == 200


# -- extension points ----------------------------------------------------------------------------------
def test_other_modules_can_add_routes_and_nav(web_lib: Library, tmp_path: Path) -> None:
    import types

    def hello(request):  # type: ignore[no-untyped-def]
        if request.url.path.endswith(".json"):
            return json_response({"hello": "world"})
        return render(request, "hello.html", who="<b>you</b>")

    (tmp_path / "hello.html").write_text(
        '{% extends "base.html" %}{% block content %}<p id="hi">hi {{ who }}</p>{% endblock %}'
    )
    mod = types.ModuleType("recs")
    mod.ENDPOINTS = [Endpoint("/hello", hello, json_twin=True, summary="Say hello.")]  # type: ignore[attr-defined]
    mod.NAV = [("Hello", "/hello")]  # type: ignore[attr-defined]
    app = create_app(
        web_lib, modules=[mod], extra_routes=[("/ping", lambda r: json_response({"pong": 1}))], template_dirs=[tmp_path]
    )
    with TestClient(app, base_url="http://127.0.0.1") as c:
        assert c.get("/hello.json").json() == {"hello": "world"}
        page = c.get("/hello").text
        assert '<p id="hi">hi &lt;b&gt;you&lt;/b&gt;</p>' in page and 'href="/hello"' in page
        assert c.get("/ping").json() == {"pong": 1}
        assert "/hello.json" in c.get("/openapi.json").json()["paths"]


def test_serve_get_runs_one_request(runner, web_lib: Library) -> None:  # type: ignore[no-untyped-def]
    from paperatlas.cli import cli

    r = runner.invoke(cli, ["--db", web_lib.path, "serve", "--get", "/search.json?q=protein&mode=keyword"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["hits"][0]["venue"] == "NeurIPS"
    r = runner.invoke(cli, ["--db", web_lib.path, "serve", "--get", "/paper/none.json"])
    assert r.exit_code == 1 and '"status":404' in r.output
    me = web_lib.readers.get("me")
    web_lib.readers.set_feedback(me, ["xss/1"], "like")
    r = runner.invoke(cli, ["--db", web_lib.path, "serve", "--get", "/saved.json", "--token", me.token])
    assert r.exit_code == 0 and re.search(r'"id":"xss/1"', r.output)


@pytest.mark.parametrize("require,outcome", [("", "skipped"), ("1", "failed")])
def test_browser_tests_skip_or_fail_without_chromium(require: str, outcome: str, tmp_path: Path) -> None:
    """On a user's machine without Chromium they skip, clearly; in CI (PAPERATLAS_REQUIRE_BROWSER=1) they fail."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PAPERATLAS_CHROMIUM": str(tmp_path / "no-chromium"), "PAPERATLAS_REQUIRE_BROWSER": require}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rsf",
            "-p",
            "no:cacheprovider",
            "tests/browser/test_browser.py::test_xss_paper_does_not_execute",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "chromium not found, browser tests skipped" in r.stdout, r.stdout
    assert f"1 {outcome if outcome == 'skipped' else 'error'}" in r.stdout, r.stdout
    assert (r.returncode == 0) == (outcome == "skipped")


def test_inline_app_for_worker_processes(web_lib: Library) -> None:
    """`serve --workers N` runs views on the event loop; pages, API and writes behave the same."""
    with TestClient(
        create_app(web_lib, inline=True, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 1)
    ) as c:
        assert c.get("/search.json", params={"q": "protein"}).json()["hits"][0]["venue"] == "NeurIPS"
        assert c.get("/paper/neurips2023/abc123").status_code == 200
        token = csrf_of(c)
        r = c.post("/paper/xss/1/star", data={"on": "1"}, headers={"x-csrf-token": token, "accept": "application/json"})
        assert r.json()["starred"] is True and [p.id for p in web_lib.readers.liked("me")] == ["xss/1"]


def test_read_only_answers_a_method_no_view_takes_as_any_server_does(web_lib: Library) -> None:
    """A method no view takes changes nothing: 405 with the methods the path allows (or 404),
    exactly as on a normal server; the read-only 403 is for the writes a view would make."""
    answers = {}
    for read_only in (False, True):
        with TestClient(create_app(web_lib, read_only=read_only), base_url="http://127.0.0.1") as c:
            token = csrf_of(c)
            for method, url in (("DELETE", "/search.json"), ("PUT", "/"), ("POST", "/no/such/page")):
                r = c.request(method, url, headers={"x-csrf-token": token, "accept": "application/json"})
                answers.setdefault((method, url), []).append(
                    (r.status_code, set(r.headers.get("allow", "").split(", ")))
                )
    for (method, url), (normal, ro) in answers.items():
        assert normal == ro, (method, url, normal, ro)
    assert answers[("DELETE", "/search.json")][1] == (405, {"GET", "HEAD"})
    assert answers[("POST", "/no/such/page")][1][0] == 404


def test_serve_get_reads_a_streamed_response_to_its_end() -> None:
    """`serve --get` on a server-sent-events answer: every event, then it returns (it used to spin forever)."""
    import asyncio

    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    from paperatlas.web.app import request_once

    async def events():  # type: ignore[no-untyped-def]
        for i in range(3):
            await asyncio.sleep(0.01)
            yield f"data: {i}\n\n"

    app = Starlette(routes=[Route("/s", lambda r: StreamingResponse(events(), media_type="text/event-stream"))])
    import threading

    got: list = []
    t = threading.Thread(target=lambda: got.append(request_once(app, "/s")), daemon=True)
    t.start()
    t.join(30)  # a hang fails the test instead of stalling the suite
    assert got, "request_once never returned on a streamed response"
    status, _, body = got[0]
    assert status == 200 and body == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
