"""service layer (see docs/architecture.md)."""
