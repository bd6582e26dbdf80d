"""worker layer (see ARCHITECTURE.md)."""
