"""Operator SQL: needs attention, bulk verbs' runs, retention pruning and its tables.

May import the other store domains, taskflow.core and taskflow.errors.
"""
