"""Pure core: no I/O, no clock reads, no database, no HTTP, no asyncio.

Everything here is a function of its arguments; ``now`` is always passed in.
"""
