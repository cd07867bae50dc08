"""vegaskit analysis package: metrics, the Samios-Vernon model, trace parsing and plots."""
