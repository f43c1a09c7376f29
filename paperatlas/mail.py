"""Send a digest by email through an SMTP server (issue 13): stdlib smtplib, STARTTLS when asked.

Settings come from flags or the environment (PAPERATLAS_SMTP_HOST, _PORT, _USER, _PASSWORD, _FROM,
_STARTTLS), so a cron line carries no password.
"""

from __future__ import annotations

import smtplib
import socket
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from .errors import PaperatlasError


@dataclass
class SmtpSettings:
    host: str = "localhost"
    port: int | None = None  # default: 587 with STARTTLS, else 25
    user: str = ""
    password: str = ""
    starttls: bool = False
    sender: str = "paperatlas@localhost"
    timeout: float = 30.0
    cafile: str = ""  # trust this CA for STARTTLS (a private server's self-signed certificate)

    @property
    def where(self) -> str:
        return f"{self.host}:{self.resolved_port}"

    @property
    def resolved_port(self) -> int:
        return self.port or (587 if self.starttls else 25)


def digest_message(to: str, subject: str, text: str, html: str, sender: str) -> EmailMessage:
    """A multipart/alternative message: the Markdown digest as text, the HTML digest as HTML."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = make_msgid(domain="paperatlas")
    msg.set_content(text)
    msg.add_alternative(html, subtype="html")
    return msg


def send(msg: EmailMessage, settings: SmtpSettings) -> None:
    """Deliver `msg`; raises PaperatlasError naming the server and the fix."""
    try:
        with smtplib.SMTP(settings.host, settings.resolved_port, timeout=settings.timeout) as smtp:
            smtp.ehlo()
            if settings.starttls:
                smtp.starttls(context=ssl.create_default_context(cafile=settings.cafile or None))
                smtp.ehlo()
            if settings.user:
                smtp.login(settings.user, settings.password)
            refused = smtp.send_message(msg)
    except smtplib.SMTPAuthenticationError as e:
        raise PaperatlasError(f"the SMTP server {settings.where} refused the login of {settings.user!r} ({e.smtp_code})",
                              "check --smtp-user / --smtp-password (or PAPERATLAS_SMTP_USER / _PASSWORD)") from None
    except smtplib.SMTPNotSupportedError as e:
        raise PaperatlasError(f"the SMTP server {settings.where} does not offer that ({e})",
                              "drop --smtp-starttls, or use the server's submission port (587)") from None
    except smtplib.SMTPRecipientsRefused as e:
        raise PaperatlasError(f"the SMTP server {settings.where} refused {', '.join(e.recipients)}",
                              "check the address") from None
    except smtplib.SMTPException as e:
        raise PaperatlasError(f"sending through {settings.where} failed: {e}",
                              "check the SMTP settings (--smtp-host, --smtp-port, --smtp-starttls)") from None
    except (OSError, socket.timeout, ssl.SSLError) as e:
        raise PaperatlasError(f"cannot reach the SMTP server {settings.where}: {e}",
                              "check --smtp-host and --smtp-port (or PAPERATLAS_SMTP_HOST / _PORT)") from None
    if refused:
        raise PaperatlasError(f"the SMTP server {settings.where} refused {', '.join(refused)}", "check the address")
