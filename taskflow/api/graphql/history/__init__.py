"""GraphQL of history: ``Run.stateAt``, ``Run.history``, ``stateCounts``.

May import the other GraphQL rooms, the service and the core.
"""
