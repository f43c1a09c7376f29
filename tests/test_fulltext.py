"""The full text of papers: real PDFs (tests/data/pdfs, ACL Anthology, CC BY 4.0) read by the real PDF
library into sections, captions and references; stored, shown, searched and asked through the CLI on
a real library file; and every way a file can fail to be the paper, recorded with the reason."""

from __future__ import annotations

import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.fulltext.reader import FulltextError, parse_reference, read_pdf, title_on_first_page

PDFS = Path(__file__).parent / "data" / "pdfs"
GRAPH = PDFS / "N18-3011.pdf"
SPECTER = PDFS / "2020.acl-main.207.pdf"

PAPERS = [
    {
        "id": "N18-3011",
        "title": "Construction of the Literature Graph in Semantic Scholar",
        "abstract": "We describe a deployed scalable system for organizing published scientific literature.",
        "venue": "NAACL",
        "year": 2018,
    },
    {
        "id": "specter",
        "title": "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
        "abstract": "Representation learning is a critical ingredient for natural language processing systems.",
        "venue": "ACL",
        "year": 2020,
    },
    {
        "id": "glove",
        "title": "GloVe: Global vectors for word representation",
        "abstract": "Recent methods for learning vector space representations of words.",
        "venue": "EMNLP",
        "year": 2014,
    },
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    lib.ingest([f])
    lib.close()
    return tmp_path / "lib.db"


def run(runner, db: Path, *args: str, env: dict[str, str] | None = None):
    return runner.invoke(cli, ["--db", str(db), *args], env=env or {}, catch_exceptions=False)


# -- the reader on real papers ------------------------------------------------------------------------------
def test_reader_finds_sections_captions_and_references_of_a_two_column_paper() -> None:
    doc = read_pdf(GRAPH.read_bytes())
    assert doc.pages == 8
    heads = [(s.number, s.heading) for s in doc.sections]
    for want in [
        ("1", "Introduction"),
        ("2.1", "Node Types"),
        ("3", "Extracting Metadata"),
        ("6", "Conclusion and Future Work"),
    ]:
        assert want in heads, heads
    assert [c.label for c in doc.captions][:2] == ["Figure 1", "Table 1"]
    assert len(doc.references) == 27
    lstm = next(r for r in doc.references if r.title == "Long short-term memory")
    assert lstm.year == 1997 and lstm.authors == ["Sepp Hochreiter", "Jürgen Schmidhuber"]
    body = " ".join(p for s in doc.sections for p in s.paragraphs)
    # hyphenation across lines joined, ligatures unfolded, the running footer and page numbers gone
    assert "attributes as metadata" in body and "at- tributes" not in body and "\ufb01" not in body
    assert "Proceedings of NAACL-HLT" not in body.split("Introduction")[-1]


def test_reader_reads_the_second_paper_and_its_reference_list() -> None:
    doc = read_pdf(SPECTER.read_bytes())
    heads = {s.heading for s in doc.sections}
    assert {"Introduction", "Related Work", "Conclusions and Future Work"} <= heads, heads
    titles = {r.title.lower() for r in doc.references}
    assert "bert: pre-training of deep bidirectional transformers for language understanding" in titles
    assert len(doc.references) >= 50


def test_reference_shapes() -> None:
    r = parse_reference("[3] A. Vaswani, N. Shazeer. Attention is all you need. In NeurIPS, 2017.")
    assert (r.title, r.year, r.authors) == ("Attention is all you need", 2017, ["A. Vaswani", "N. Shazeer"])
    r = parse_reference("Oren Etzioni. 2011. Search needs a shake-up. Nature 476 7358:25-6.")
    assert (r.title, r.year, r.authors) == ("Search needs a shake-up", 2011, ["Oren Etzioni"])


def _blank_pdf(pages: int = 2) -> bytes:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument.new()
    for _ in range(pages):
        pdf.new_page(612, 792)
    buf = io.BytesIO()
    pdf.save(buf)
    return buf.getvalue()


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"<!DOCTYPE html><html><body>Please sign in</body></html>", "not_pdf"),
        (GRAPH.read_bytes()[:40_000], "damaged"),
        (b"%PDF-1.7\n" + b"\x00" * 5000, "damaged"),
        (_blank_pdf(), "scanned"),
    ],
    ids=["html-login-page", "truncated", "garbage", "no-text-layer"],
)
def test_a_file_that_is_not_a_readable_paper_names_the_reason(data: bytes, reason: str) -> None:
    with pytest.raises(FulltextError) as e:
        read_pdf(data)
    assert e.value.reason == reason and e.value.fix


def _encrypted(user_password: str) -> bytes:
    import pypdf

    w = pypdf.PdfWriter()
    for page in pypdf.PdfReader(GRAPH).pages:
        w.add_page(page)
    w.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-128")
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def test_an_encrypted_pdf_is_refused_unless_it_opens_without_a_password() -> None:
    with pytest.raises(FulltextError) as e:
        read_pdf(_encrypted("secret"))
    assert e.value.reason == "encrypted" and "password" in e.value.fix
    # encrypted only against editing (no password to open): read as usual
    assert len(read_pdf(_encrypted("")).references) == 27


def test_page_cap_and_time_budget_bound_a_file() -> None:
    with pytest.raises(FulltextError) as e:
        read_pdf(GRAPH.read_bytes(), max_pages=3)
    assert e.value.reason == "too_large"
    with pytest.raises(FulltextError) as e:
        read_pdf(SPECTER.read_bytes(), time_budget_s=0.0)
    assert e.value.reason == "too_slow"


def test_title_check() -> None:
    first = read_pdf(GRAPH.read_bytes()).first_page
    assert title_on_first_page(PAPERS[0]["title"], first)
    assert not title_on_first_page(PAPERS[1]["title"], first)


# -- attached, stored, shown ----------------------------------------------------------------------------
def test_add_and_show_json_follow_the_contract(db: Path, runner) -> None:
    r = run(runner, db, "fulltext", "add", "N18-3011", str(GRAPH))
    assert r.exit_code == 0, r.output
    assert "8 pages" in r.stdout and "27 references (1 in the library)" in r.stdout
    r = run(runner, db, "fulltext", "show", "N18-3011", "--json")
    d = json.loads(r.stdout)
    assert d["id"] == "N18-3011" and d["pages"] == 8
    s = next(s for s in d["sections"] if s["heading"] == "Introduction")
    assert s["page"] == 1 and s["text"].startswith("The goal of this work is to facilitate algorithmic discovery")
    assert {"heading", "page", "text"} <= set(d["sections"][0])
    assert any(c["text"].startswith("Table 1: Results of the ScienceParse system") for c in d["captions"])
    refs = d["references"]
    assert all({"raw", "title", "authors", "year", "id"} <= set(x) for x in refs)
    # the reference that names a library paper carries its id; the others null
    assert [x["id"] for x in refs if x["id"]] == ["glove"]
    assert next(x for x in refs if x["title"].startswith("GloVe"))["year"] == 2014
    with Library(db) as lib:
        assert lib.fulltext.cited_by("glove") == ["N18-3011"] and lib.fulltext.cited_by("specter") == []
    # the text version
    r = run(runner, db, "fulltext", "show", "N18-3011")
    assert "## 1 Introduction" in r.stdout and "-> glove" in r.stdout


def test_pdf_is_kept_once_by_hash_and_a_wrong_file_never_replaces_the_text(db: Path, runner) -> None:
    assert run(runner, db, "fulltext", "add", "N18-3011", str(GRAPH)).exit_code == 0
    assert run(runner, db, "fulltext", "add", "N18-3011", str(GRAPH)).exit_code == 0
    files = list((db.parent / "lib.db.files").rglob("*.pdf"))
    assert len(files) == 1 and files[0].read_bytes() == GRAPH.read_bytes()
    # the SPECTER paper's PDF attached to the literature-graph paper: refused, the text read before stays
    r = run(runner, db, "fulltext", "add", "N18-3011", str(SPECTER))
    assert r.exit_code == 3 and "not_paper" in r.output and "Fix:" in r.output
    assert json.loads(run(runner, db, "fulltext", "show", "N18-3011", "--json").stdout)["pages"] == 8
    assert len(list((db.parent / "lib.db.files").rglob("*.pdf"))) == 1


def test_status_counts_each_reason_and_show_says_the_fix(db: Path, runner, tmp_path: Path) -> None:
    html = tmp_path / "login.pdf"
    html.write_text("<html><body>Sign in to download</body></html>")
    assert run(runner, db, "fulltext", "add", "N18-3011", str(GRAPH)).exit_code == 0
    r = run(runner, db, "fulltext", "add", "specter", str(html))
    assert r.exit_code == 3 and "not_pdf" in r.output
    assert run(runner, db, "fulltext", "add", "glove", str(GRAPH)).exit_code == 3
    st = json.loads(run(runner, db, "fulltext", "status", "--json", "--failed").stdout)
    assert st["counts"] == {"read": 1, "not_pdf": 1, "not_paper": 1} and st["papers"] == 3
    assert {f["paper_id"]: f["reason"] for f in st["failures"]} == {"specter": "not_pdf", "glove": "not_paper"}
    r = run(runner, db, "fulltext", "show", "specter")
    assert r.exit_code == 1 and "not_pdf" in r.output and "fulltext add specter" in r.output
    assert "fulltext: 1 read" in run(runner, db, "stats").stdout
    r = run(runner, db, "fulltext", "add", "nosuch", str(GRAPH))
    assert r.exit_code == 1 and "nosuch" in r.output


# -- searched ----------------------------------------------------------------------------------------------
def test_search_in_body_shows_the_passage_with_section_and_page(db: Path, runner) -> None:
    run(runner, db, "fulltext", "add", "N18-3011", str(GRAPH))
    run(runner, db, "fulltext", "add", "specter", str(SPECTER))
    r = run(runner, db, "search", "triplet margin loss", "--in", "body", "--json")
    answer = json.loads(r.stdout)
    hits = answer["hits"]
    assert answer["in"] == "body" and answer["total"] == len(hits) and hits[0]["id"] == "specter"
    x = hits[0]["passage"]
    assert x["page"] == 3 and x["section"] == "Citation-Based Pretraining Objective" and "margin" in x["text"]
    # the abstracts hold none of these words: the default search does not find it
    assert run(runner, db, "search", "triplet margin loss", "--mode", "keyword", "--json").exit_code == 4
    r = run(runner, db, "search", "ScienceParse", "--in", "body")
    assert "Construction of the Literature Graph" in r.stdout and "p.3" in r.stdout
    assert run(runner, db, "search", "zzzqqq", "--in", "body").exit_code == 4
    r = run(runner, db, "search", "ScienceParse", "--in", "body", "--venue", "ACL", "--json")
    assert r.exit_code == 4


# -- asked ---------------------------------------------------------------------------------------------------
class _Chat(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint on loopback that answers every question with one fixed reply and
    keeps the prompts it was sent: the contract of ask's evidence and citations, not a model's prose."""

    reply = ""
    seen: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        out = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "model": "fixture",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": self.reply}, "finish_reason": "stop"}
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self) -> None:  # noqa: N802
        out = json.dumps({"data": [{"id": "fixture"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a: object) -> None:
        pass


@pytest.fixture
def chat():
    _Chat.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield _Chat, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_ask_one_paper_sends_its_passages_and_cites_paper_and_page(db: Path, runner, chat) -> None:
    handler, url = chat
    run(runner, db, "fulltext", "add", "specter", str(SPECTER))
    handler.reply = "They choose a margin of m = 1 [1]. Something else [9]."
    env = {"PAPERATLAS_LLM_URL": url}
    r = run(runner, db, "ask", "What margin does the triplet loss use?", "--paper", "specter", "--json", env=env)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["passages"] and all(p["id"] == "specter" for p in d["passages"])
    assert d["passages"][-1]["section"] == "abstract"  # one paper asked: its abstract goes too
    first = d["passages"][0]
    assert first["page"] == 3 and "margin" in first["text"] and {"id", "page", "section", "text"} <= set(first)
    assert d["answer"].startswith("They choose a margin of m = 1 [specter p.3].")
    assert d["cited"] == ["specter"] and d["dropped_citations"] == 1
    sent = handler.seen[-1]["messages"][-1]["content"]
    assert "[1] SPECTER" in sent and "(p.3, Citation-Based Pretraining Objective)" in sent and "m = 1" in sent
    # over the library: the papers search finds, each by its best passages where it has a body
    handler.reply = "Not in these papers."
    r = run(runner, db, "ask", "triplet loss margin citation representation", "--limit", "3", "--json", env=env)
    d = json.loads(r.stdout)
    body = [p for p in d["passages"] if p["page"] is not None]
    assert body and all(p["id"] == "specter" for p in body) and len(body) <= 2
    assert {p["id"] for p in d["passages"] if p["page"] is None} <= {x["id"] for x in d["retrieved"]} - {"specter"}
    # a refusal still shows what was read: the sentences sharing most of the question's words, quoted
    assert d["not_found"] is True and d["answer"] == "Not in these papers."
    assert d["closest"] and len(d["closest"]) <= 3
    for c in d["closest"]:  # a quotation of what was read, where it was read
        read = [" ".join(p["text"].split()) for p in d["passages"] if (p["id"], p["page"]) == (c["id"], c["page"])]
        assert any(c["text"] in t for t in read)
    assert any("margin" in c["text"].lower() for c in d["closest"])
    r = run(runner, db, "ask", "triplet loss margin citation representation", "--limit", "3", env=env)
    assert "not an answer" in r.stdout and "[specter p." in r.stdout
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    with Library(db) as lib:  # the model the CLI used: the passages' vectors are its
        lib.llm.configure(url)
        with TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
            page = c.get("/ask", params={"q": "triplet loss margin citation representation", "limit": 3}).text
    assert 'class="closest"' in page and "/paper/specter/read#p-" in page  # the passage quoted
    # a paper without a body is asked from its abstract, as before
    handler.reply = "Not in these papers."
    d = json.loads(run(runner, db, "ask", "What is GloVe?", "--paper", "glove", "--json", env=env).stdout)
    assert d["passages"] == [{"id": "glove", "page": None, "section": "abstract", "text": PAPERS[2]["abstract"]}]
    assert d["not_found"] is True


def test_ask_reads_a_paper_whose_body_answers_though_its_abstract_does_not(db: Path, runner, chat) -> None:
    # the abstract search finds no good match for a question about what a body says: the paper whose
    # passage shares most of the question's words is read all the same
    handler, url = chat
    run(runner, db, "fulltext", "add", "specter", str(SPECTER))
    handler.reply = "Not in these papers."
    env = {"PAPERATLAS_LLM_URL": url}
    question = "Which hyperparameter m sets the loss margin of the triplet objective?"
    found = json.loads(run(runner, db, "search", question, "--json").stdout or "{}").get("hits", [])
    assert "specter" not in [h["id"] for h in found]  # what the search of abstracts alone gives
    d = json.loads(run(runner, db, "ask", question, "--limit", "2", "--json", env=env).stdout)
    assert "specter" in [x["id"] for x in d["retrieved"]]
    assert any(p["id"] == "specter" and p["page"] == 3 and "margin" in p["text"] for p in d["passages"])
    assert any("margin" in c["text"] for c in d["closest"])


def test_a_question_in_chinese_finds_passages_of_an_english_body(db: Path, runner, chat) -> None:
    # the passages are found (and a refusal's sentences quoted) by the question's English: the
    # glossary's reading of 损失 / 超参数 (loss, hyperparameter); by its Chinese words none matched
    handler, url = chat
    run(runner, db, "fulltext", "add", "specter", str(SPECTER))
    handler.reply = "Not in these papers."
    env = {"PAPERATLAS_LLM_URL": url}
    r = run(runner, db, "ask", "三元组损失的间隔超参数是多少？", "--paper", "specter", "--json", env=env)
    d = json.loads(r.stdout)
    body = [p for p in d["passages"] if p["page"] is not None]
    assert any("loss margin hyperparameter" in " ".join(p["text"].split()) for p in body)
    assert d["not_found"] and any("margin" in c["text"] for c in d["closest"])
    sent = [m["content"] for body in handler.seen for m in body["messages"]]
    assert any("三元组损失的间隔超参数是多少" in m for m in sent)  # the model is asked the question as written


def test_ask_with_the_real_model_cites_only_retrieved_passages(db: Path, runner, llm_proxy) -> None:
    run(runner, db, "fulltext", "add", "specter", str(SPECTER))
    env = {"PAPERATLAS_LLM_URL": llm_proxy.url, "PAPERATLAS_LLM_MAX_TOKENS": "40"}
    r = run(runner, db, "ask", "What margin does the triplet loss use?", "--paper", "specter", "--json", env=env)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["passages"][0]["page"] == 3 and set(d["cited"]) <= {p["id"] for p in d["passages"]}


# -- the same on PostgreSQL (no FTS5 there: the passages are scanned) ----------------------------------------
def test_fulltext_on_postgres(pg_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pgserver import fresh_db_name

    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")
    with Library(pg_server.url(fresh_db_name("fulltext")), embedder="hashing") as lib:
        lib.ingest([f])
        with pytest.raises(Exception, match="PAPERATLAS_FILES"):
            lib.fulltext.add("specter", SPECTER)
        monkeypatch.setenv("PAPERATLAS_FILES", str(tmp_path / "pdfs"))
        r = lib.fulltext.add("specter", SPECTER)
        assert r.ok and r.references >= 50 and (tmp_path / "pdfs" / r.sha256[:2] / f"{r.sha256}.pdf").exists()
        view = lib.fulltext.show("specter").to_dict()
        assert any(s["heading"] == "Introduction" for s in view["sections"])
        hits = lib.fulltext.hits("margin")
        assert hits and hits[0].paper.id == "specter" and "margin" in hits[0].passage.text.lower()
        # read again: replaced, not doubled
        n = lib.fulltext.status()["passages"]
        assert lib.fulltext.add("specter", SPECTER).ok and lib.fulltext.status()["passages"] == n


# -- the reader page ----------------------------------------------------------------------------------------
def test_reader_page_json_twin_and_pdf(web_lib: Library, client) -> None:
    assert web_lib.fulltext.add("specter", SPECTER).ok
    page = client.get("/paper/specter")
    assert 'href="/paper/specter/read"' in page.text
    d = client.get("/paper/specter/read.json").json()
    assert d == json.loads(json.dumps(web_lib.fulltext.show("specter").to_dict()))
    n = next(p["n"] for s in d["sections"] for p in s["paragraphs"] if "triplet margin loss" in p["text"])
    r = client.get(f"/paper/specter/read?p={n}")
    assert r.status_code == 200 and f'id="p-{n}" class="ft-para marked"' in r.text
    assert 'href="/paper/specter.pdf#page=3"' in r.text and "Citation-Based Pretraining Objective" in r.text
    pdf = client.get("/paper/specter.pdf")
    assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
    assert pdf.content == SPECTER.read_bytes()
    # in Chinese
    zh = client.get("/paper/specter/read?lang=zh")
    assert "参考文献" in zh.text and "第3页" in zh.text
    # a paper without a body: 404 with the fix, no PDF, no link from its page
    r = client.get("/paper/glove/read")
    assert r.status_code == 404 and "fulltext add glove" in r.text
    assert client.get("/paper/glove.pdf").status_code == 404
    assert "/paper/glove/read" not in client.get("/paper/glove").text


# -- fetched -------------------------------------------------------------------------------------------------
def test_fetch_against_a_loopback_server_with_faults(tmp_path: Path, runner) -> None:
    from sourceserver import SourceServer

    from paperatlas.http_client import HttpClient

    server = SourceServer().start()
    try:
        pdf = SPECTER.read_bytes()
        names = ["ok", "retry", "slow", "cut", "html", "loop", "huge"]
        for n in names:
            server.routes[f"/pdf/{n}.pdf"] = pdf
            server.content_type[f"/pdf/{n}.pdf"] = "application/pdf"
        server.routes["/pdf/html.pdf"] = b"<!DOCTYPE html><html><body>Please sign in to download</body></html>"
        server.content_type["/pdf/html.pdf"] = "text/html; charset=utf-8"
        server.faults = {
            "/pdf/retry.pdf": ["503:1"],  # busy, come back in a second: then the PDF
            "/pdf/slow.pdf": ["slow:3"] * 4,  # past the whole-answer deadline, every time
            "/pdf/cut.pdf": ["cut"] * 4,  # half the body, then the connection closes
            "/pdf/loop.pdf": [f"redirect:{server.url}/pdf/loop.pdf"] * 20,
            "/pdf/huge.pdf": ["huge:10000000000"],  # 10 GB claimed
        }
        f = tmp_path / "papers.jsonl"
        title = PAPERS[1]["title"]
        # one title each (the same title would merge them), each still the paper's title on page 1
        rows = [
            {"id": n, "title": f"{title} {n} copy", "abstract": "x", "pdf_url": f"{server.url}/pdf/{n}.pdf"}
            for n in names
        ]
        rows.append({"id": "nolink", "title": "A paper without a link", "abstract": "x"})
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with Library(tmp_path / "lib.db", embedder="hashing") as lib:
            lib.ingest([f])
            waits: list[float] = []
            client = HttpClient(total_timeout=2.0, retries=1, backoff=0.01, sleep=lambda s: waits.append(s) or None)
            client.max_bytes = 64 << 20
            rep = lib.fulltext.fetch([*names, "nolink"], client=client)
            got = {r["id"]: r["state"] for r in rep.results}
            assert got == {
                "ok": "read",
                "retry": "read",
                "slow": "fetch_failed",
                "cut": "fetch_failed",
                "html": "not_pdf",
                "loop": "fetch_failed",
                "huge": "fetch_failed",
                "nolink": "no_link",
            }
            assert 1.0 in waits  # Retry-After honoured
            assert rep.bytes < 5 * len(pdf)  # the 10 GB answer was refused before its body
            st = {s.paper_id: s for s in lib.fulltext.store.statuses("failed")}
            assert "HTML page" in st["html"].message and st["html"].fix
            assert "10,000,000,000" in st["huge"].message and "within 2 s" in st["slow"].message
            assert "cut off" in st["cut"].message and "redirect" in st["loop"].message.lower()
            # resumed: what was read is not fetched again
            before = len(server.seen)
            again = lib.fulltext.fetch(["ok", "retry"], client=client)
            assert again.skipped == 2 and len(server.seen) == before
        # the command: progress, summary, exit 5 (stored, with failures recorded)
        r = run(runner, tmp_path / "lib.db", "fulltext", "fetch", "html", "ok", "--redo", "--delay", "0")
        assert r.exit_code == 5 and "1 read" in r.stdout and "not_pdf 1" in r.stdout, r.output
        # the reader's saved papers
        with Library(tmp_path / "lib.db") as lib:
            lib.readers.set_feedback("me", ["retry"], "like")
        r = run(runner, tmp_path / "lib.db", "fulltext", "fetch", "--saved", "--redo", "--delay", "0", "--json")
        assert r.exit_code == 0 and json.loads(r.stdout)["results"] == [{"id": "retry", "state": "read"}], r.output
    finally:
        server.stop()


# -- a folder of PDFs, and a PDF that is no paper of the library yet ------------------------------------------
def test_add_folder_matches_by_title_and_ingest_makes_a_paper_of_the_rest(tmp_path: Path, runner) -> None:
    folder = tmp_path / "Zotero" / "storage"
    (folder / "ABCD1234").mkdir(parents=True)
    (folder / "ABCD1234" / "Ammar et al. - 2018.pdf").write_bytes(GRAPH.read_bytes())
    (folder / "specter.pdf").write_bytes(SPECTER.read_bytes())
    (folder / "login.pdf").write_text("<html><body>Sign in</body></html>")
    f = tmp_path / "papers.jsonl"
    f.write_text(json.dumps(PAPERS[0]) + "\n")
    db = tmp_path / "lib.db"
    assert run(runner, db, "ingest", str(f), "--no-embed").exit_code == 0
    r = run(runner, db, "fulltext", "add-folder", str(tmp_path / "Zotero"), "--json")
    d = json.loads(r.stdout)
    assert d["files"] == 3 and [(m["id"], m["by"]) for m in d["matched"]] == [("N18-3011", "title")]
    assert [u["title"] for u in d["unmatched"]] == [PAPERS[1]["title"]]
    assert [x["reason"] for x in d["failed"]] == ["not_pdf"]
    # again: nothing new to read
    d = json.loads(run(runner, db, "fulltext", "add-folder", str(folder), "--json").stdout)
    assert [a["id"] for a in d["already"]] == ["N18-3011"] and not d["matched"]
    # the unmatched one becomes a paper through ingest, with its title, abstract and full text
    r = run(runner, db, "ingest", str(folder / "specter.pdf"), "--no-embed", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["new"] == 1 and out["pdfs"][0]["state"] == "new"
    pid = out["pdfs"][0]["id"]
    shown = json.loads(run(runner, db, "show", pid, "--json").stdout)
    assert shown["title"] == PAPERS[1]["title"] and shown["abstract"].startswith(
        "Representation learning is a critical"
    )
    assert json.loads(run(runner, db, "fulltext", "show", pid, "--json").stdout)["pages"] == 13
    # ingesting it again attaches it to that paper, no second paper
    out = json.loads(run(runner, db, "ingest", str(folder / "specter.pdf"), "--no-embed", "--json").stdout)
    assert (
        out["new"] == 0 and out["pdfs"][0]["id"] == pid and run(runner, db, "list", "--json").stdout.count('"id"') == 2
    )
    # a file that is not a PDF: nothing stored, exit 3
    r = run(runner, db, "ingest", str(folder / "login.pdf"))
    assert r.exit_code == 3 and "not_pdf" in r.output
    # a PDF that is not there is said to be missing (not "damaged"), with the fix
    r = run(runner, db, "ingest", str(folder / "gone.pdf"))
    assert r.exit_code == 3 and "No such file" in r.output and "check the path" in r.output
    assert "damaged" not in r.output


# -- the MCP tools -------------------------------------------------------------------------------------------
def test_mcp_search_body_and_full_text(tmp_path: Path) -> None:
    from test_mcp import session, text

    from paperatlas.mcp import create_server

    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")
    with Library(tmp_path / "t.db", embedder="hashing") as lib:
        lib.ingest([f])
        assert lib.fulltext.add("specter", SPECTER).ok

        async def body(c) -> None:  # type: ignore[no-untyped-def]
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert "paper" in tools["ask"].input_schema["properties"]
            assert "passages" in tools["ask"].output_schema["properties"]
            r = await c.call_tool("search_body", {"query": "triplet margin loss", "limit": 3})
            hit = r.structured_content["hits"][0]
            assert hit["id"] == "specter" and hit["passage"]["page"] == 3 and "specter p.3" in text(r)
            r = await c.call_tool("full_text", {"id": "specter"})
            assert r.structured_content["pages"] == 13 and len(r.structured_content["references"]) >= 50
            r = await c.call_tool("full_text", {"id": "glove"})
            assert r.is_error and "fulltext add glove" in text(r)

        session(create_server(lib), body)


def test_web_body_search(web_lib: Library, client) -> None:
    assert web_lib.fulltext.add("specter", SPECTER).ok
    d = client.get("/search/body.json?q=triplet+margin+loss").json()
    assert (
        d["hits"][0]["id"] == "specter" and d["hits"][0]["passage"]["section"] == "Citation-Based Pretraining Objective"
    )
    n = d["hits"][0]["passage"]["n"]
    page = client.get("/search/body?q=triplet+margin+loss")
    assert f'href="/paper/specter/read?p={n}#p-{n}"' in page.text and "<mark>" in page.text
    assert "搜索全文" in client.get("/search/body?q=margin&lang=zh").text
    assert 'href="/search/body?q=margin"' in client.get("/search?q=margin").text
    assert client.get("/search/body.json").status_code == 400  # the API needs q


def test_copy_from_postgres_rebuilds_the_passage_index(
    pg_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pgserver import fresh_db_name

    from paperatlas.store import open_store
    from paperatlas.store.copy import copy_library

    monkeypatch.setenv("PAPERATLAS_FILES", str(tmp_path / "pdfs"))
    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")
    url = pg_server.url(fresh_db_name("ftcopy"))
    with Library(url, embedder="hashing") as lib:
        lib.ingest([f])
        assert lib.fulltext.add("specter", SPECTER).ok
    src, dst = open_store(url), open_store(str(tmp_path / "copy.db"))
    copy_library(src, dst)
    src.close()
    dst.close()
    with Library(tmp_path / "copy.db", embedder="hashing") as lib:
        hits = lib.fulltext.hits("triplet margin loss")
        assert hits and hits[0].paper.id == "specter" and hits[0].passage.page == 3
