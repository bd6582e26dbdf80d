"""A run's history read at an instant: state visits, literal or after undos (pure).

May import the other core domains and taskflow.errors (pure).
"""
