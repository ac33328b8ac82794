"""Every prompt of the LLM-assisted extraction, in one place (paper A §B steps 1-3; wording is reasonshape's).

Each builder returns a chat conversation (list of message dicts). Outputs are requested as JSON that
:func:`reasonshape.extraction.llm.parse_json` reads; the JSON schemas are spelled out in the prompts so that any
OpenAI-compatible server (with or without structured-output support) can follow them.
"""

from __future__ import annotations

import json

__all__ = ["CLAIM_SCHEMA", "claim_extraction_prompt", "support_check_prompt", "rule_extraction_prompt"]

CLAIM_SCHEMA = {
    "type": "object",
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sentence": {"type": "integer", "description": "index of the sentence stating the claim"},
                    "row": {"type": "integer"},
                    "column": {"type": "integer"},
                    "value": {"type": ["integer", "string"]},
                    "positive": {"type": "boolean", "description": "false for 'is not'"},
                },
                "required": ["sentence", "row", "column", "value", "positive"],
            },
        }
    },
    "required": ["claims"],
}

_SYSTEM = ("You annotate reasoning traces about logic puzzles. You answer with JSON only, no prose, "
           "exactly in the requested schema.")


def claim_extraction_prompt(puzzle_prompt: str, numbered_sentences: list[tuple[int, str]],
                            value_words: list[str]) -> list[dict]:
    """Step 1: list every atomic claim about a cell's value stated in a chunk of numbered sentences."""
    chunk = "\n".join(f"[{i}] {s}" for i, s in numbered_sentences)
    words = ", ".join(value_words) if value_words else "the puzzle's digits"
    user = (
        "Puzzle:\n" + puzzle_prompt[:4000] + "\n\n"
        "Reasoning sentences (numbered):\n" + chunk + "\n\n"
        "List every atomic claim these sentences make about the value of a single cell, e.g. 'cell (3,4) is 9' or "
        "'(2,5) is not 3'. Coordinates are 1-based (row, column). Values are digits or one of: " + words + ". "
        "Include claims inside hypotheses. Do not invent claims that are not stated.\n"
        "Answer with JSON matching this schema: " + json.dumps(CLAIM_SCHEMA)
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def support_check_prompt(window: str, claims: list[tuple[int, str]]) -> list[dict]:
    """Step 2: which of up to 200 candidate claims are actually stated in a window of the source text."""
    listing = "\n".join(f"{i}: {t}" for i, t in claims)
    user = (
        "Source text:\n" + window + "\n\nCandidate claims:\n" + listing + "\n\n"
        "Return the ids of the candidate claims that the source text actually states (as a fact or a hypothesis). "
        'Answer with JSON: {"supported": [ids]}'
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def rule_extraction_prompt(puzzle_prompt: str, prefix: str, earlier: list[tuple[int, str]],
                           claim_text: str) -> list[dict]:
    """Step 3: the rule application deriving one claim from earlier claims, or 'directly stated'.

    ``prefix`` is the trace up to the claim's last supporting sentence; ``earlier`` the numbered earlier claims.
    Premises the rule needs but the trace never states are returned as text in ``unstated``.
    """
    listing = "\n".join(f"{i}: {t}" for i, t in earlier[-300:])
    user = (
        "Puzzle:\n" + puzzle_prompt[:4000] + "\n\nTrace so far:\n" + prefix[-12000:] + "\n\n"
        "Earlier claims (id: claim):\n" + (listing or "(none)") + "\n\n"
        f"Claim: {claim_text}\n"
        "Which earlier claims does the trace use as premises to conclude this claim by one rule of the puzzle? "
        "If the trace just states it without reasoning, say so. If the rule needs facts the trace never states "
        "(e.g. a clue of the puzzle), list them as short claims in 'unstated'.\n"
        'Answer with JSON: {"premises": [ids], "directly_stated": true|false, "unstated": ["(r,c) is v", ...]}'
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]
