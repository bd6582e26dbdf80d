"""Workspaces (tenants): their typed refusals (docs/workspaces.md)."""
