"""Reading runs for answers: alignment, diff and detectors over trajectories (never the files)."""
