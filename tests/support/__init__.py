"""Test infrastructure shared by the repository tests and the benchmarks: scratch stores
on every backend and a Worker in its own process."""
