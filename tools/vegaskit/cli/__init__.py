"""The entry points of make results, demo, bench, model-validation and vm-test."""
