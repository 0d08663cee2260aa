"""runner's benchmarks: figures to track, not tests. Run them all with `python -m bench`."""
