"""CP-SAT and Ctrl-C: after the puzzles' solvers have run, SIGINT still raises KeyboardInterrupt in Python.

CP-SAT's default ``catch_sigint_signal`` resets SIGINT to the default action after each solve, so a Ctrl-C then killed
the process (eval, train and ablate record interrupted sessions from the KeyboardInterrupt). A real signal in a real
subprocess: the handler lives at the C level, where an in-process test cannot see it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# tents goes through _solver.enumerate_solutions, solo's exact verify_claim through _solo_search.cp_feasible; lightup,
# towers, filling and range build their own generation solvers
SCRIPT = textwrap.dedent("""
    import os, signal, time
    from reasonshape import envs
    from reasonshape.envs.base import Claim
    for name in ("tents", "lightup", "towers", "filling", "range"):
        envs.get(name).generate("trivial", seed=0)
    solo = envs.get("solo")
    inst = solo.parse_game_id("2x2:p")  # empty grid, not unique: verify_claim asks CP-SAT
    solo.verify_claim(inst, Claim("value", ((1, 1),), 1))
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(10)
        print("no KeyboardInterrupt")
    except KeyboardInterrupt:
        print("KeyboardInterrupt")
""")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_after_cp_sat_solves_raises_keyboard_interrupt():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # the child starts with SIGINT at Python's default handler, as from a terminal
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=env,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip() == "KeyboardInterrupt"
