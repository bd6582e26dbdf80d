"""Who may see and do what: access checks, principals, tokens, callers, report sessions.

May import taskflow.service.common, taskflow.store, taskflow.core, settings, clock, errors.
"""
