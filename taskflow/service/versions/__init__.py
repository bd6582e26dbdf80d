"""Definitions and versions: loading definitions, recording deployments, run migrations.

May import taskflow.service (other domains' public functions), taskflow.store, taskflow.core.
"""
