"""Scores and TRL reward functions: eta (paper A §C), structural uncertainty (paper B), shaping."""
