"""Analysis: metrics, the Samios-Vernon model, plots, reading run records."""
