"""Conditions and audiences as expressions: the tree and its text, ``expr``, its data form, ``who``.

May import taskflow.core.definition's leaf modules and taskflow.errors (pure).
"""
