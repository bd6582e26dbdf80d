"""Core shared by every domain: refusals and their codes, status tables, unit of work, durations.

May import taskflow.errors and the standard library only (pure).
"""
