"""Random domino tilings of a rectangle, shared by the dominosa and magnets generators.

Why our own code: no library in the stack (networkx, OR-Tools) samples a random perfect matching of a grid graph
cheaply; a randomised depth-first tiling with backtracking is a few lines and fast for the sizes used here
(at most a few hundred cells). Not uniform over tilings, which a puzzle generator does not need (the collection's
``laydomino.c`` is not uniform either). Source: reasonshape choice.
"""

from __future__ import annotations

import random

from reasonshape.errors import GenerationError

__all__ = ["random_domino_tiling"]


def random_domino_tiling(w: int, h: int, rng: random.Random) -> list[int]:
    """A random tiling of a ``w x h`` rectangle by dominoes (one singleton cell when ``w*h`` is odd).

    Parameters
    ----------
    w, h : int
        Width (columns) and height (rows), both >= 1.
    rng : random.Random
        Source of randomness; the result is a deterministic function of its state.

    Returns
    -------
    list of int
        ``partner`` of length ``w*h`` over row-major 0-based cell indices: ``partner[i]`` is the other cell of
        ``i``'s domino, or ``i`` itself for the singleton (odd area only; it lies on the majority colour of the
        checkerboard, so the rest can always be tiled).

    Raises
    ------
    GenerationError
        Only if no tiling exists, which cannot happen for a rectangle (kept as a guard).
    """
    wh = w * h
    partner = [-1] * wh
    if wh % 2:
        majority = [i for i in range(wh) if ((i // w) + (i % w)) % 2 == 0]
        s = rng.choice(majority)
        partner[s] = s

    def first_free(start: int) -> int:
        i = start
        while i < wh and partner[i] != -1:
            i += 1
        return i

    # Iterative DFS: each frame is (cell, remaining options); cells are taken in row-major order, so a free cell
    # only ever pairs to its right or below.
    stack: list[tuple[int, list[int]]] = []
    i = first_free(0)
    while i < wh:
        opts = []
        if i % w + 1 < w and partner[i + 1] == -1:
            opts.append(i + 1)
        if i + w < wh and partner[i + w] == -1:
            opts.append(i + w)
        rng.shuffle(opts)
        while True:
            if opts:
                j = opts.pop()
                partner[i], partner[j] = j, i
                stack.append((i, opts))
                i = first_free(i + 1)
                break
            # dead end: undo the previous placement and try its next option
            if not stack:
                raise GenerationError(f"no domino tiling of a {w}x{h} rectangle")
            i, opts = stack.pop()
            j = partner[i]
            partner[i] = partner[j] = -1
    return partner
