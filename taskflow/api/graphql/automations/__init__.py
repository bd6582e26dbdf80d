"""Automations in GraphQL: list, create, validate, publish, pause, resume, simulate."""
