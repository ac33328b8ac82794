"""The deduction engine: traces with a known claim graph (METHOD.md §D, reasonshape's own).

The engine solves an instance by propagation over the puzzle's local constraints (:meth:`Puzzle.units`), writes
each step as sentences in the puzzle's claim schema (:meth:`Puzzle.claim_text`) citing its premises, and records
the TRUE claim graph as it writes: every written claim is a node with its sentence index and exact span, and its
premises are exactly the written claims the step used. It works for every puzzle through the protocol, with no
per-puzzle code.

Knowledge = the written claims only. A variable's candidates are its domain minus its written eliminations (or its
written value). A step on unit ``U`` enumerates the assignments of ``U`` allowed by the candidates and keeps the
supported values; its premises are the written values and eliminations of ``U``'s variables and ``U``'s given
premises (a given never written becomes a placeholder node, as in extraction).

When no unit makes progress (global rules such as connectivity, or deductions that need case analysis), the engine
makes a hypothesis: it supposes a wrong candidate, propagates until a unit has no allowed assignment, and writes the
refutation ("..., so (r,c) is not v"). If no hypothesis fails within the budget, it states the solution's value of
the most constrained variable, citing every unit containing it (``directly`` justified by the global rules).

Styles
------
``focused``
    Only what the solution needs: one sentence per step naming the unit; no restatements, no hypotheses except
    when propagation is stuck.
``verbose``
    Focused, plus re-checking: every sentence's conclusions (values, eliminations, hypotheses and their tentative
    steps, refutations) are double-checked right after they are written ("Double-checking: (r,c) is v.", a
    restatement that later steps cite), and the finished grid's C* values are restated again before the answer.
``exploratory``
    The verbose double-checks, plus exploration: dead ends (suppose a wrong candidate, follow up to
    ``_DEAD_END_DEPTH`` tentative consequences, backtrack with nothing concluded) at a random 40% of the steps,
    and up to three extra hypotheses refuted by contradiction.

Why these orders eta (METHOD.md §C-D; reasonshape calibration). eta = (ln|V| - H_str) / (ln|V| - ln|C*|). A
double-check v' of claim v sits in series (v -> v' -> the later uses of v), so m(v') = m(v) and no other mass
changes. Doubling every node that way keeps ln|V| - H_str (p becomes (p/2, p/2)) and adds ln 2 to the denominator:
eta strictly drops whenever it is positive. The verbose style doubles every written claim except placeholders and
the answer block, so it stays close to that case whatever the mix of claims (double-checking only decided values,
the earlier design, raised eta on elimination-heavy traces such as signpost's, where values carry the most mass).
A dead end adds a new source (its tentative head) and tentative claims that cite committed claims and end in
sinks: mass drawn away from the solution claims into waste, which lowers eta further, except on the smallest
instances, where the new source takes a large share of the initial mass. With
``benchmarks/bench_extraction.py --n 2`` the order focused > verbose > exploratory holds on 97% (163) of the 168
instances (target 90%); the misses are trivial instances (bridges trivial has eta = 0 in every style).

Every trace ends with the final answer in an ``<answer>`` block (its claims restate the solution).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from reasonshape.envs.base import Claim, ClaimLabel, Instance, Puzzle, check_instance
from reasonshape.envs.registry import as_puzzle
from reasonshape.errors import ConfigError
from reasonshape.extraction.deterministic import _HYPOTHESIS_MAX_SENTENCES, PuzzleContext

__all__ = ["STYLES", "KnownTrace", "deduce_trace"]

STYLES = ("focused", "verbose", "exploratory")
_ENUM_CAP = 20000
#: Exploratory style: chance per step of a dead end (suppose a wrong candidate, follow it, backtrack), its depth in
#: steps, and the chance per step of a hypothesis refuted by contradiction (at most ``_MAX_RANDOM_HYPOTHESES``).
_DEAD_END_P = 0.4
_DEAD_END_DEPTH = 3
_HYPOTHESIS_P = 0.15
_MAX_RANDOM_HYPOTHESES = 3
#: Tentative steps written per hypothesis, the same in every style (so verbose = focused + double-checks): few
#: enough that a double-checked block (head, steps, their double-checks, the refutation: 2 + 2k + 1 sentences)
#: stays inside the extractor's hypothesis window of ``_HYPOTHESIS_MAX_SENTENCES`` sentences.
_HYPOTHESIS_STEPS = (_HYPOTHESIS_MAX_SENTENCES - 3) // 2
#: Final re-check: values restated per sentence.
_RECHECK_GROUP = 8


@dataclass
class KnownTrace:
    """A generated trace and its true claim graph.

    Attributes
    ----------
    text : str
        The completion text (reasoning, then the ``<answer>`` block).
    graph : ClaimGraph
        The true claim graph (node ids in trace order; spans are exact offsets into ``text``).
    style : str
        One of :data:`STYLES`.
    solved : bool
        Whether propagation alone (with hypotheses) reached the solution without a direct statement.
    n_sentences : int
        Number of sentences written (the answer block's rows included).
    """

    text: str
    graph: Any
    style: str
    solved: bool
    n_sentences: int


@dataclass
class _W:
    """The trace writer: text, sentences and the true graph under construction."""

    parts: list[str] = field(default_factory=list)
    length: int = 0
    n_sent: int = 0
    nodes: list[tuple] = field(default_factory=list)  # (claim, sentence, span, label, origin, static, order)
    edges: list[tuple[int, int, str]] = field(default_factory=list)

    def _put(self, s: str) -> None:
        self.parts.append(s)
        self.length += len(s)

    def text(self) -> str:
        return "".join(self.parts)


class _Engine:
    def __init__(self, puzzle: Puzzle, instance: Instance, style: str, rng: random.Random):
        self.p, self.inst, self.style, self.rng = puzzle, instance, style, rng
        self.ctx = PuzzleContext(puzzle, instance)
        self.domains = self.ctx.reader.domains
        self.units = self.ctx.units
        self.solution = puzzle.solve(instance, 2).solutions[0]
        self.w = _W()
        self.value_node: dict[Hashable, int] = {}
        self.value: dict[Hashable, Any] = {}
        self.neg: dict[Hashable, dict[Any, int]] = {v: {} for v in self.domains}
        self.last_occ: dict[Claim, int] = {}
        self.solved_by_propagation = True
        self._memo: dict = {}
        self.random_hypotheses = 0
        for g in set(self.ctx.given_value.values()):
            for var, val in self.ctx.effects(g)[0]:
                self.value[var] = val

    # ------------------------------------------------------------------ knowledge
    def cands(self, var, overlay=None) -> set:
        if overlay is not None and var in overlay:
            return overlay[var]
        if var in self.value:
            return {self.value[var]}
        return {x for x in self.domains[var] if x not in self.neg[var]}

    def support(self, unit, overlay=None) -> dict | None:
        """Values of each unit variable that appear in some allowed assignment; None = no assignment (conflict).
        Memoised on the unit and its variables' candidate sets."""
        vars_ = unit.variables
        cand = [sorted(self.cands(v, overlay), key=str) for v in vars_]
        key = (id(unit), tuple(tuple(c) for c in cand))
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = out = self._support(unit, cand)
        return out

    def _support(self, unit, cand) -> dict | None:
        vars_ = unit.variables
        size = 1
        for c in cand:
            size *= max(1, len(c))
            if size > _ENUM_CAP:
                return {}
        sup = [set() for _ in vars_]
        alldiff = unit.kind == "alldiff"
        any_ok = False
        for combo in itertools.product(*cand):
            if alldiff and len(set(combo)) != len(combo):
                continue
            if unit.allowed(combo):
                any_ok = True
                for s, x in zip(sup, combo, strict=True):
                    s.add(x)
        if not any_ok:
            return None
        return {v: s for v, s in zip(vars_, sup, strict=True)}

    def unit_premise_nodes(self, unit, exclude=(), hyp: dict | None = None) -> list[int]:
        """The written knowledge a step on ``unit`` uses: for each other variable its (tentative, inside a
        hypothesis) value claim, else its given value, else its written eliminations; plus the unit's given
        premises (placeholders when never written)."""
        out = []
        for v in unit.variables:
            if v in exclude:
                continue
            if hyp and v in hyp:
                out.append(hyp[v])
            elif v in self.value_node:
                out.append(self.latest(self.value_node[v]))
            elif v in self.ctx.given_value:
                out.append(self.occurrence(self.ctx.given_value[v]))
            else:
                out.extend(self.eliminations(v))
        for g in unit.premises:
            out.append(self.occurrence(g))
        return out

    def eliminations(self, var) -> list[int]:
        """The latest occurrence of each written elimination of ``var`` (premises of any step about ``var``)."""
        return [self.latest(n) for n in self.neg[var].values()]

    def latest(self, node: int) -> int:
        """The latest occurrence of the claim of ``node`` (a restatement supersedes the original as premise)."""
        return self.last_occ[self.w.nodes[node][0]]

    def occurrence(self, claim: Claim) -> int:
        """The latest occurrence of ``claim``, or a new placeholder (a premise the trace never states)."""
        if claim in self.last_occ:
            return self.last_occ[claim]
        return self.node(claim, None, "placeholder", placeholder=True)

    # ------------------------------------------------------------------ graph
    def node(self, claim, span, origin, premises=(), tentative=False, placeholder=False, restate=False) -> int:
        sent = self.w.n_sent
        static = claim in self.ctx.givens
        label = ClaimLabel.TENTATIVE if tentative else self.ctx.label(claim)
        order = (sent, 0 if placeholder else 1, len(self.w.nodes))
        self.w.nodes.append((claim, sent, span, label, origin, static, order))
        i = len(self.w.nodes) - 1
        if restate and claim in self.last_occ:
            self.w.edges.append((self.last_occ[claim], i, "restatement"))
        for p in dict.fromkeys(premises):
            self.w.edges.append((p, i, "inference"))
        self.last_occ[claim] = i
        return i

    def say(self, pieces: list, conclusions=None, tentative: bool = False) -> list[int]:
        """Write one sentence and add its claim occurrences to the true graph.

        ``pieces``: plain ``str`` (scanned with the puzzle's schema, so clues named in a unit such as "the clue 3
        at (2,4)" are occurrences too), ``("restate", claim)`` and ``("conclude", claim)``. ``conclusions()`` is
        called after the sentence's other occurrences exist and returns the premises of the conclusions.
        Returns the conclusions' node ids.
        """
        segs: list = []
        for p in pieces:
            if isinstance(p, str):
                pos = 0
                for m in self.ctx.reader.read(p):
                    if m.claim.kind == "_grid_row" or m.start < pos:  # a bare grid row is not a claim here
                        continue
                    segs.append(p[pos:m.start])
                    segs.append(("mention", m.claim, p[m.start:m.end]))
                    pos = m.end
                segs.append(p[pos:])
            else:
                segs.append((p[0], p[1], self.p.claim_text(p[1])))
        spans = []
        for seg in segs:
            if isinstance(seg, str):
                self.w._put(seg)
            else:
                start = self.w.length
                self.w._put(seg[2])
                spans.append((seg[0], seg[1], (start, self.w.length)))
        self.w._put(" ")
        for kind, claim, span in spans:
            if kind == "conclude":
                continue
            if claim in self.last_occ:
                self.node(claim, span, "stated", tentative=tentative, restate=True)
            else:
                self.node(claim, span, "stated" if claim in self.ctx.givens else "directly_stated",
                          tentative=tentative)
        prem = list(dict.fromkeys(conclusions())) if conclusions else []
        ids = []
        for kind, claim, span in spans:
            if kind != "conclude":
                continue
            if claim in self.last_occ:  # a repeated claim: restatement edge only (paper A §B step 3)
                ids.append(self.node(claim, span, "stated", tentative=tentative, restate=True))
            else:
                ids.append(self.node(claim, span, "stated" if prem else "directly_stated", premises=prem,
                                     tentative=tentative))
        self.w.n_sent += 1
        return ids

    # ------------------------------------------------------------------ steps
    def find_step(self, overlay=None):
        """The next deduction, simplest first: ``("step", unit, changes)`` deciding a variable from one unit;
        ``("cell", var, value, units)`` deciding a variable from all its units together; ``("step", ...)``
        eliminating candidates; ``("conflict", unit, None)``; or ``None`` when nothing progresses."""
        first_elim = None
        sups = []
        for unit in self.units:
            sup = self.support(unit, overlay)
            if sup is None:
                return ("conflict", unit, None)
            sups.append(sup)
            changes = {v: x for v, x in sup.items() if x and x != self.cands(v, overlay)}
            if any(len(x) == 1 for x in changes.values()):
                return ("step", unit, changes)
            if changes and first_elim is None:
                first_elim = ("step", unit, changes)
        for var in self.domains:
            cur = self.cands(var, overlay)
            if len(cur) < 2:
                continue
            inter = set(cur)
            used = []
            for ui in self.ctx.units_of.get(var, ()):
                sup = sups[ui]
                if sup and var in sup and sup[var] != cur:
                    inter &= sup[var]
                    used.append(self.units[ui])
            if len(inter) == 1 and len(used) >= 2:
                return ("cell", var, next(iter(inter)), used)
        return first_elim

    def step_claims(self, changes, overlay=None) -> tuple[list[Claim], Hashable]:
        """Claims a step writes: the value of a decided variable, else up to three eliminations of one."""
        for v, x in changes.items():
            if len(x) == 1:
                return [self.p.value_claim(v, next(iter(x)), True)], v
        v, x = next(iter(changes.items()))
        removed = sorted(self.cands(v, overlay) - x, key=str)
        return [self.p.value_claim(v, r, False) for r in removed[:3]], v

    def double_check(self, claims: list[Claim], ids: list[int], tentative: bool = False) -> list[int]:
        """Verbose and exploratory styles: restate what a sentence just concluded ("Double-checking: ..."), right
        after it, once per claim. Later steps cite the restatement (:meth:`latest`), so it sits in series between
        the claim and its uses. Returns the node ids standing for ``claims`` afterwards (unchanged for focused)."""
        if self.style == "focused" or not claims:
            return ids
        pieces: list = ["Double-checking: "]
        for k, cl in enumerate(claims):
            pieces += ([" and "] if k else []) + [("restate", cl)]
        self.say(pieces + ["."], tentative=tentative)
        return [self.last_occ[cl] for cl in claims]

    def apply_step(self, unit, changes) -> None:
        """Write one step of ``unit``. Premises: the unit's written knowledge and the target's eliminations. The
        verbose and exploratory styles then double-check its conclusions (:meth:`double_check`)."""
        claims, var = self.step_claims(changes)
        pieces: list = [f"In {unit.name}, "]
        for k, cl in enumerate(claims):
            pieces += ([" and "] if k else []) + [("conclude", cl)]
        pieces.append(".")
        ids = self.say(pieces, lambda: self.unit_premise_nodes(unit, exclude=[var])
                       + self.eliminations(var))
        for cl, i in zip(claims, ids, strict=True):
            self.commit(cl, i)
        self.double_check(claims, ids)

    def apply_cell_step(self, var, value, units) -> None:
        """Decide ``var`` from several units at once: premises are every used unit's written knowledge."""
        def prem():
            out = []
            for u in units:
                out += self.unit_premise_nodes(u, exclude=[var])
            return out + self.eliminations(var)

        cl = self.p.value_claim(var, value, True)
        names = ", ".join(u.name for u in units[:-1]) + f" and {units[-1].name}"
        ids = self.say([f"Combining {names}, ", ("conclude", cl), "."], prem)
        self.commit(cl, ids[0])
        self.double_check([cl], ids)

    def commit(self, claim: Claim, node: int) -> None:
        assigned, denied = self.ctx.effects(claim)
        for var, val in assigned:
            self.value[var] = val
            self.value_node[var] = node
        for var, val in denied:
            self.neg[var][val] = node

    def undecided(self) -> list:
        return [v for v in self.domains if len(self.cands(v)) > 1]

    # ------------------------------------------------------------------ hypotheses
    def follow(self, var, value, budget: int) -> tuple[list, Any]:
        """Suppose ``var = value`` and propagate for at most ``budget`` steps. Returns ``(steps, conflict_unit)``:
        the steps taken, each ``(units, changes, candidates before)``, and the unit of the conflict that stopped
        propagation, ``None`` when it stalled or ran out of budget first."""
        overlay = {var: {value}}
        steps = []
        for _ in range(budget):
            st = self.find_step(overlay)
            if st is None:
                return steps, None
            if st[0] == "conflict":
                return steps, st[1]
            if st[0] == "cell":
                _, v, x, used = st
                st = ("step", used[0], {v: {x}}, used)
            unit, changes = st[1], st[2]
            before = {v: set(self.cands(v, overlay)) for v in changes}
            steps.append((st[3] if len(st) > 3 else [unit], changes, before))
            for v, x in changes.items():
                overlay[v] = set(x)
        return steps, None

    def refutable(self, var, wrong, budget=8):
        """Does supposing var=wrong reach a conflict within ``budget`` steps? Returns (steps, unit) or None."""
        steps, unit = self.follow(var, wrong, budget)
        return None if unit is None else (steps, unit)

    def hypothesis(self) -> bool:
        und = sorted(self.undecided(), key=lambda v: (len(self.cands(v)), str(v)))
        for var in und[:6]:
            truth = self.p.solution_value(self.inst, self.solution, var)
            for wrong in sorted(self.cands(var) - {truth}, key=str):
                res = self.refutable(var, wrong)
                if res is None:
                    continue
                steps, conflict_unit = res
                self.write_hypothesis(var, wrong, steps, conflict_unit)
                return True
        return False

    def write_hypothesis(self, var, wrong, steps, conflict_unit) -> None:
        """"Suppose ...", the tentative chain (at most ``_HYPOTHESIS_STEPS`` steps), then the refutation by the
        conflict in ``conflict_unit`` -- or, with ``conflict_unit=None`` (a dead end), a backtrack that concludes
        nothing. In the verbose and exploratory styles every claim of the block is double-checked."""
        hyp_claim = self.p.value_claim(var, wrong, True)
        head = self.say(["Suppose ", ("conclude", hyp_claim), "."], tentative=True)
        last = self.double_check([hyp_claim], head, tentative=True)
        hyp = {var: last[0]}
        for units, changes, before in steps[:_HYPOTHESIS_STEPS]:
            overlay = {v: before[v] for v in changes}
            claims, v = self.step_claims(changes, overlay)
            claims = claims[:1]

            def prem(units=units, v=v):
                out = []
                for u in units:
                    out += self.unit_premise_nodes(u, exclude=[v], hyp=hyp)
                return out + self.eliminations(v)

            names = ", ".join(u.name for u in units[:-1]) + (" and " if len(units) > 1 else "") + units[-1].name
            last = self.say([f"In {names}, ", ("conclude", claims[0]), "."], prem, tentative=True)
            last = self.double_check(claims, last, tentative=True)
            if claims[0].positive:
                hyp[v] = last[0]
        if conflict_unit is None:
            self.say(["Wait, this does not settle anything yet, so let me backtrack and drop that assumption."])
            return
        neg = hyp_claim.negated()
        ids = self.say([f"That is a contradiction in {conflict_unit.name}, so ", ("conclude", neg), "."],
                       lambda: head + last)
        self.commit(neg, ids[0])
        self.double_check([neg], ids)

    def dead_end(self) -> bool:
        """Exploratory waste: suppose a wrong candidate of a random undecided variable, follow up to
        ``_DEAD_END_DEPTH`` tentative consequences (they cite the committed claims they use, so the dead end draws
        logical mass away from the solution), then backtrack without concluding anything."""
        und = self.undecided()
        if not und:
            return False
        var = self.rng.choice(sorted(und, key=str))
        truth = self.p.solution_value(self.inst, self.solution, var)
        wrong = self.rng.choice(sorted(self.cands(var) - {truth}, key=str))
        steps, _ = self.follow(var, wrong, _DEAD_END_DEPTH)  # a conflict ends it too, unrefuted: a dead end
        self.write_hypothesis(var, wrong, steps, None)
        return True

    def direct(self) -> None:
        """No propagation or hypothesis progresses: state the solution value of the most constrained variable."""
        self.solved_by_propagation = False
        var = min(self.undecided(), key=lambda v: (len(self.cands(v)), str(v)))
        x = self.p.solution_value(self.inst, self.solution, var)

        def prem():
            out = []
            for ui in self.ctx.units_of.get(var, ()):
                out += self.unit_premise_nodes(self.units[ui], exclude=[var])
            return out + self.eliminations(var)

        cl = self.p.value_claim(var, x, True)
        ids = self.say(["By the puzzle's global rules, considering everything found so far, ", ("conclude", cl),
                        "."], prem)
        self.commit(cl, ids[0])
        self.double_check([cl], ids)

    def knowledge(self) -> int:
        return len(self.value) + sum(len(n) for n in self.neg.values())

    def run(self, max_steps: int = 4000) -> None:
        self.say(["Let me solve this step by step, using the (row, column) coordinates of the prompt."])
        steps = 0
        while self.undecided() and steps < max_steps:
            steps += 1
            before = self.knowledge()
            if self.style == "exploratory" and self.rng.random() < _DEAD_END_P and self.dead_end():
                continue
            if self.style == "exploratory" and self.random_hypotheses < _MAX_RANDOM_HYPOTHESES \
                    and self.rng.random() < _HYPOTHESIS_P and self.hypothesis():
                self.random_hypotheses += 1
                continue
            st = self.find_step()
            if st is not None and st[0] == "step":
                self.apply_step(st[1], st[2])
            elif st is not None and st[0] == "cell":
                self.apply_cell_step(*st[1:])
            elif not self.hypothesis():
                self.direct()
            if self.knowledge() == before:  # a step that taught nothing: state a solution value instead
                self.direct()
                if self.knowledge() == before:
                    raise RuntimeError(f"{self.p.name}: the deduction engine cannot progress (claims do not map to "
                                       f"variables: check value_claim / variables)")
        if self.style == "verbose":
            self.verbose_recheck()
        self.final_answer()

    def verbose_recheck(self) -> None:
        """Re-check the finished grid before answering: restate every decided value that belongs to C*, in groups of
        ``_RECHECK_GROUP`` (each restatement cites the previous occurrence; the answer then restates these)."""
        self.say(["Now let me verify the finished grid, value by value."])
        c_star = self.p.solution_claims(self.inst)
        decided = [v for v in sorted(self.value_node, key=str) if self.w.nodes[self.value_node[v]][0] in c_star]
        for k in range(0, len(decided), _RECHECK_GROUP):
            pieces: list = ["Checking: "]
            for j, v in enumerate(decided[k:k + _RECHECK_GROUP]):
                pieces += ([", "] if j else []) + [("restate", self.w.nodes[self.latest(self.value_node[v])][0])]
            self.say(pieces + [", which is consistent."])

    def final_answer(self) -> None:
        """The answer block; for grid answers each row line restates that row's value claims."""
        body = self.p.format_answer(self.inst, self.solution)
        self.w._put("\n\n<answer>\n")
        self.w.n_sent += 1  # the "<answer>" line is a sentence of its own
        lines = body.splitlines()
        grid_rows = self.ctx.reader.grid and len(lines) == self.ctx.reader.rows
        for r, line in enumerate(lines, 1):
            claims = []
            if grid_rows:
                claims = [self.p.value_claim((r, c), self.p.solution_value(self.inst, self.solution, (r, c)))
                          for c in range(1, self.ctx.reader.cols + 1) if (r, c) in self.domains]
            else:
                claims = [m for m, _, _ in self.p.parse_claim_text(self.inst, line)]
            start = self.w.length
            self.w._put(line)
            span = (start, self.w.length)
            for cl in claims:
                if cl in self.last_occ:
                    self.node(cl, span, "stated", restate=True)
                else:
                    self.node(cl, span, "directly_stated")
            self.w._put("\n")
            self.w.n_sent += 1
        self.w._put("</answer>")

    def graph(self):
        from reasonshape.extraction.graph import ClaimGraph

        order = sorted(range(len(self.w.nodes)), key=lambda i: self.w.nodes[i][6])
        new = {old: k for k, old in enumerate(order)}
        nodes = [self.w.nodes[i][:6] for i in order]
        edges = sorted({(new[a], new[b], kind) for a, b, kind in self.w.edges})
        return ClaimGraph.from_records(nodes, edges, validate=True)


def deduce_trace(puzzle: Puzzle | str, instance: Instance, style: str = "focused", seed: int = 0) -> KnownTrace:
    """Solve ``instance`` by propagation and write a trace with its true claim graph.

    Parameters
    ----------
    puzzle, instance
        A puzzle (or its registry name, e.g. ``"tents"``) and a uniquely solvable instance of it.
    style : {"focused", "verbose", "exploratory"}
    seed : int
        Seeds the exploratory style's choices (the other styles are deterministic).

    Raises
    ------
    ConfigError
        Unknown style; ``puzzle`` neither a Puzzle nor a name; ``instance`` not an instance of ``puzzle``.
    UnknownPuzzleError
        ``puzzle`` names no implemented puzzle.
    NoUniqueSolutionError
        The instance is not uniquely solvable.
    """
    puzzle = as_puzzle(puzzle)
    check_instance(puzzle, instance)
    if style not in STYLES:
        raise ConfigError(f"style must be one of {STYLES}, got {style!r}")
    puzzle.unique_solution(instance)
    eng = _Engine(puzzle, instance, style, random.Random(f"{seed}|{style}"))
    eng.run()
    return KnownTrace(eng.w.text(), eng.graph(), style, eng.solved_by_propagation, eng.w.n_sent)
