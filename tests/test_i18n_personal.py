"""For-you explanations and the digest (Markdown, HTML, Atom; web and CLI) in Chinese."""

from __future__ import annotations

from bs4 import BeautifulSoup
from starlette.testclient import TestClient

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.i18n import language

TITLES = [
    "Protein language models predict folding",
    "Protein structure design with language models",
    "Protein binding affinity from sequence",
    "Diffusion models for image generation",
    "Faster sampling for diffusion models",
    "Graph neural networks for molecules",
]
PAPERS = [
    {
        "id": f"p/{i}",
        "title": t,
        "venue": "TestConf",
        "year": 2025,
        "authors": [f"A{j}" for j in range(8)],
        "abstract": f"{t}. We study these methods and report results.",
    }
    for i, t in enumerate(TITLES)
]


def test_foryou_says_why_in_chinese(client: TestClient, web_lib: Library) -> None:
    cold = BeautifulSoup(client.get("/foryou", params={"lang": "zh"}).text, "html.parser")
    assert "还没有收藏" in cold.select_one(".why").get_text()  # the cold-start reason, said once
    web_lib.readers.set_feedback("me", ["p/0"], "like")
    soup = BeautifulSoup(client.get("/foryou").text, "html.parser")  # the cookie keeps it Chinese
    why = soup.select_one("#foryou-list .paper-item .why").get_text(" ", strip=True)
    assert why.startswith("原因 因为你收藏了“Protein language models predict folding”"), why
    assert "because" not in why
    # the same reader in English, and the JSON API for a script stays English
    assert "because you liked" in client.get("/foryou", params={"lang": "en"}).text
    client.cookies.clear()
    assert "because you liked" in client.get("/foryou.json").json()["hits"][0]["reason"]


def test_digest_formats_in_chinese(web_lib: Library) -> None:
    web_lib.readers.set_feedback("me", ["p/0"], "like")
    with language("zh"):
        md = web_lib.recommend.digest("me", format="markdown", limit=3)
        page = web_lib.recommend.digest("me", format="html", limit=3)
        feed = web_lib.recommend.digest("me", format="atom", limit=3)
    assert md.startswith("# paperatlas 论文速递：me\n\n你尚未看过的 3 篇论文")
    assert "*推荐原因：因为你收藏了“Protein language models predict folding”" in md
    assert "A5 等" in md and "et al." not in md  # six authors shown, then 'et al.' translated
    assert '<html lang="zh-CN">' in page and "推荐原因：" in page
    assert 'xml:lang="zh-CN"' in feed and "推荐原因：" in feed
    en = web_lib.recommend.digest("me", format="markdown", limit=3)
    assert en.startswith("# paperatlas digest for me") and "*Why: because you liked" in en


def test_digest_web_links_and_cli_follow_the_language(client: TestClient, web_lib: Library, runner) -> None:
    web_lib.readers.set_feedback("me", ["p/0"], "like")
    soup = BeautifulSoup(client.get("/digest", params={"lang": "zh"}).text, "html.parser")
    assert soup.select_one("h1").get_text().startswith("速递")
    feed = soup.select_one("a.feed")["href"]
    assert feed.endswith("&lang=zh") and ".atom?key=" in feed  # a feed reader sends no cookie: the URL asks
    client.cookies.clear()
    assert 'xml:lang="zh-CN"' in client.get(feed).text
    md = client.get("/digest", params={"format": "markdown", "lang": "zh"}).text
    assert md.startswith("# paperatlas 论文速递")
    r = runner.invoke(cli, ["--db", web_lib.path, "digest", "--reader", "me", "--lang", "zh", "--limit", "2"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("# paperatlas 论文速递：me") and "推荐原因" in r.output
