"""LLM-assisted extraction (paper A §B, steps 1-3), through any generation backend.

1. Claim extraction: the trace's sentences are cut into token-balanced chunks (about ``chunk_tokens`` tokens each,
   measured with the backend's tokenizer when it has one, else 4 characters per token); for each chunk the LLM lists
   the cell claims as JSON (:data:`~reasonshape.extraction.prompts.CLAIM_SCHEMA`). LLM claims are validated against
   the puzzle's vocabulary and merged with the deterministic schema's claims of the same sentence (de-duplicated).
2. Support check: LLM-only claims are checked in batches of at most 200 against a window of the source text around
   their sentences; unsupported ones are dropped (hallucinations). Deterministic claims need no check.
3. Rule extraction, in trace order, for every non-tentative new claim: given the trace prefix up to the claim's
   sentence and all earlier claims, the LLM returns premises (ids of earlier claims) or "directly stated"; premises
   it names but the trace never states become placeholder claims.
4. Labels come from the puzzle, as in the deterministic path.

All requests of a step go to the backend in ONE batched call (the backend bounds concurrency, retries and times
out). On any endpoint failure the trace falls back to the deterministic graph and the result says so in
``fallback``: a trace is never lost. Claims whose single rule answer is unreadable keep the deterministic rule.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from reasonshape.envs.base import Claim, Instance, Puzzle
from reasonshape.errors import ConfigError
from reasonshape.extraction import prompts
from reasonshape.extraction.deterministic import (
    RETRACTION_CUE,
    TENTATIVE_CUE,
    ExtractionResult,
    PuzzleContext,
    build_graph,
    extract_deterministic,
    read_mentions,
)
from reasonshape.extraction.schema import Mention
from reasonshape.extraction.segment import split_sentences, trace_text

__all__ = ["parse_json", "extract_with_llm"]

log = logging.getLogger(__name__)
SUPPORT_BATCH = 200


def parse_json(text: str) -> Any:
    """The first JSON object or array in ``text`` (code fences and prose around it are ignored).

    Raises
    ------
    ValueError
        No JSON value could be decoded.
    """
    dec = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                return dec.raw_decode(text, i)[0]
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON value in the LLM output")


def _chunks(sentences, chunk_tokens: int, count_tokens) -> list[list]:
    out, cur, size = [], [], 0
    for s in sentences:
        t = count_tokens(s.text)
        if cur and size + t > chunk_tokens:
            out.append(cur)
            cur, size = [], 0
        cur.append(s)
        size += t
    if cur:
        out.append(cur)
    return out


def extract_with_llm(puzzle: Puzzle, instance: Instance, completion: Any, backend, *,
                     chunk_tokens: int = 1500, max_tokens: int = 2048, temperature: float = 0.0,
                     context: PuzzleContext | None = None) -> ExtractionResult:
    """Claim graph by the LLM-assisted pipeline; falls back to :func:`extract_deterministic` on endpoint failure.

    Parameters
    ----------
    backend : GenerationBackend
        Any backend of :mod:`reasonshape.training.backends` (an OpenAI-compatible server in practice).
    chunk_tokens : int
        Target chunk size for claim extraction, > 0.
    max_tokens, temperature
        Sampling settings of the extractor LLM (greedy by default).

    Returns
    -------
    ExtractionResult
        ``mode="llm"``; or the deterministic result with ``fallback`` set to the reason.

    Raises
    ------
    ConfigError
        ``chunk_tokens <= 0``, or ``puzzle`` / ``instance`` refused as by
        :class:`~reasonshape.extraction.deterministic.PuzzleContext` (endpoint failures never raise: they fall back).
    """
    if chunk_tokens <= 0:
        raise ConfigError(f"chunk_tokens must be > 0, got {chunk_tokens}")
    ctx = context or PuzzleContext(puzzle, instance)
    text = trace_text(completion)
    sentences = split_sentences(text)
    mentions = read_mentions(ctx, sentences)
    try:
        merged = _llm_claims(ctx, sentences, mentions, backend, chunk_tokens, max_tokens, temperature)
        overrides = _llm_rules(ctx, text, sentences, merged, backend, max_tokens, temperature)
    except Exception as e:  # any endpoint failure: keep the trace with the deterministic graph
        log.warning("LLM-assisted extraction failed (%s: %s); using the deterministic graph", type(e).__name__, e)
        res = extract_deterministic(puzzle, instance, completion, context=ctx)
        res.fallback = f"{type(e).__name__}: {e}"
        return res
    return build_graph(ctx, text, sentences, merged, premises=overrides, mode="llm")


def _gen(backend, convs, max_tokens, temperature) -> list[str]:
    out = backend.generate(convs, n=1, temperature=temperature, max_tokens=max_tokens, seed=0)
    return [s[0].text for s in out]


def _to_claim(ctx: PuzzleContext, item: dict) -> Claim | None:
    try:
        cell = (int(item["row"]), int(item["column"]))
        value = ctx.reader.value(str(item["value"]))
        positive = bool(item.get("positive", True))
    except (KeyError, TypeError, ValueError):
        return None
    if value is None or cell not in ctx.reader.domains or value not in ctx.reader.domains[cell]:
        return None
    return ctx.puzzle.value_claim(cell, value, positive)


def _llm_claims(ctx, sentences, mentions, backend, chunk_tokens, max_tokens, temperature) -> list[list[Mention]]:
    count = backend.count_tokens if getattr(backend, "count_tokens", None) else None

    def n_tokens(t: str) -> int:
        n = count(t) if count else None
        return n if n is not None else max(1, len(t) // 4)

    chunks = _chunks(sentences, chunk_tokens, n_tokens)
    puzzle_prompt = ctx.puzzle.render_prompt(ctx.instance)
    words = sorted(ctx.puzzle.VALUE_WORDS)
    convs = [prompts.claim_extraction_prompt(puzzle_prompt, [(s.index, s.text) for s in ch], words) for ch in chunks]
    outs = _gen(backend, convs, max_tokens, temperature) if convs else []
    extra: dict[int, list[Claim]] = {}
    for ch, out in zip(chunks, outs, strict=True):
        allowed = {s.index for s in ch}
        try:
            data = parse_json(out)
        except ValueError:
            continue
        items = data.get("claims", []) if isinstance(data, dict) else data
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            cl = _to_claim(ctx, item)
            si = item.get("sentence")
            if cl is None or not isinstance(si, int) or si not in allowed:
                continue
            if all(m.claim != cl for m in mentions[si]) and cl not in extra.setdefault(si, []):
                extra[si].append(cl)
    # Step 2: support check of LLM-only claims, in batches of at most 200.
    flat = [(si, cl) for si, cls in sorted(extra.items()) for cl in cls]
    supported: set[int] = set()
    batches = [flat[i:i + SUPPORT_BATCH] for i in range(0, len(flat), SUPPORT_BATCH)]
    convs = []
    for bi, batch in enumerate(batches):
        lo = max(0, min(si for si, _ in batch) - 1)
        hi = min(len(sentences), max(si for si, _ in batch) + 2)
        window = "\n".join(f"[{s.index}] {s.text}" for s in sentences[lo:hi])
        convs.append(prompts.support_check_prompt(
            window, [(bi * SUPPORT_BATCH + k, f"[sentence {si}] {ctx.puzzle.claim_text(cl)}")
                     for k, (si, cl) in enumerate(batch)]))
    for out in _gen(backend, convs, max_tokens, temperature) if convs else []:
        try:
            data = parse_json(out)
        except ValueError:
            continue
        ids = data.get("supported", []) if isinstance(data, dict) else data
        if isinstance(ids, list):
            supported.update(i for i in ids if isinstance(i, int))
    merged = [list(ms) for ms in mentions]
    for k, (si, cl) in enumerate(flat):
        if k in supported:
            s = sentences[si]
            merged[si].append(Mention(cl, s.start, s.end))
    return merged


def _llm_rules(ctx, text, sentences, merged, backend, max_tokens, temperature) -> dict:
    puzzle_prompt = ctx.puzzle.render_prompt(ctx.instance)
    earlier: list[tuple[int, str]] = []
    key_of: list[tuple[int, int]] = []
    seen: set[Claim] = set()
    jobs = []
    in_hyp = False
    for s, ms in zip(sentences, merged, strict=True):
        if TENTATIVE_CUE.search(s.text):
            in_hyp = True
        elif RETRACTION_CUE.search(s.text):
            in_hyp = False
        for j, m in enumerate(ms):
            new = m.claim not in seen and m.claim not in ctx.givens
            if new and not in_hyp:
                prefix = text[:s.end]
                jobs.append(((s.index, j), prompts.rule_extraction_prompt(
                    puzzle_prompt, prefix, list(earlier), ctx.puzzle.claim_text(m.claim))))
            seen.add(m.claim)
            earlier.append((len(key_of), ctx.puzzle.claim_text(m.claim)))
            key_of.append((s.index, j))
    outs = _gen(backend, [c for _, c in jobs], max_tokens, temperature) if jobs else []
    overrides = {}
    index_of = {k: i for i, k in enumerate(key_of)}
    for (key, _), out in zip(jobs, outs, strict=True):
        try:
            data = parse_json(out)
        except ValueError:
            continue  # this claim keeps the deterministic rule
        if not isinstance(data, dict):
            continue
        limit = index_of[key]
        prem = [key_of[i] for i in data.get("premises", []) or [] if isinstance(i, int) and 0 <= i < limit]
        unstated = []
        for t in data.get("unstated", []) or []:
            if isinstance(t, str):
                unstated += [m.claim for m in ctx.reader.read(t)]
        if data.get("directly_stated") and not prem and not unstated:
            overrides[key] = ([], [])
        elif prem or unstated:
            overrides[key] = (prem, unstated)
    return overrides
