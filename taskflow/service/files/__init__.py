"""Attached files: uploads, signed downloads, retention."""
