"""service layer (see ARCHITECTURE.md)."""
