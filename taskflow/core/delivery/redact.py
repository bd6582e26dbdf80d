"""URLs with their secrets taken out, for log lines and stored error texts; and e-mail
addresses taken out of what an agent tool answers unless it asked for payloads.

A webhook receiver's URL may carry its own secret in the query
(``https://hooks.example/in?token=...``) or in userinfo (``https://user:pw@host/``),
and so may a database or SMTP URL. What is logged or shown keeps the scheme, host,
port and path (enough to tell which endpoint it was) and drops the rest.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: What stands where the query was: a reader sees that something was taken out.
HIDDEN = "[redacted]"
#: A URL inside free text: a scheme, ``://``, then anything up to a space or a quote.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")
#: Something shaped like an e-mail address inside free text (local part, @, a dotted domain).
_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")


def redacted_url(url: str) -> str:
    """``url`` without userinfo, query and fragment (``?[redacted]`` marks a dropped query)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        # Not parseable as a URL: keep only what precedes any query, userinfo or fragment.
        return re.split(r"[?#@]", url, maxsplit=1)[0] + ("?" + HIDDEN if "?" in url else "")
    if host is None:
        return url.split("?", 1)[0].split("#", 1)[0]
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc = f"{netloc}:{port}"
    query = "?" + HIDDEN if parts.query else ""
    return f"{parts.scheme}://{netloc}{parts.path}{query}"


def redact_text(text: str) -> str:
    """``text`` with every URL in it redacted (unchanged, and cheap, when it names none)."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redacted_url(m.group(0)), text)


def redact_addresses(text: str) -> str:
    """``text`` with every e-mail address in it replaced by ``[redacted]`` (and its URLs
    redacted as :func:`redact_text` does)."""
    text = redact_text(text)
    if "@" not in text:
        return text
    return _ADDRESS.sub(HIDDEN, text)
