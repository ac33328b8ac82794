"""Claim extraction: from a reasoning trace to a verified claim graph (paper A §B)."""
