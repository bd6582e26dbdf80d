"""Certificates for the tests that speak TLS to a server of their own (mail, webhooks)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def trusted_certificate(
    folder: Path, monkeypatch: pytest.MonkeyPatch, name: str, alt_name: str
) -> tuple[Path, Path]:
    """A self-signed certificate (and its key) in ``folder`` for ``name`` alone (its
    subjectAltName ``alt_name``, e.g. ``DNS:hooks.test``), trusted through SSL_CERT_FILE."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test server's certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", f"/CN={name}", "-addext", f"subjectAltName={alt_name}",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    return cert, key
