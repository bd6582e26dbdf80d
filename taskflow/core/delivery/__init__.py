"""What leaves the house: the event catalog, notification states and recipients, redaction.

May import the other core domains and taskflow.errors (pure).
"""
