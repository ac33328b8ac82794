"""Tests of reasonshape.envs.tracks (dev instances: Simon Tatham's Portable Puzzle Collection, MIT, via
shared/data)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import Claim, ClaimLabel, ParsedAnswer, get
from reasonshape.envs.tracks import EMPTY, PIECES, TracksData, TracksParams
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows

P = get("tracks")
ROWS = dev_rows("tracks")
# h = 8 empty cells, 5 = R|L at cell 8 (row 3, col 1), c = 3 empty, 9 = R|D at cell 12 (row 4, col 1), c = 3 empty;
# columns 4 4 4 2 (S: the exit is below column 1), rows 3 3 4 4 (S: the entrance is left of row 3).
SMALL = "4x4de:h5c9c,S4,4,4,2,3,3,S4,4"
SMALL_SOL = (("RD", "LR", "LD", "."), ("RU", "LD", "UD", "."), ("LR", "LU", "RU", "LD"), ("RD", "LR", "LR", "LU"))
SMALL_TEXT = "RD LR LD .\nRU LD UD .\nLR LU RU LD\nRD LR LR LU"
TOKENS = (EMPTY,) + PIECES


def sgt_move(game_id: str) -> str:
    binary = P.sgt_binary()
    if binary is None:
        pytest.skip("sgt-tracks not installed")
    prefix = f"/tmp/rs_tracks_{os.getpid()}_"
    proc = subprocess.run([binary, "--generate", "1", "--save", prefix, "--with-solutions", game_id],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "DISPLAY": ""})
    assert "error parsing" not in proc.stderr.lower(), proc.stderr
    path = Path(prefix + "0")
    if not path.exists():  # the collection parsed the desc but its deductive solver gave up
        assert "unable to" in proc.stderr.lower(), proc.stderr
        return ""
    text = path.read_text()
    path.unlink()
    return next((ln.split(":", 2)[2] for ln in text.splitlines() if ln.startswith("SOLVE")), "")


def replace(sol, r, c, tok):
    g = [list(x) for x in sol]
    g[r][c] = tok
    return tuple(map(tuple, g))


class TestParams:
    def test_full_and_short(self):
        assert P.parse_params("8x8dh") == TracksParams(8, 8, "h", True)
        assert P.parse_params("8x6deo") == TracksParams(8, 6, "e", False)
        assert P.parse_params("8x8") == TracksParams(8, 8, "t", True)
        assert P.format_params(TracksParams(8, 6, "e", False)) == "8x6deo"
        assert P.format_params(TracksParams(8, 6, "e", False), full=False) == "8x6"

    @pytest.mark.parametrize("text,pos", [("x5", 0), ("5x", 2), ("5x5dq", 4), ("5x5dto!", 6), ("3x5de", 0)])
    def test_bad_params(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos


class TestGameIds:
    @pytest.mark.parametrize("row", ROWS, ids=[r["game_id"] for r in ROWS])
    def test_dev_instance_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_small_decoded_by_hand(self):
        inst = P.parse_game_id(SMALL)
        clues = ((None,) * 4, (None,) * 4, ("LR", None, None, None), ("RD", None, None, None))
        assert inst.data == TracksData(clues, (4, 4, 4, 2), (3, 3, 4, 4), 0, 2)
        assert P.unique_solution(inst) == SMALL_SOL

    @pytest.mark.parametrize("gid,pos", [
        ("4x4de:h7c9c,S4,4,4,2,3,3,S4,4", 7),     # 7 = R|U|L: three sides
        ("4x4de:h5c9c,S4,4,4,2,3,3,4,4", 28),     # no entrance row marked S (reported at the end)
        ("4x4de:h5c9c,S4,4,4,2,3,3,S4", 27),      # a row count missing
        ("4x4de:h5c9c,S4,4,4,2,3,3,S4,4,1", 29),  # one count too many
        ("4x4de:h5c9c;S4,4,4,2,3,3,S4,4", 11),    # ';' instead of ','
        ("4x4de:h5c9cb,S4,4,4,2,3,3,S4,4", 11),   # 18 cells for 16
        ("4x4de:h5c9c,S4,x,4,2,3,3,S4,4", 15),    # a count that is not a number
        ("4x4de:h5c9c,S4,4,4,2,3,3,S4,4".replace("h", "H"), 6),
    ])
    def test_malformed(self, gid, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(gid)
        assert e.value.position == pos and e.value.expected


class TestGenerate:
    @pytest.mark.parametrize("level", ["trivial", "easy", "normal", "hard"])
    def test_deterministic_unique_and_accepted_by_the_collection(self, level):
        a = P.generate(level, seed=4)
        assert a.game_id == P.generate(level, seed=4).game_id
        assert P.solve(a, 2).unique
        assert P.format_params(a.params) == P.LEVELS[level]
        counts = a.data.col_counts + a.data.row_counts
        assert 0 not in counts  # the collection's "too boring" rule
        assert not any(x == y == 1 for x, y in zip(counts, counts[1:], strict=False))
        if P.sgt_binary() is not None and level in ("trivial", "hard"):
            move = sgt_move(a.game_id)  # the collection parses the desc; its solver may give up on hard ones
            if move:
                assert P.decode_tatham_solution(a, move) == P.unique_solution(a)

    def test_sgt_backend(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-tracks not installed")
        inst = P.generate("trivial", seed=1, backend="sgt")
        assert P.solve(inst, 2).unique and inst.game_id.startswith("4x4de:")


class TestText:
    def test_prompt(self):
        text = P.render_prompt(P.parse_game_id(SMALL))
        assert "    4  4  4  2" in text and " 4  RD ?  ?  ?" in text and "<- A" in text
        assert "<answer>" in text and "1-based" in text and "cell (3,1)" in text and "cell (4,1)" in text
        for sym in P.ANSWER_SYMBOLS:
            assert f"- {sym}:" in text

    @pytest.mark.parametrize("body", [
        SMALL_TEXT, "```\n" + SMALL_TEXT + "\n```", SMALL_TEXT.replace(" ", ", "),
        "| " + SMALL_TEXT.replace(" ", " | ").replace("\n", " |\n| ") + " |",
        "DR RL DL .\nUR DL DU .\nRL UL UR DL\nDR LR LR UL", "┌─┐.\n└┐│.\n─┘└┐\n┌──┘",
        "rd lr ld .\nru ld ud x\nlr lu ru ld\nrd lr lr lu",
    ])
    def test_parse_variants(self, body):
        inst = P.parse_game_id(SMALL)
        ans = P.parse_answer(f"I reason...\n<answer>\n{body}\n</answer>", inst)
        assert ans.value == SMALL_SOL and ans.source == "answer_block"

    def test_fallback(self):
        ans = P.parse_answer(f"Final:\n{SMALL_TEXT}\nDone.", P.parse_game_id(SMALL))
        assert ans.value == SMALL_SOL and ans.source == "fallback_grid"

    @pytest.mark.parametrize("text,reason", [
        ("nothing", "no answer block"), ("<answer>RD LR LD .</answer>", "wrong size"),
        ("<answer>" + SMALL_TEXT.replace("RU", "RL RL") + "</answer>", "wrong size"),
        ("<answer>" + SMALL_TEXT.replace("RU", "QQ") + "</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, text, reason):
        with pytest.raises(AnswerParseError, match=reason):
            P.parse_answer(text, P.parse_game_id(SMALL))

    def test_format_inverse(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        assert P.parse_answer(P.format_answer(inst, sol), inst).value == sol
        assert P.format_answer(P.parse_game_id(SMALL), SMALL_SOL) == SMALL_TEXT

    def test_one_megabyte_is_linear(self):
        text = "RD " * 333_333 + "\n<answer>" + SMALL_TEXT + "</answer>"
        t = time.perf_counter()
        assert P.parse_answer(text, P.parse_game_id(SMALL)).value == SMALL_SOL
        assert time.perf_counter() - t < 2.0


class TestCheck:
    @pytest.mark.parametrize("row", ROWS, ids=[r["game_id"] for r in ROWS])
    def test_every_single_cell_corruption_is_rejected(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        assert P.check(inst, sol).ok and P.check(inst, ParsedAnswer(sol)).ok
        known = {"given_piece", "entrance", "exit", "off_grid", "dangling", "row_count", "col_count", "disconnected"}
        for r in range(inst.params.h):
            for c in range(inst.params.w):
                for tok in TOKENS:
                    if tok != sol[r][c]:
                        res = P.check(inst, replace(sol, r, c, tok))
                        assert not res.ok and set(res.rules) <= known, (r, c, tok, res)

    def test_rules_named(self):
        inst = P.parse_game_id(SMALL)
        assert P.check(inst, replace(SMALL_SOL, 2, 0, "RD")).rules[0] == "given_piece"
        res = P.check(inst, replace(SMALL_SOL, 0, 3, "UD"))
        assert set(res.rules) == {"off_grid", "dangling", "row_count", "col_count", "disconnected"}
        # a separate loop: a 2x2 ring in an otherwise empty 4x4 plus nothing else is not a path from A to B
        ring = ((".", ".", ".", "."), (".", "RD", "LD", "."), (".", "RU", "LU", "."), (".", ".", ".", "."))
        res = P.check(inst, ring)
        assert {"entrance", "exit", "disconnected"} <= set(res.rules)
        assert P.check(inst, (("RD",),)).rules == ("shape",)
        assert P.check(inst, replace(SMALL_SOL, 0, 0, "XX")).rules == ("symbol",)

    def test_any_valid_solution_passes(self):
        inst = P.parse_game_id(SMALL)
        loose = P.parse_game_id("4x4de:p,S4,4,4,2,3,3,S4,4")  # SMALL without its given pieces: 2 solutions
        res = P.solve(loose, 30)
        assert res.exhausted and len(res.solutions) == 2 and SMALL_SOL in res.solutions
        assert all(P.check(loose, s).ok for s in res.solutions)
        assert P.check(inst, SMALL_SOL).ok

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 1e-3


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ROWS), st.data())
def test_random_corruptions_rejected_and_round_trip(row, data):
    inst = P.parse_game_id(row["game_id"])
    sol = P.unique_solution(inst)
    assert P.parse_answer(P.format_answer(inst, sol), inst).value == sol
    w, h = inst.params.w, inst.params.h
    changes = data.draw(st.lists(st.tuples(st.integers(0, h - 1), st.integers(0, w - 1), st.sampled_from(TOKENS)),
                                 min_size=1, max_size=6))
    bad = sol
    for r, c, tok in changes:
        bad = replace(bad, r, c, tok)
    assert P.check(inst, bad).ok == (bad == sol)  # unique solution: any real change breaks a rule


class TestClaims:
    def test_claims(self):
        inst = P.parse_game_id(SMALL)
        cstar = P.solution_claims(inst)
        assert len(cstar) == 12  # 14 track cells minus the 2 given pieces
        assert Claim("value", ((1, 1),), "RD") in cstar and Claim("value", ((3, 1),), "LR") not in cstar
        g = P.given_claims(inst)
        assert Claim("value", ((3, 1),), "LR") in g and Claim("row_count", ((2, 1),), 3) in g
        assert Claim("col_count", ((1, 4),), 2) in g and Claim("entrance", ((3, 1),)) in g
        assert Claim("exit", ((4, 1),)) in g
        assert P.verify_claim(inst, Claim("value", ((1, 1),), "RD")) == ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", ((1, 1),), "LR")) == ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("track", ((1, 4),))) == ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("track", ((1, 4),), None, False)) == ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("edge", ((1, 1), (1, 2)))) == ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("edge", ((1, 1), (2, 1)))) == ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("edge", ((2, 1), (3, 1)))) == ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("entrance", ((1, 1),))) == ClaimLabel.WRONG
        with pytest.raises(ClaimError):
            P.claim_holds(inst, SMALL_SOL, Claim("edge", ((1, 1), (2, 2))))
        with pytest.raises(ClaimError):
            P.claim_holds(inst, SMALL_SOL, Claim("value", ((5, 1),), "LR"))
        with pytest.raises(ClaimError):
            P.claim_holds(inst, SMALL_SOL, Claim("bridge", ((1, 1),), 2))

    def test_text_round_trip(self):
        inst = P.parse_game_id(SMALL)
        claims = [Claim("track", ((2, 3),)), Claim("track", ((1, 4),), None, False),
                  Claim("edge", ((1, 1), (1, 2))), Claim("edge", ((2, 1), (3, 1)), None, False),
                  Claim("row_count", ((2, 1),), 3), Claim("col_count", ((1, 4),), 2, False),
                  Claim("entrance", ((3, 1),)), Claim("exit", ((4, 1),)), Claim("exit", ((4, 2),), None, False)]
        for c in claims:
            text = f"So {P.claim_text(c)}."
            assert [f[0] for f in P.parse_claim_text(inst, text)] == [c], text
        assert P.claim_text(Claim("value", ((1, 4),), ".")) == "(1,4) is empty"
        assert P.claim_text(Claim("value", ((1, 1),), "RD", False)) == "(1,1) is not RD"
        assert P.VALUE_WORDS["empty"] == "." and P.VALUE_WORDS["dr"] == "RD" and P.VALUE_WORDS["┌"] == "RD"


class TestUnits:
    @pytest.mark.parametrize("row", ROWS, ids=[r["game_id"] for r in ROWS])
    def test_units_exact(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        var = P.variables(inst)
        w, h = inst.params.w, inst.params.h
        for cell, dom in var.items():
            assert P.solution_value(inst, sol, cell) in dom
        assert all(len(dom) == 1 for cell, dom in var.items() if inst.data.clues[cell[0] - 1][cell[1] - 1])
        units = P.units(inst)
        assert len(units) == w + h + (w - 1) * h + w * (h - 1)
        for u in units:
            vals = tuple(P.solution_value(inst, sol, v) for v in u.variables)
            assert u.allowed(vals), u.name
            if u.name.startswith(("row", "column")):
                alt = "." if vals[0] != "." else "LR"
            else:
                alt = next(t for t in TOKENS if (u.allowed((t,) + vals[1:]) is False))
            assert not u.allowed((alt,) + vals[1:]), u.name
        assert units[0].name == "row 1"
        assert units[0].premises == (Claim("row_count", ((1, 1),), inst.data.row_counts[0]),)
