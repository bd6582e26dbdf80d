"""Conditions and audiences as expressions: ``expr``, its text and data forms, ``who``.

May import taskflow.core.definition's leaf modules and taskflow.errors (pure).
"""
