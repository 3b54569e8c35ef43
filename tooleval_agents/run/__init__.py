"""Running an experiment: the spec, the example selection, epochs, the runner and what it records
of each model call."""
