"""History SQL: the state spans the timeline's trigger keeps, and what reads them.

May import the other store domains, taskflow.core and taskflow.errors.
"""
