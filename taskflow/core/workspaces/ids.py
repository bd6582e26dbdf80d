"""The workspace ids every layer knows by name."""

from __future__ import annotations

#: The default workspace: single-team installs live in it (a fixed, well-known id).
DEFAULT = "00000000-0000-4000-8000-000000000001"
