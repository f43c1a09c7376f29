"""Pages that carry a token are never kept by a browser's or a proxy's cache: /saved shows the reader's
API token, a new reader's page shows it once, every page holds the CSRF token, and what a signed-in
reader or a bearer token asks for is theirs (`Cache-Control: no-store`)."""

from __future__ import annotations

from starlette.testclient import TestClient

from paperatlas import Library

PAPERS = [{"id": "ns1", "title": "Caching personal pages", "abstract": "Responses that hold a token."}]


def test_saved_page_with_the_token_is_no_store(client: TestClient, web_lib: Library) -> None:
    web_lib.readers.get("me")  # the owner, made on their first write
    r = client.get("/saved")
    assert r.status_code == 200 and "Authorization: Bearer" in r.text
    assert r.headers["cache-control"] == "no-store"


def test_every_page_and_every_personal_answer_is_no_store(client: TestClient, web_lib: Library) -> None:
    for path in ("/", "/search?q=learning", "/signin"):
        r = client.get(path)
        assert r.status_code == 200 and 'name="csrf-token"' in r.text, path
        assert r.headers["cache-control"] == "no-store", path
    token = web_lib.readers.get("alice").token
    r = client.get("/saved.json", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"


def test_a_new_readers_token_is_no_store(client: TestClient) -> None:
    page = client.get("/signin")
    csrf = page.text.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]
    r = client.post("/reader", data={"name": "carol", "csrf": csrf}, headers={"Accept": "application/json"})
    assert r.status_code == 200 and r.json()["token"], r.text
    assert r.headers["cache-control"] == "no-store"


def test_public_assets_keep_their_caching(client: TestClient) -> None:
    client.get("/healthz")  # the first answer sets the CSRF cookie (no-store); the next sets nothing
    r = client.get("/healthz")
    assert r.status_code == 200 and r.headers.get("cache-control") != "no-store"
