"""`digest --email` against a real SMTP server on loopback (aiosmtpd), with STARTTLS and a login,
after `follow` + `update` brought new papers in (issue 13)."""

from __future__ import annotations

import email
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli

from sourceserver import SourceServer

aiosmtpd_controller = pytest.importorskip("aiosmtpd.controller")
from aiosmtpd.smtp import AuthResult, LoginPassword  # noqa: E402
from ports import free_port  # noqa: E402

COLM = (Path(__file__).parent / "data" / "pasted" / "colm2025.json").read_bytes()


@dataclass
class Inbox:
    messages: list[Message] = field(default_factory=list)
    rcpt: list[list[str]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append(email.message_from_bytes(envelope.original_content, policy=default_policy))
        self.rcpt.append(list(envelope.rcpt_tos))
        return "250 OK"


@pytest.fixture
def smtp(tmp_path: Path) -> Iterator[tuple[Inbox, int, Path]]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)

    def auth(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and data.login == b"reader" and data.password == b"s3cret"
        return AuthResult(success=ok, handled=False)  # handled=False: the server answers 535 itself

    inbox = Inbox()
    port = free_port()
    c = aiosmtpd_controller.Controller(
        inbox,
        hostname="127.0.0.1",
        port=port,
        tls_context=ctx,
        require_starttls=True,
        authenticator=auth,
        auth_required=True,
    )
    c.start()
    yield inbox, port, cert
    c.stop()


def test_update_then_digest_by_email(
    smtp: tuple[Inbox, int, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox, port, cert = smtp
    server = SourceServer(routes={"/colm/colm2025.json": COLM}).start()
    db = str(tmp_path / "lib.db")
    monkeypatch.setenv("PAPERATLAS_EMBEDDER", "hashing")
    runner = CliRunner()
    try:
        assert (
            runner.invoke(
                cli, ["--db", db, "ingest", *map(str, sorted((Path(__file__).parents[1] / "examples").glob("*.txt")))]
            ).exit_code
            == 0
        )
        assert (
            runner.invoke(cli, ["--db", db, "follow", "paperlists", "colm", "2025", "--base-url", server.url]).exit_code
            == 0
        )
        r = runner.invoke(cli, ["--db", db, "update", "--quiet"])
        assert r.exit_code == 0 and "2 new" in r.output, r.output
    finally:
        server.stop()
    with Library(db) as lib:
        lib.readers.set_feedback("me", [lib.papers(limit=1)[0].id], "like")
    monkeypatch.setenv("PAPERATLAS_SMTP_PASSWORD", "s3cret")
    r = runner.invoke(
        cli,
        [
            "--db",
            db,
            "digest",
            "--since",
            "2000-01-01",
            "--limit",
            "40",
            "--email",
            "me@example.org",
            "--smtp-host",
            "127.0.0.1",
            "--smtp-port",
            str(port),
            "--smtp-starttls",
            "--smtp-user",
            "reader",
            "--smtp-cafile",
            str(cert),
            "--from",
            "atlas@example.org",
        ],
    )
    assert r.exit_code == 0, r.output
    assert f"127.0.0.1:{port}" in r.output
    (msg,) = inbox.messages
    assert inbox.rcpt == [["me@example.org"]] and msg["From"] == "atlas@example.org"
    assert msg["Subject"].startswith("paperatlas digest for me")
    text = msg.get_body(("plain",)).get_content()
    html = msg.get_body(("html",)).get_content()
    # the papers `update` fetched are in the digest (0JzWiigkUy is BEARCUBS, a fetched COLM paper)
    assert "BEARCUBS" in text and "BEARCUBS" in html


def test_wrong_password_and_no_server_say_so(smtp: tuple[Inbox, int, Path], tmp_path: Path) -> None:
    inbox, port, cert = smtp
    db = str(tmp_path / "lib.db")
    runner = CliRunner()
    runner.invoke(
        cli, ["--db", db, "ingest", str(Path(__file__).parents[1] / "examples" / "neurips-2026.txt"), "--no-embed"]
    )
    base = ["--db", db, "digest", "--email", "me@example.org", "--smtp-host", "127.0.0.1"]
    r = runner.invoke(
        cli,
        [
            *base,
            "--smtp-port",
            str(port),
            "--smtp-starttls",
            "--smtp-cafile",
            str(cert),
            "--smtp-user",
            "reader",
            "--smtp-password",
            "wrong",
        ],
        env={"PAPERATLAS_EMBEDDER": "hashing"},
    )
    assert r.exit_code == 1 and "refused the login" in r.output and "--smtp-password" in r.output
    r = runner.invoke(cli, [*base, "--smtp-port", str(port)], env={"PAPERATLAS_EMBEDDER": "hashing"})
    assert r.exit_code == 1 and f"127.0.0.1:{port}" in r.output  # STARTTLS required but not asked for
    free = free_port()
    r = runner.invoke(cli, [*base, "--smtp-port", str(free)], env={"PAPERATLAS_EMBEDDER": "hashing"})
    assert r.exit_code == 1 and f"cannot reach the SMTP server 127.0.0.1:{free}" in r.output
    assert inbox.messages == []


# -- hostile input and a hostile server ------------------------------------------------------------
EVIL = "=?utf-8?q?=0D=0AReply-To:=20boss@evil.example?="
EVIL_BODY = "=?utf-8?q?=0D=0A=0D=0AYour account is closed, log in at evil.example?="


@pytest.mark.parametrize("name", [EVIL, EVIL_BODY])
def test_an_encoded_word_in_the_subject_cannot_inject_headers(smtp: tuple[Inbox, int, Path], name: str) -> None:
    """A digest subject naming such a reader (one stored before names were checked), sent through a
    real SMTP server: the mail arrives with exactly its own headers and two parts; the name is shown
    as typed. Python's header folding alone would decode the word into a line break (CVE-2024-6923)."""
    from paperatlas.mail import SmtpSettings, digest_message, send

    inbox, port, cert = smtp
    subject = f"paperatlas digest for {name}: 12 papers since 2026-11-01 (NeurIPS 2026, ICLR 2027)"
    send(
        digest_message("me@example.org", subject, "the digest", "<p>the digest</p>", "atlas@example.org"),
        SmtpSettings("127.0.0.1", port, "reader", "s3cret", True, cafile=str(cert)),
    )
    (msg,) = inbox.messages
    assert sorted(msg.keys()) == sorted(["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"])
    assert msg["Reply-To"] is None and "\n" not in str(msg["Subject"])
    assert "utf-8?q?=0D=0A" in str(msg["Subject"])  # what the reader typed, shown, not decoded
    assert [p.get_content_type() for p in msg.iter_parts()] == ["text/plain", "text/html"]
    assert msg.get_body(("plain",)).get_content().strip() == "the digest"


def test_encoded_words_are_refused_as_reader_names(tmp_path: Path) -> None:
    """Where names enter (the CLI, the web sign-in form and the API all check through the library)."""
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        with pytest.raises(Exception, match="MIME-encoded text") as e:
            lib.readers.get(EVIL)
        assert "plain text" in e.value.fix
        assert lib.readers.get("Zoë =? not a word").name == "Zoë =? not a word"
        assert lib.readers.all()[0].name == "Zoë =? not a word"
    r = CliRunner().invoke(cli, ["--db", str(tmp_path / "lib.db"), "readers", "add", "x " + EVIL])
    assert r.exit_code != 0 and "MIME-encoded" in r.output


def test_plain_header_and_the_written_message_check() -> None:
    from paperatlas.mail import digest_message, plain_header

    assert plain_header("a\r\nBcc: x@evil.example") == "a  Bcc: x@evil.example"
    assert "=?" not in plain_header(EVIL) and "utf-8?q?=0D=0AReply-To:" in plain_header(EVIL)
    assert plain_header("速递 for 张三 =?") == "速递 for 张三 =?"
    msg = digest_message("me@example.org", "速递 " * 40, "text", "<p>html</p>", "atlas@example.org")
    assert str(msg["Subject"]) == "速递 " * 40  # long Chinese subjects pass the written-message check


def test_a_one_byte_per_tick_smtp_server_meets_the_deadline() -> None:
    import time

    from paperatlas.errors import PaperatlasError
    from paperatlas.mail import SmtpSettings, digest_message, send

    from sourceserver import slow_smtp

    (listener, stop), port = slow_smtp(0.1)
    try:
        start = time.monotonic()
        with pytest.raises(PaperatlasError) as e:
            send(
                digest_message("me@example.org", "s", "t", "<p>h</p>", "a@example.org"),
                SmtpSettings("127.0.0.1", port, timeout=0.5, deadline=1.0),
            )
        took = time.monotonic() - start
    finally:
        stop.set()
        listener.close()
    assert "did not finish within 1 s" in str(e.value) and "not sent" in str(e.value)
    assert 0.9 < took < 4, took
