"""api layer (see ARCHITECTURE.md)."""
