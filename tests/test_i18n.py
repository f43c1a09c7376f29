"""The UI in Chinese and English: catalogue completeness, language choice, and the pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from starlette.testclient import TestClient

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.i18n import catalogue as catmod
from paperatlas.i18n import extract, gettext, language, negotiate, ngettext, normalize

PAPERS = [
    {
        "id": "neurips2023/NnMEadcdyD",
        "title": "Low-rank adapters for protein language models",
        "abstract": "We adapt protein language models with low-rank adapters and study folding accuracy.",
        "authors": ["Ada Lovelace", "Alan Turing"],
        "venue": "NeurIPS",
        "year": 2023,
        "status": "Oral",
    },
]
PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}")


# -- the catalogue ----------------------------------------------------------------------------
def test_every_marked_string_has_a_chinese_translation() -> None:
    """Fails when a template `_("...")` or a Python gettext/N_ string is not in zh_CN.po.
    Fix: `python -m paperatlas.i18n.extract --update`, then fill in the new msgstr lines."""
    found = extract.messages()
    assert len(found) > 20, "the extractor found almost nothing: is it still reading the templates?"
    missing = extract.missing("zh")
    assert not missing, "untranslated (run `python -m paperatlas.i18n.extract --update`):\n" + "\n".join(
        f"  {m.where}: {m.msgid!r}" for m in missing
    )


def test_translations_keep_their_placeholders() -> None:
    cat = catmod.load("zh_CN.po")
    bad = [
        (k, e.msgstr)
        for k, e in cat.entries.items()
        for s in e.msgstr
        if s and sorted(PLACEHOLDER.findall(s)) != sorted(PLACEHOLDER.findall(k))
    ]
    assert not bad, f"a translation lost or renamed a {{placeholder}}: {bad[:5]}"


def test_extractor_sees_templates_python_and_plurals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = tmp_path / "t.html"
    t.write_text('{{ _("Only in a template {x}", x=1) }} {{ ngettext("{n} dog", "{n} dogs", 2) }} {{ _(var) }}')
    monkeypatch.setattr(extract, "TEMPLATE_DIRS", [tmp_path])
    got = {m.msgid: m for m in extract.template_messages()}
    assert set(got) == {"Only in a template {x}", "{n} dog"}
    assert got["{n} dog"].plural == "{n} dogs" and got["Only in a template {x}"].where.endswith("t.html:1")
    assert "Search" in {m.msgid for m in extract.python_messages()}  # N_ in the NAV lists


def test_catalogue_parser_reads_po_and_names_bad_lines(tmp_path: Path) -> None:
    text = (
        'msgid ""\nmsgstr "Language: zh_CN\\n"\n\n#: x.py:1\nmsgid "Say \\"hi\\""\nmsgstr "说\\"你好\\""\n\n'
        'msgid "long "\n"one"\nmsgstr ""\n"很长"\n\n#, fuzzy\nmsgid "Maybe"\nmsgstr "也许"\n\n'
        'msgid "{n} file"\nmsgid_plural "{n} files"\nmsgstr[0] "{n} 个文件"\n'
    )
    entries = catmod.parse(text)
    cat = catmod.Catalogue(tmp_path, entries)
    assert cat.get('Say "hi"') == '说"你好"' and cat.get("long one") == "很长"
    assert cat.get("Maybe") == "Maybe" and not cat.translated("Maybe")  # fuzzy: not trusted
    assert cat.get_plural("{n} file", "{n} files", 3) == "{n} 个文件"
    with pytest.raises(catmod.CatalogueError, match=r"zh\.po:3: msgid 'a' appears twice.*line 1"):
        catmod.parse('msgid "a"\nmsgstr "甲"\nmsgid "a"\nmsgstr "乙"\n', Path("zh.po"))
    with pytest.raises(catmod.CatalogueError, match=r"zh\.po:2: expected a quoted string"):
        catmod.parse('msgid "a"\nmsgstr 甲\n', Path("zh.po"))


def test_gettext_follows_the_current_language() -> None:
    assert gettext("Search") == "Search"
    assert gettext("Search", "zh") == "搜索"
    with language("zh"):
        assert gettext("Search") == "搜索"
        assert gettext("Show this page in {language}", language="English") == "用English显示此页"
        assert gettext("not in any catalogue") == "not in any catalogue"
        assert ngettext("{n} thing", "{n} things", 2) == "2 things"  # untranslated: English plural rules
    assert gettext("Search") == "Search"


@pytest.mark.parametrize(
    "header,lang",
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh"),
        ("en-US,en;q=0.9,zh-CN;q=0.8", "en"),
        ("fr-FR, zh-Hans;q=0.5", "zh"),
        ("en;q=0.2, zh-TW;q=0.9", "zh"),
        ("zh;q=0, en", "en"),
        ("de", None),
        ("", None),
        ("zh;q=bad, en;q=0.1", "en"),
    ],
)
def test_accept_language(header: str, lang: str | None) -> None:
    assert negotiate(header) == lang


def test_normalize() -> None:
    assert [normalize(x) for x in ("zh", "zh-CN", "ZH_hans", "en-GB", "fr", "", None)] == [
        "zh",
        "zh",
        "zh",
        "en",
        None,
        None,
        None,
    ]


# -- the web UI -------------------------------------------------------------------------------
def _nav(html: str) -> list[str]:
    return [a.get_text(strip=True) for a in BeautifulSoup(html, "html.parser").select("header nav a")]


def test_lang_parameter_sets_the_page_language_and_a_cookie(client: TestClient) -> None:
    r = client.get("/search", params={"q": "protein", "lang": "zh"})
    assert r.status_code == 200
    soup = BeautifulSoup(r.text, "html.parser")
    assert soup.html["lang"] == "zh-CN" and r.headers["content-language"] == "zh-CN"
    assert "搜索" in _nav(r.text) and "Search" not in _nav(r.text)
    assert "pa_lang=zh" in r.headers["set-cookie"]
    switch = soup.select_one("a.lang-switch")
    assert switch.get_text() == "English" and switch["hreflang"] == "en"
    assert "q=protein" in switch["href"] and "lang=en" in switch["href"]
    # remembered: the next page, without ?lang, is Chinese too
    r2 = client.get("/browse")
    assert BeautifulSoup(r2.text, "html.parser").html["lang"] == "zh-CN" and "浏览" in _nav(r2.text)
    # and switched back
    r3 = client.get("/stats", params={"lang": "en"})
    assert BeautifulSoup(r3.text, "html.parser").html["lang"] == "en" and "Stats" in _nav(r3.text)
    assert BeautifulSoup(client.get("/stats").text, "html.parser").html["lang"] == "en"


def test_accept_language_chooses_until_a_cookie_says_otherwise(client: TestClient) -> None:
    zh = {"accept-language": "zh-CN,zh;q=0.9,en;q=0.5"}
    r = client.get("/search", headers=zh)
    assert BeautifulSoup(r.text, "html.parser").html["lang"] == "zh-CN" and "pa_lang" not in r.headers.get(
        "set-cookie", ""
    )
    assert (
        BeautifulSoup(client.get("/search", headers={"accept-language": "fr, en"}).text, "html.parser").html["lang"]
        == "en"
    )
    client.cookies.set("pa_lang", "en")
    assert BeautifulSoup(client.get("/search", headers=zh).text, "html.parser").html["lang"] == "en"


def test_the_json_api_stays_english_unless_asked(client: TestClient) -> None:
    r = client.get("/search.json", params={"q": "nothing-matches-this"}, headers={"accept-language": "zh-CN"})
    assert r.headers["content-language"] == "en"
    r = client.get("/search.json", params={"q": "x", "mode": "fuzzy", "lang": "zh"})
    assert r.status_code == 400 and r.headers["content-language"] == "zh-CN"


def test_serve_get_answers_in_chinese(web_lib: Library, runner) -> None:
    r = runner.invoke(cli, ["--db", web_lib.path, "serve", "--get", "/search?q=protein&lang=zh"])
    assert r.exit_code == 0, r.output
    assert '<html lang="zh-CN">' in r.output and "搜索" in r.output


def test_every_string_the_scripts_translate_is_sent_to_them() -> None:
    """app.js / personal.js call `_("...")`; base.html sends them the translations of JS_MESSAGES only."""
    from paperatlas.web.common import JS_MESSAGES

    from paperatlas.topics.map import MAP_MESSAGES

    for folder, known, where in [
        ("web/static", JS_MESSAGES, "JS_MESSAGES in web/common.py"),
        ("topics/static", MAP_MESSAGES, "MAP_MESSAGES in topics/map.py"),
    ]:
        used = {
            json.loads(f'"{m}"')
            for f in (extract.PACKAGE / folder).glob("*.js")
            for m in re.findall(r'\b_\("((?:[^"\\]|\\.)*)"\s*[,)]', f.read_text())
        }
        assert len(used) > 5, f'no _("...") calls found in {folder}'
        assert used <= set(known), f"add to {where}: {sorted(used - set(known))}"


def test_pages_embed_the_script_strings_in_chinese_only(client: TestClient) -> None:
    zh = BeautifulSoup(client.get("/search", params={"lang": "zh"}).text, "html.parser")
    strings = json.loads(zh.select_one("script#pa-i18n").string)
    assert strings["BibTeX copied"] == "已复制 BibTeX" and strings["Star"] == "收藏"
    en = BeautifulSoup(client.get("/search", params={"lang": "en"}).text, "html.parser")
    assert en.select_one("script#pa-i18n") is None


def test_a_browser_fetch_gets_json_in_its_language(client: TestClient) -> None:
    r = client.get(
        "/search.json", params={"q": "x"}, headers={"accept-language": "zh-CN", "sec-fetch-site": "same-origin"}
    )
    assert r.headers["content-language"] == "zh-CN"


def _section(text: str, section: str, sub: bool = False) -> str:
    """The text of one `## ` section (with `sub`: up to its first `### ` subsection)."""
    start = text.index(section)
    ends = [
        e
        for e in (text.find("\n## ", start + len(section)), text.find("\n### ", start + len(section)) if sub else -1)
        if e != -1
    ]
    return text[start : min(ends) if ends else len(text)]


def _sh_lines(text: str, section: str) -> list[tuple[str, str]]:
    """(command, comment) of each line of the section's sh blocks."""
    rows = []
    for block in re.findall(r"```sh\n(.*?)```", _section(text, section), flags=re.S):
        for line in block.splitlines():
            if line.strip():
                parts = re.split(r"\s{2,}#", line, maxsplit=1)
                rows.append((parts[0].strip(), parts[1] if len(parts) > 1 else ""))
    return rows


def _sh_commands(text: str, section: str) -> list[str]:
    return [cmd for cmd, _ in _sh_lines(text, section)]


def _options(comment: str) -> list[str]:
    """What a comment offers as options: `--flags`, `a | b | c` lists (the words around them are prose)."""
    return sorted(
        set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", comment)) | set(re.findall(r"[\w-]+(?: \| [\w-]+)+", comment))
    )


def _inline_commands(text: str, sections: list[str]) -> set[str]:
    """The `paperatlas ...` code spans of the prose of these sections (whitespace normalised)."""
    prose = "".join(re.sub(r"```.*?```", "", _section(text, s, sub=True), flags=re.S) for s in sections)
    return {" ".join(m.split()) for m in re.findall(r"`((?:[A-Z_]+=\S* )?paperatlas [^`]*)`", prose)}


def test_the_chinese_readme_shows_the_same_commands() -> None:
    """README.zh-CN.md translates the user path; its commands must stay those of README.md."""
    root = extract.PACKAGE.parent
    en = (root / "README.md").read_text(encoding="utf-8")
    zh = (root / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "README.zh-CN.md" in en and "(README.md)" in zh
    assert _sh_commands(zh, "## 命令行") == _sh_commands(en, "## The CLI")
    assert _sh_commands(zh, "## 快速开始") == _sh_commands(en, "## Quick start")
    assert len(_sh_commands(en, "## The CLI")) > 15
    # the options and choices a command's comment lists (`jsonl | ... | ris | csl-json`, `--no-embed`)
    for section_en, section_zh in (("## The CLI", "## 命令行"), ("## Quick start", "## 快速开始")):
        for (cmd, c_en), (_, c_zh) in zip(_sh_lines(en, section_en), _sh_lines(zh, section_zh)):
            assert _options(c_zh) == _options(c_en), f"{cmd}: {c_zh!r} lacks what {c_en!r} lists"
    # and the commands the prose names: Zotero import, fetch and follow, tokens
    pairs = [
        ("## The CLI", "## 命令行"),
        ("## What next", "## 接下来"),
        ("## Zotero and other reference managers", "## Zotero 和其他文献管理工具"),
        ("## Quick start", "## 快速开始"),
    ]
    missing = _inline_commands(en, [p[0] for p in pairs]) - _inline_commands(
        zh, [p[1] for p in pairs] + ["## 网页界面的语言"]
    )
    assert not missing, f"README.zh-CN.md lacks {sorted(missing)}"
    # what the two say about fonts: Chinese glyphs need a CJK font
    assert "fonts-noto-cjk" in en and "fonts-noto-cjk" in zh


# Words that may stand untranslated in a template's own text: names, formats, protocol words.
NOT_TRANSLATED = {
    "paperatlas",
    "paper",
    "atlas",
    "API",
    "HTTP",
    "HTML",
    "Markdown",
    "Atom",
    "JSON",
    "BibTeX",
    "CSV",
    "OpenAPI",
    "PDF",
    "arXiv",
    "TL",
    "DR",
}
ATTRS = re.compile(r'\b(?:title|placeholder|aria-label|alt)\s*=\s*"([^"]*)"')


def untranslated_text(source: str) -> set[str]:
    """English words in a template's literal text and user-facing attributes (not inside {{ }},
    <code>, <pre>, <kbd>, <script> or <style>): what `_()` should have wrapped."""
    from jinja2 import Environment, nodes

    parts: list[str] = []
    for out in Environment().parse(source).find_all(nodes.Output):
        parts += [n.data if isinstance(n, nodes.TemplateData) else "\x00" for n in out.nodes] + ["\x00"]
    text = "".join(parts)
    words = [w for m in ATTRS.finditer(text) for w in re.findall(r"[A-Za-z]{2,}", m.group(1))]
    text = re.sub(r"<(script|style|code|pre|kbd)\b.*?</\1>", " ", text, flags=re.S)
    text = re.sub(r"<[^>]*>|&#?\w+;", " ", text)
    text = re.sub(r"\S*/\S*", " ", text)  # paths and URLs
    words += re.findall(r"[A-Za-z]{2,}", text)
    return set(words) - NOT_TRANSLATED


def test_untranslated_text_is_found() -> None:
    src = (
        '<p title="Open it">{{ _("fine") }} Left over <code>curl x</code>'
        "<input placeholder=\"{{ _('ok') }}\"></p>{% if x %}<b>More</b>{% endif %}"
    )
    assert untranslated_text(src) == {"Open", "it", "Left", "over", "More"}


# Pages another helper is still rewriting (skipped until their work lands and is translated).
PENDING: set[str] = set()


@pytest.mark.parametrize("template", sorted(p.name for d in extract.TEMPLATE_DIRS for p in d.glob("*.html")))
def test_templates_have_no_unmarked_english(template: str) -> None:
    """Every visible string in a template goes through `_()` (see /docs/i18n or paperatlas/i18n/__init__.py)."""
    if template in PENDING:
        pytest.skip(f"{template}: being rewritten; its strings are marked when that lands")
    path = next(d / template for d in extract.TEMPLATE_DIRS if (d / template).exists())
    left = untranslated_text(path.read_text(encoding="utf-8"))
    assert not left, f'{path}: wrap these words\' text in {{{{ _("...") }}}}: {sorted(left)}'


def test_error_pages_in_chinese(client: TestClient) -> None:
    r = client.get("/no/such/page", params={"lang": "zh"})
    soup = BeautifulSoup(r.text, "html.parser")
    assert r.status_code == 404 and soup.select_one("p.error").get_text() == "没有这个页面"
    r = client.get("/paper/none-such")
    assert r.status_code == 404 and "没有 id 为“none-such”的论文" in r.text and "返回搜索" in r.text
    r = client.get("/search", params={"q": "x", "mode": "fuzzy"})
    assert r.status_code == 400 and "参数“mode”必须是" in r.text
    # a script's JSON error stays English
    client.cookies.clear()
    assert client.get("/search.json", params={"q": "x", "mode": "fuzzy"}).json()["error"].startswith("parameter 'mode'")


def test_styles_and_scripts_do_not_select_on_translated_text() -> None:
    """`[aria-label="Mouse mode"]` stops matching once the label is Chinese: select on classes or data-*."""
    pkg = extract.PACKAGE
    files = [*(pkg / "web" / "static").glob("*.[cj]s*"), *(pkg / "topics" / "static").glob("*.[cj]s*")]
    assert len(files) >= 5
    bad = [f.name for f in files if re.search(r"\[(aria-label|title|placeholder|alt)\s*[~|^$*]?=", f.read_text())]
    assert not bad, f"selectors on user-visible (translated) attributes in {bad}"
