"""The staff console at ``/console`` (docs/console.md)."""
