"""Timing rules of a definition that end things: a slot's expiry and a run's deadline, with
the part they share (``timing``). Pure data and checks; imports core/clocks and the rest of
core/definition only."""
