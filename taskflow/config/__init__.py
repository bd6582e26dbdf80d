"""Settings from the environment: one Settings value, and its e-mail and webhook parts.

May import taskflow.errors only; every layer may import it.
"""
