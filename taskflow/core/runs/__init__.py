"""Runs and slots, decided purely: given a run, its slots, a happening and ``now``,
what changes, what goes on the timeline. The service persists what comes back.

Modules: :mod:`.model` (views and outcomes), :mod:`.refusals` (typed refusals),
:mod:`.slots` (claim, release, assign: slot-only moves), :mod:`.opening`
(instantiating a state's slots), :mod:`.engine` (the entry points: start,
deposit, subject changes, moves, cancellation), :mod:`.decision` (the working
copy one happening is decided on), :mod:`.states` (entering, leaving and the
settle loop), :mod:`.pausing` (what a pausing state holds).
"""
