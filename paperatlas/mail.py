"""Send a digest by email through an SMTP server: stdlib smtplib, STARTTLS when asked.

Settings come from flags or the environment (PAPERATLAS_SMTP_HOST, _PORT, _USER, _PASSWORD, _FROM,
_STARTTLS), so a cron line carries no password.
"""

from __future__ import annotations

import email
import re
import smtplib
import socket
import ssl
import unicodedata
from dataclasses import dataclass
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formatdate, make_msgid
from typing import Any

from .deadline import Deadline
from .errors import PaperatlasError


@dataclass
class SmtpSettings:
    host: str = "localhost"
    port: int | None = None  # default: 587 with STARTTLS, else 25
    user: str = ""
    password: str = ""
    starttls: bool = False
    sender: str = "paperatlas@localhost"
    timeout: float = 30.0  # per read or write
    cafile: str = ""  # trust this CA for STARTTLS (a private server's self-signed certificate)
    deadline: float = 120.0  # the whole conversation, however slowly the server answers

    @property
    def where(self) -> str:
        return f"{self.host}:{self.resolved_port}"

    @property
    def resolved_port(self) -> int:
        return self.port or (587 if self.starttls else 25)


# An RFC 2047 encoded word ("=?charset?q?...?="). Python's header folding decodes one found in a
# plain-text value and writes it back decoded when it folds a long line, so "=0D=0A" inside one
# becomes a real line break: a header of the attacker's choosing, or with two, a body of theirs
# (CVE-2024-6923). Breaking the "=?" of every such word keeps the text readable and inert.
_ENCODED_WORD = re.compile(r"=\?[^?\s]*\?[bBqQ]\?[^?]*\?=")
_HEADERS = ("From", "To", "Subject", "Date", "Message-ID")


def plain_header(value: str) -> str:
    """`value` safe to put in a header: line breaks and other control characters become spaces, and
    anything shaped like an encoded word is broken up (shown as typed, never decoded)."""
    value = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in value)
    return _ENCODED_WORD.sub(lambda m: "=\u200b?" + m.group(0)[2:], value)


def digest_message(to: str, subject: str, text: str, html: str, sender: str) -> EmailMessage:
    """A multipart/alternative message: the Markdown digest as text, the HTML digest as HTML.

    Every header value goes through plain_header(), and the message is checked once written: it
    must parse back to exactly these headers and two parts, or it is not sent (PaperatlasError)."""
    msg = EmailMessage()
    msg["From"] = plain_header(sender)
    msg["To"] = plain_header(to)
    msg["Subject"] = plain_header(subject)
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = make_msgid(domain="paperatlas")
    msg.set_content(text)
    msg.add_alternative(html, subtype="html")
    check_message(msg)
    return msg


def check_message(msg: EmailMessage) -> None:
    """Raise unless `msg`, as it goes on the wire, reads back with the same headers and parts."""
    back = email.message_from_bytes(msg.as_bytes(policy=SMTP), policy=SMTP)
    want = [*_HEADERS, "MIME-Version", "Content-Type"]
    got = list(back.keys())
    # whitespace may shift when long lines are folded into encoded words (and back): compare without it
    same = sorted(got) == sorted(want) and all(
        "".join(str(back[h]).split()) == "".join(str(msg[h]).split()) for h in _HEADERS
    )
    parts = [p.get_content_type() for p in back.iter_parts()] if back.is_multipart() else []
    if not same or parts != ["text/plain", "text/html"]:
        raise PaperatlasError(
            f"the digest mail would not be sent as written (headers {got}, parts {parts}): "
            "a reader name or subject holds text that breaks mail headers",
            "rename the reader (`paperatlas readers`) to plain text, and report this as a paperatlas bug",
        )


class _WatchedSMTP(smtplib.SMTP):
    """smtplib.SMTP whose socket is watched by a Deadline from the moment it connects (the
    greeting is read inside connect(), so the socket must be watched before that)."""

    def __init__(self, deadline: Deadline, host: str, timeout: float) -> None:
        self._deadline = deadline
        super().__init__(timeout=timeout)  # no host here: connect() below, once the socket is watched
        self._host = host  # what STARTTLS checks the certificate against (smtplib sets it only here)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        sock = super()._get_socket(host, port, timeout)
        self._deadline.watch(sock)
        return sock

    def starttls(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        reply = super().starttls(*args, **kwargs)
        self._deadline.watch(self.sock)  # the TLS socket took over the connection from the plain one
        return reply


def send(msg: EmailMessage, settings: SmtpSettings) -> None:
    """Deliver `msg`; raises PaperatlasError naming the server and the fix. The whole conversation
    ends within `settings.deadline` seconds, even with a server that answers one byte at a time."""
    guard = Deadline(settings.deadline)
    try:
        _send(msg, settings, guard)
    except PaperatlasError:
        if guard.expired:
            raise PaperatlasError(
                f"the SMTP server {settings.where} did not finish within {settings.deadline:g} s "
                "(it answers too slowly); the digest was not sent",
                "try again later, or use another SMTP server (--smtp-host)",
            ) from None
        raise
    finally:
        guard.cancel()


def _send(msg: EmailMessage, settings: SmtpSettings, guard: Deadline) -> None:
    try:
        with _WatchedSMTP(guard, settings.host, settings.timeout) as smtp:
            smtp.connect(settings.host, settings.resolved_port)
            smtp.ehlo()
            if settings.starttls:
                smtp.starttls(context=ssl.create_default_context(cafile=settings.cafile or None))
                smtp.ehlo()
            if settings.user:
                smtp.login(settings.user, settings.password)
            refused = smtp.send_message(msg)
    except smtplib.SMTPAuthenticationError as e:
        raise PaperatlasError(
            f"the SMTP server {settings.where} refused the login of {settings.user!r} ({e.smtp_code})",
            "check --smtp-user / --smtp-password (or PAPERATLAS_SMTP_USER / _PASSWORD)",
        ) from None
    except smtplib.SMTPNotSupportedError as e:
        raise PaperatlasError(
            f"the SMTP server {settings.where} does not offer that ({e})",
            "drop --smtp-starttls, or use the server's submission port (587)",
        ) from None
    except smtplib.SMTPRecipientsRefused as e:
        raise PaperatlasError(
            f"the SMTP server {settings.where} refused {', '.join(e.recipients)}", "check the address"
        ) from None
    except smtplib.SMTPException as e:
        raise PaperatlasError(
            f"sending through {settings.where} failed: {e}",
            "check the SMTP settings (--smtp-host, --smtp-port, --smtp-starttls)",
        ) from None
    except (TimeoutError, OSError, ssl.SSLError) as e:
        raise PaperatlasError(
            f"cannot reach the SMTP server {settings.where}: {e}",
            "check --smtp-host and --smtp-port (or PAPERATLAS_SMTP_HOST / _PORT)",
        ) from None
    if refused:
        raise PaperatlasError(f"the SMTP server {settings.where} refused {', '.join(refused)}", "check the address")
