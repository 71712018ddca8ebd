"""Benchmarks: measured side by side, reported as ratios; never asserted in tests."""
