"""The pure core: data, hashing, validation and folds, with no IO, clock or randomness.

Everything in this package is a deterministic function of its inputs, which is what
lets a crashed Worker's Run be recovered by replaying the log: the same records always
fold to the same state. A test fails if a module here imports anything that could break
that (asyncio, sockets, clocks, randomness, or any other part of ``psych_runtime``).
"""
