"""Read-only views computed from a Run's log: status, answer, thread and report.

Each projection is a plain function of records (or of the state the reducer folded
from them). None of them is ever stored, so two reads of the same log can never
disagree, and a reader that caches one only needs the log's head to know it is fresh.
"""
