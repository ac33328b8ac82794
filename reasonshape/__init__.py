"""reasonshape: RLVR on Simon Tatham's grid logic puzzles.

Subpackages: :mod:`reasonshape.envs` (puzzles), :mod:`reasonshape.extraction` (claim graphs),
:mod:`reasonshape.rewards` (eta, structural uncertainty, TRL reward functions), :mod:`reasonshape.training`
(backends, GRPO, eval).
"""

__version__ = "0.1.0"
