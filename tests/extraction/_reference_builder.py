"""Reference implementation of deterministic graph building, kept for testing only.

This is a frozen copy of the straightforward (pre-optimisation) logic of
:func:`reasonshape.extraction.deterministic.build_graph` and its ``_Builder``, in the spirit of networkx's
``_pagerank_python``: slow, plain, easy to audit. ``tests/extraction/test_extraction_golden.py`` asserts that the
optimised module builds graphs identical to this one on the same mentions. It derives its own per-instance tables
(units, claim effects, givens) from the puzzle, so it shares nothing with the optimised ``PuzzleContext`` except the
schema reader (both paths are fed the same mentions) and the sentence-level cue patterns.

Do not optimise this file: its value is being obviously equal to the documented rules of
``reasonshape/extraction/deterministic.py`` (module docstring, steps 2-5).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import networkx as nx

from reasonshape.envs.base import Claim, ClaimLabel
from reasonshape.extraction.deterministic import (
    CONDITIONAL_CUE,
    CONSEQUENCE_START,
    RETRACTION_CUE,
    TENTATIVE_CUE,
    ExtractionResult,
)
from reasonshape.extraction.graph import ClaimGraph
from reasonshape.extraction.labels import label_claim

__all__ = ["ReferenceContext", "reference_read_mentions", "reference_build_graph", "reference_from_records",
           "reference_merge_static"]

_UNIT_TOKEN = re.compile(r"\b(row|column|col|box|block|cage|region|clue|island|line|group)\s*(\d{1,3})\b|"
                         r"\(\s*(\d{1,2})\s*,\s*(\d{1,2})\s*\)", re.IGNORECASE)
_HYPOTHESIS_MAX_SENTENCES = 12


def _unit_tokens(text: str) -> set:
    toks = set()
    for m in _UNIT_TOKEN.finditer(text):
        if m.group(1):
            word = m.group(1).lower()
            toks.add(("column" if word == "col" else word, int(m.group(2))))
        else:
            toks.add(("cell", int(m.group(3)), int(m.group(4))))
    return toks


def _contains_phrase(text: str, phrase: str) -> bool:
    i = text.find(phrase)
    while i >= 0:
        j = i + len(phrase)
        if j >= len(text) or not text[j].isalnum():
            return True
        i = text.find(phrase, i + 1)
    return False


class ReferenceContext:
    """Per-instance tables rebuilt from scratch (units, claim effects, givens), plus the shared schema reader."""

    def __init__(self, ctx):
        self.puzzle, self.instance, self.reader = ctx.puzzle, ctx.instance, ctx.reader
        self.units = self.puzzle.units(self.instance)
        self.units_of: dict[Any, list[int]] = defaultdict(list)
        for i, u in enumerate(self.units):
            for v in u.variables:
                self.units_of[v].append(i)
        self.assigns: dict[Claim, list] = defaultdict(list)
        self.denies: dict[Claim, list] = defaultdict(list)
        for var, dom in self.reader.domains.items():
            for val in dom:
                self.assigns[self.puzzle.value_claim(var, val, True)].append((var, val))
                self.denies[self.puzzle.value_claim(var, val, False)].append((var, val))
        self.assigns, self.denies = dict(self.assigns), dict(self.denies)
        self.unit_names = [u.name.lower() for u in self.units]
        self.unit_keys = [frozenset(_unit_tokens(u.name)) for u in self.units]
        self.tokenless_units = {i for i, k in enumerate(self.unit_keys) if not k}
        self.units_by_token: dict[Any, list[int]] = defaultdict(list)
        for i, keys in enumerate(self.unit_keys):
            for k in keys:
                self.units_by_token[k].append(i)
        self.givens = frozenset(self.puzzle.given_claims(self.instance))
        self.given_value = {}
        for g in self.givens:
            for var, _ in self.assigns.get(g, ()):
                self.given_value[var] = g
        self._labels: dict[Claim, ClaimLabel] = {}

    def effects(self, claim):
        a = self.assigns.get(claim)
        if a:
            return a, []
        return [], self.denies.get(claim, [])

    def variables_of(self, claim):
        a, d = self.effects(claim)
        if a or d:
            return tuple(dict.fromkeys(v for v, _ in a + d))
        return tuple(c for c in claim.cells if c in self.reader.domains)

    def units_of_claim(self, claim):
        out: set[int] = set()
        for v in self.variables_of(claim):
            out.update(self.units_of.get(v, ()))
        if not out:
            out.update(i for i, u in enumerate(self.units) if claim in u.premises)
        return out

    def named_units(self, text):
        low = text.lower()
        toks = _unit_tokens(low)
        cands = {i for t in toks for i in self.units_by_token.get(t, ())} | self.tokenless_units
        return {i for i in cands if _contains_phrase(low, self.unit_names[i])}

    def label(self, claim):
        lab = self._labels.get(claim)
        if lab is None:
            lab = self._labels[claim] = label_claim(self.puzzle, self.instance, claim)
        return lab


@dataclass
class _Node:
    claim: Claim
    sentence: int
    span: tuple[int, int] | None
    label: ClaimLabel
    origin: str
    static: bool
    order: tuple


def reference_read_mentions(ctx, sentences) -> list:
    """``read_mentions`` without its repeated-sentence memo: every sentence read by the schema."""
    mentions = [ctx.reader.read(s.text, s.start) for s in sentences]
    separators = [ctx.reader.grid and ctx.reader.is_separator_row(s.text) for s in sentences]
    ctx.reader.resolve_grid_rows(mentions, separators)
    return mentions


def reference_build_graph(ctx, text, sentences, mentions, premises=None, mode="deterministic") -> ExtractionResult:
    """Steps 2-5 of the deterministic extractor, plain version (same signature as ``build_graph``)."""
    rctx = ReferenceContext(ctx)
    b = _Builder(rctx, premises)
    tentative_s, retract_s = [], []
    prev_end = 0
    for s, ms in zip(sentences, mentions, strict=True):
        gap = text[prev_end:s.start]
        prev_end = s.end
        is_tent = bool(TENTATIVE_CUE.search(s.text))
        is_retr = bool(RETRACTION_CUE.search(s.text))
        if is_tent:
            tentative_s.append(s.index)
        if is_retr:
            retract_s.append(s.index)
        if b.hyp_open and ("\n\n" in gap or s.index - b.hyp_start >= _HYPOTHESIS_MAX_SENTENCES):
            b.close_hypothesis(refuted=False)
        if is_retr and b.hyp_open:
            b.close_hypothesis(refuted=True)
            b.sentence(s, ms, refutation=True)
        elif is_tent and ms:
            b.open_hypothesis(s.index)
            b.sentence(s, ms, head=True)
        elif CONDITIONAL_CUE.search(s.text) and ms:
            tentative_s.append(s.index)
            b.sentence(s, ms, conditional=True)
        else:
            b.sentence(s, ms)
    return ExtractionResult(b.to_graph(), sentences, text, tentative_s, retract_s, mode=mode)


class _Builder:
    def __init__(self, ctx, overrides=None):
        self.ctx = ctx
        self.overrides = overrides or {}
        self.node_of_key = {}
        self.nodes: list[_Node] = []
        self.edges: set = set()
        self.last_occ: dict = {}
        self.value_node: dict = {}
        self.neg_nodes = defaultdict(dict)
        self.hyp_open = False
        self.hyp_start = -1
        self.hyp_heads: list[int] = []
        self.hyp_value: dict = {}
        self.hyp_last_sentence: list[int] = []
        self.refutable: list[int] = []
        self.prev_sentence_nodes: list[int] = []
        self.prev_text = ""

    def open_hypothesis(self, sentence):
        if self.hyp_open:
            self.close_hypothesis(refuted=False)
        self.hyp_open, self.hyp_start = True, sentence
        self.hyp_heads, self.hyp_value, self.hyp_last_sentence = [], {}, []

    def close_hypothesis(self, refuted):
        self.refutable = (self.hyp_heads + self.hyp_last_sentence) if refuted else []
        self.hyp_open = False
        self.hyp_value = {}

    def _add(self, claim, sentence, span, origin, static, tentative, order):
        label = ClaimLabel.TENTATIVE if tentative else self.ctx.label(claim)
        self.nodes.append(_Node(claim, sentence, span, label, origin, static, order))
        return len(self.nodes) - 1

    def _occurrence(self, claim, sentence, order):
        if claim in self.last_occ:
            return self.last_occ[claim]
        i = self._add(claim, sentence, None, "placeholder", claim in self.ctx.givens, False, order)
        self.last_occ[claim] = i
        return i

    def sentence(self, s, ms, head=False, refutation=False, conditional=False):
        ctx = self.ctx
        tentative = self.hyp_open or conditional
        seen_before = {id(m): (m.claim in self.last_occ) for m in ms}
        ordered = sorted(range(len(ms)),
                         key=lambda j: (0 if (seen_before[id(ms[j])] or ms[j].claim in ctx.givens) else 1,
                                        ms[j].start))
        this_nodes = []
        local_pool = []
        if CONSEQUENCE_START.search(s.text):
            local_pool.extend(self.prev_sentence_nodes)
        named = ctx.named_units(s.text) or ctx.named_units(self.prev_text)
        for k, j in enumerate(ordered):
            m = ms[j]
            claim = m.claim
            order = (s.index, 1, k)
            static = claim in ctx.givens
            if claim in self.last_occ:
                i = self._add(claim, s.index, (m.start, m.end), "stated", static, tentative, order)
                self.edges.add((self.last_occ[claim], i, "restatement"))
            elif static:
                i = self._add(claim, s.index, (m.start, m.end), "stated", True, False, order)
            elif head and tentative and s.index == self.hyp_start:
                i = self._add(claim, s.index, (m.start, m.end), "stated", False, True, order)
                self.hyp_heads.append(i)
            else:
                if (s.index, j) in self.overrides:
                    keys, unstated = self.overrides[(s.index, j)]
                    premises = [self.node_of_key[key] for key in keys if key in self.node_of_key]
                    premises += [self._occurrence(u, s.index, (s.index, 0, len(self.nodes))) for u in unstated]
                elif m.listing:
                    premises = []
                else:
                    premises = self._premises(claim, s, named, local_pool, refutation, order)
                origin = "stated" if premises else "directly_stated"
                i = self._add(claim, s.index, (m.start, m.end), origin, False, tentative, order)
                for p in premises:
                    self.edges.add((p, i, "inference"))
            self.last_occ[claim] = i
            self.node_of_key[(s.index, j)] = i
            this_nodes.append(i)
            if not m.listing and (seen_before[id(m)] or static):
                local_pool.append(i)
            self._update_state(claim, i, tentative)
        if self.hyp_open and this_nodes:
            self.hyp_last_sentence = this_nodes
        if refutation:
            self.refutable = []
        self.prev_sentence_nodes = this_nodes
        self.prev_text = s.text

    def _update_state(self, claim, node, tentative):
        assigned, denied = self.ctx.effects(claim)
        for var, _ in assigned:
            if tentative:
                self.hyp_value[var] = node
            else:
                self.value_node[var] = node
        if not tentative:
            for var, _ in denied:
                self.neg_nodes[var][claim] = node

    def _premises(self, claim, s, named, local_pool, refutation, order):
        ctx = self.ctx
        if refutation and self.refutable:
            heads = [self.nodes[h].claim for h in self.hyp_heads]
            if claim.negated() in heads or not heads:
                return list(dict.fromkeys(self.refutable))
        units = ctx.units_of_claim(claim)
        own_vars = set(ctx.variables_of(claim))
        local = []
        for p in local_pool:
            pc = self.nodes[p].claim
            if pc == claim:
                continue
            if (units & ctx.units_of_claim(pc)) or (own_vars & set(ctx.variables_of(pc))):
                local.append(p)
        if local:
            return list(dict.fromkeys(local))
        scope = (named & units) if named else units
        if not scope:
            scope = units
        out = []
        values = dict(self.value_node)
        if self.hyp_open:
            values.update(self.hyp_value)
        for ui in sorted(scope):
            unit = ctx.units[ui]
            for v in unit.variables:
                if v in own_vars:
                    continue
                n = values.get(v)
                if n is not None:
                    out.append(n)
                elif v in ctx.given_value:
                    out.append(self._occurrence(ctx.given_value[v], s.index, (s.index, 0, len(self.nodes))))
                else:
                    out.extend(self.neg_nodes.get(v, {}).values())
            for g in unit.premises:
                out.append(self._occurrence(g, s.index, (s.index, 0, len(self.nodes))))
        for v in own_vars:
            out.extend(self.neg_nodes.get(v, {}).values())
        return list(dict.fromkeys(out))

    def to_graph(self):
        order = sorted(range(len(self.nodes)), key=lambda i: self.nodes[i].order)
        new_id = {old: new for new, old in enumerate(order)}
        nodes = [(n.claim, n.sentence, n.span, n.label, n.origin, n.static) for n in (self.nodes[i] for i in order)]
        edges = sorted((new_id[a], new_id[b], kind) for a, b, kind in self.edges)
        return ClaimGraph.from_records(nodes, edges)


def reference_from_records(nodes, edges) -> nx.DiGraph:
    """The DiGraph ``ClaimGraph.from_records`` must hold, built with networkx's own builder methods."""
    g = nx.DiGraph()
    g.add_nodes_from((i, {"claim": c, "sentence": s, "span": sp, "label": lab, "origin": o, "static": st})
                     for i, (c, s, sp, lab, o, st) in enumerate(nodes))
    g.add_edges_from((u, v, {"kind": k}) for u, v, k in edges)
    return g


def reference_merge_static(graph: ClaimGraph) -> nx.DiGraph:
    """The DiGraph ``ClaimGraph.merge_static_restatements`` must hold, built with networkx's builder methods."""
    mapping = graph.static_restatements()
    old = graph.graph
    if not mapping:
        return old.copy()
    g = nx.DiGraph()
    g.graph.update(old.graph)
    g.add_nodes_from((v, d) for v, d in old.nodes(data=True) if v not in mapping)
    for u, v, kind in old.edges(data="kind"):
        u2, v2 = mapping.get(u, u), mapping.get(v, v)
        if u2 >= v2:
            continue
        if g.has_edge(u2, v2):
            if kind == "inference":
                g.edges[u2, v2]["kind"] = "inference"
            continue
        g.add_edge(u2, v2, kind=kind)
    return g
