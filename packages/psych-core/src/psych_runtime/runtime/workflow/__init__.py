"""The workflow engine's building blocks: step ids, data paths and conditions, retries.

Each module is a pure function of its arguments, so a Worker replaying a Run after a
crash derives exactly the ids, values and decisions the first Worker did.
"""
