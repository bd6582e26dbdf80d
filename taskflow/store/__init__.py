"""store layer (see ARCHITECTURE.md)."""
