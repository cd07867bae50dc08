"""`make bench`'s stages, one module each (docs/DESIGN.md §9.1); the entry point
that runs them and writes the report is vegaskit.cli.bench."""
