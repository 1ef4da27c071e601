"""normkit: the example home repository of the rms-norm family."""
