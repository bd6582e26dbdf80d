"""Operator concerns, decided purely: what needs attention, how long ended runs are kept.

May import the other core domains and taskflow.errors (pure).
"""
