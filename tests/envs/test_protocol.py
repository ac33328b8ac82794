"""Conformance of every registered puzzle to the protocol, on the collection's own instances.

Per-puzzle behaviour (generation, corruption, prose answers...) is tested in tests/envs/test_<puzzle>.py; this file
checks what must hold uniformly, so a puzzle that drifts from the protocol fails here.
"""

import pickle
import re

import pytest

from reasonshape import envs
from reasonshape.envs import Claim, ClaimLabel, Instance, ParsedAnswer
from reasonshape.envs.base import MAX_DIGITS, parse_wxh, read_int
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError, UnknownPuzzleError
from tests.envs._tatham import dev_rows

ROWS = dev_rows()
IMPLEMENTED = envs.list_puzzles()
DEV = [r for r in ROWS if r["puzzle"] in IMPLEMENTED]


def _id(r):
    return f"{r['puzzle']}-{r['level']}-{r['tatham_seed'][:6]}"


def test_registry_names_all_21():
    assert len(envs.PUZZLE_NAMES) == 21
    assert set(r["puzzle"] for r in ROWS) == set(envs.PUZZLE_NAMES)


def test_unknown_puzzle_lists_known():
    with pytest.raises(UnknownPuzzleError) as e:
        envs.get("sudokuu")
    assert "sudokuu" in str(e.value)


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_puzzle_declares_protocol_constants(name):
    p = envs.get(name)
    assert p.name == name
    assert tuple(p.LEVELS) == envs.LEVEL_NAMES
    for level in envs.LEVEL_NAMES:
        params = p.level_params(level)
        assert p.parse_params(p.format_params(params)) == params
        assert p.parse_params(p.format_params(params, full=False)) is not None
    assert p.ANSWER_SYMBOLS, "ANSWER_SYMBOLS documents the answer format"
    assert pickle.loads(pickle.dumps(p)) is p


@pytest.mark.parametrize("row", DEV, ids=_id)
def test_dev_instance_conforms(row):
    p = envs.get(row["puzzle"])
    inst = p.parse_game_id(row["game_id"])
    assert isinstance(inst, Instance) and inst.puzzle == p.name
    assert p.format_game_id(inst) == row["game_id"]
    assert inst.game_id == row["game_id"]

    res = p.solve(inst, max_solutions=2)
    assert res.unique
    sol = res.solutions[0]
    assert sol == p.decode_tatham_solution(inst, row["tatham_solve"])
    assert p.check(inst, sol).ok

    text = "Some reasoning first.\n<answer>\n" + p.format_answer(inst, sol) + "\n</answer>"
    parsed = p.parse_answer(text, inst)
    assert isinstance(parsed, ParsedAnswer) and parsed.source == "answer_block"
    assert parsed.value == sol
    assert p.check(inst, parsed).ok

    prompt = p.render_prompt(inst)
    assert "<answer>" in prompt and "(row, column)" in prompt.replace("(row,column)", "(row, column)")

    c_star = p.solution_claims(inst)
    assert c_star, "C* is never empty"
    for claim in sorted(c_star)[:40]:
        assert p.verify_claim(inst, claim) is ClaimLabel.CORRECT, claim
        assert p.verify_claim(inst, claim.negated()) is ClaimLabel.WRONG, claim

    domains = p.variables(inst)
    for unit in p.units(inst):
        assert set(unit.variables) <= set(domains), unit.name
        values = tuple(p.solution_value(inst, sol, v) for v in unit.variables)
        assert unit.allowed(values), f"solution violates unit {unit.name}"


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_check_gives_a_verdict_for_malformed_values(name):
    # a solution value with one entry of the wrong type (direct API use: parse_answer never builds these) is a
    # refusal naming a rule, never a TypeError from the symbol test
    p = envs.get(name)
    row = next(r for r in DEV if r["puzzle"] == name)
    inst = p.parse_game_id(row["game_id"])
    sol = p.unique_solution(inst)
    # floats equal to small ints: in net, 3.0 passed "in rotations(tile)" and then failed on "&"
    for bad in ([1], {}, {1}, None, 1.5, float("nan"), 10**30, -1, b"T", True, *map(float, range(16))):
        if name == "bridges":
            (pair, n), *rest = sol
            candidates = [((pair, bad), *rest), ((bad, n), *rest)]
        elif name == "loopy":
            horizontal, vertical = sol
            first = [list(line) for line in horizontal]
            first[0][0] = bad
            candidates = [(tuple(map(tuple, first)), vertical)]
        else:
            grid = [list(line) for line in sol]
            grid[0][0] = bad
            candidates = [tuple(map(tuple, grid))]
        for value in candidates:
            if value == sol:  # e.g. 3.0 == 3 or True == 1 where the cell held that number: still the solution
                continue
            verdict = p.check(inst, value)
            assert not verdict.ok and verdict.rules, (bad, verdict)


#: The claim kind with a value from a fixed vocabulary, for the puzzles without a "value" kind.
_VALUED_KIND = {"bridges": "bridge", "loopy": "clue", "dominosa": "number"}


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
@pytest.mark.parametrize("positive", [True, False])
def test_claim_values_outside_the_vocabulary_raise_claim_error(name, positive):
    # A value of the wrong type ("3" for 3, 7 for "T") or out of range (99, "zzz") is no statement about the
    # instance: ClaimError for both polarities (keen, solo, unequal, filling, signpost, net, bridges, loopy,
    # dominosa labelled it wrong, and its negation correct).
    p = envs.get(name)
    row = next(r for r in DEV if r["puzzle"] == name)
    inst = p.parse_game_id(row["game_id"])
    kind = _VALUED_KIND.get(name, "value")
    claim = next(c for c in sorted(p.solution_claims(inst)) + sorted(p.given_claims(inst)) if c.kind == kind)
    assert p.verify_claim(inst, claim) is ClaimLabel.CORRECT
    v = claim.value
    wrong_type, out_of_range = (7, "zzz") if isinstance(v, str) else (str(v), 99)
    for bad in (wrong_type, out_of_range, None, True):
        with pytest.raises(ClaimError, match=re.escape(repr(bad))):
            p.verify_claim(inst, Claim(kind, claim.cells, bad, positive))


#: A claim of each kind the collection's instance produces no claim of (neither given_claims nor solution_claims),
#: built as the puzzle's docs / claim_text describe it; the test uses it or its negation, whichever is correct.
_BUILT_CLAIMS = {
    ("unequal", "greater"): Claim("greater", ((1, 1), (1, 2))),  # "(1,1) is greater than (1,2)"
    ("unequal", "adjacent"): Claim("adjacent", ((1, 1), (1, 2))),  # "(1,1) and (1,2) are consecutive"
    ("lightup", "black"): Claim("black", ((1, 1),)),  # "(1,1) is a black cell"
    ("net", "link"): Claim("link", ((1, 1), (1, 2))),  # "(1,1) is linked to (1,2)"
    ("signpost", "link"): Claim("link", ((1, 1), (1, 2))),  # "(1,1) is followed by (1,2)"
    ("tracks", "track"): Claim("track", ((1, 1),)),  # "(1,1) has track"
    ("tracks", "edge"): Claim("edge", ((1, 1), (1, 2))),  # "the track runs between (1,1) and (1,2)"
}

#: Junk in place of a claim's value (and of each item of a tuple value): another type, out of any range, a bool.
_JUNK = ("zzz", 10**6, -1, True)

def _kind_samples(p, inst, name):
    """One correct claim of every kind in ``p.CLAIM_KINDS``: real ones first, then :data:`_BUILT_CLAIMS`."""
    real = p.given_claims(inst) + tuple(p.solution_claims(inst))
    out = {}
    for kind in p.CLAIM_KINDS:
        claim = min((c for c in real if c.kind == kind), key=repr, default=None)
        if claim is None:
            built = _BUILT_CLAIMS[(name, kind)]
            claim = built if p.verify_claim(inst, built) is ClaimLabel.CORRECT else built.negated()
        out[kind] = claim
    return out


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_every_claim_kind_refuses_junk_values(name):
    # For every kind of every puzzle, a junk value ("zzz", 10**6, -1, True; None where the kind carries a value,
    # any value where it carries none; the same junk in each item of a tuple value such as magnets' (sign, n))
    # raises ClaimError for both polarities, while the real claim is labelled correct. Kinds without a value used
    # to label junk like None (magnets / dominosa dominoes, loopy edges, tracks track / edge / entrance / exit),
    # and count items had no bound (magnets' n, tents' and tracks' counts, towers' visible, undead's totals).
    p = envs.get(name)
    row = next(r for r in DEV if r["puzzle"] == name)
    inst = p.parse_game_id(row["game_id"])
    for kind, claim in _kind_samples(p, inst, name).items():
        assert p.verify_claim(inst, claim) is ClaimLabel.CORRECT, claim
        v = claim.value
        bad_values = list(_JUNK) + ([0, False, "", ()] if v is None else [None])
        if isinstance(v, tuple):
            bad_values += [v[:i] + (bad,) + v[i + 1:] for i in range(len(v)) for bad in _JUNK]
        for bad in bad_values:
            for positive in (True, False):
                junk = Claim(kind, claim.cells, bad, positive)
                with pytest.raises(ClaimError):
                    p.verify_claim(inst, junk)
                    pytest.fail(f"{name}: {junk} was labelled {p.verify_claim(inst, junk)}")


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_claims_are_validated_on_an_instance_without_a_solution(name, monkeypatch):
    # verify_claim returned "unverifiable" for an instance without a solution before looking at the claim, so junk
    # was labelled there; now the claim is validated first: every kind's real claim is unverifiable, junk raises.
    from reasonshape.envs.base import SolveResult

    p = envs.get(name)
    inst = p.parse_game_id(next(r for r in DEV if r["puzzle"] == name)["game_id"])
    samples = _kind_samples(p, inst, name)
    monkeypatch.setattr(p, "solve", lambda instance, max_solutions=2: SolveResult((), True))
    own_rule = "verify_claim" in type(p).__dict__  # solo, unequal: exact CP-SAT labels, not read from solve()
    for kind, claim in samples.items():
        if not own_rule:
            assert p.verify_claim(inst, claim) is ClaimLabel.UNVERIFIABLE, claim
        junk = Claim(kind, claim.cells, None if claim.value is not None else 0, claim.positive)
        with pytest.raises(ClaimError):
            p.verify_claim(inst, junk)
        with pytest.raises(ClaimError):
            p.verify_claim(inst, Claim("no-such-kind", claim.cells, claim.value))


#: Count items at the edge of what the grid allows, as (kind, anchor, value at the bound, value past it) given the
#: instance's (w, h): a line of w cells holds at most w of anything.
_COUNT_BOUNDS = {
    "tents": lambda w, h: [("row_count", (1, 1), w, w + 1), ("column_count", (1, 1), h, h + 1)],
    "tracks": lambda w, h: [("row_count", (1, 1), w, w + 1), ("col_count", (1, 1), h, h + 1)],
    "magnets": lambda w, h: [("row_count", (1, 1), ("+", w), ("+", w + 1)),
                             ("col_count", (1, 1), ("-", h), ("-", h + 1))],
    "towers": lambda w, h: [("visible", (1, 1), ("top", w), ("top", w + 1)),
                            ("visible", (1, 1), ("top", 1), ("top", 0))],
    "undead": lambda w, h: [("total", None, ("G", w * h), ("G", w * h + 1))],
}


@pytest.mark.parametrize("name", sorted(_COUNT_BOUNDS))
def test_counts_are_bounded_by_the_grid(name):
    # the count at the bound is a statement about the instance (labelled), one past it raises ClaimError
    p = envs.get(name)
    inst = p.parse_game_id(next(r for r in DEV if r["puzzle"] == name)["game_id"])
    w, h = inst.params.w, getattr(inst.params, "h", inst.params.w)
    for kind, anchor, ok, past in _COUNT_BOUNDS[name](w, h):
        cells = () if anchor is None else (anchor,)
        assert p.verify_claim(inst, Claim(kind, cells, ok)) in (ClaimLabel.CORRECT, ClaimLabel.WRONG)
        for positive in (True, False):
            with pytest.raises(ClaimError, match="claims need"):
                p.verify_claim(inst, Claim(kind, cells, past, positive))


#: Claim kinds that name a row or a column through one anchor cell, (r, 1) / (1, c): kind -> True for rows.
_LINE_KINDS = {"tents": {"row_count": True, "column_count": False},
               "magnets": {"row_count": True, "col_count": False},
               "tracks": {"row_count": True, "col_count": False},
               "pattern": {"row_clue": True, "column_clue": False}}


@pytest.mark.parametrize("name", sorted(_LINE_KINDS))
def test_line_claims_need_their_anchor(name):
    # Row / column claims read only the anchor's row (column); magnets, tracks and pattern ignored the other
    # coordinate, so "row 2" anchored at (2, 5) was labelled like (2, 1), and magnets read only the first of several
    # cells. An anchor off column 1 (row 1), off the grid, or more than one cell is a ClaimError (tents already).
    p = envs.get(name)
    inst = p.parse_game_id(next(r for r in DEV if r["puzzle"] == name)["game_id"])
    h, w = inst.params.h, inst.params.w
    for kind, is_row in _LINE_KINDS[name].items():
        claim = max(c for c in p.given_claims(inst) if c.kind == kind)  # the last row / column: k > 1
        assert p.verify_claim(inst, claim) is ClaimLabel.CORRECT
        (r, c), = claim.cells
        k = r if is_row else c
        assert k > 1 and (c if is_row else r) == 1
        text = p.claim_text(claim)
        assert [x for x, _, _ in p.parse_claim_text(inst, text)] == [claim], text  # extraction builds (k, 1)
        off = (k, 2) if is_row else (2, k)
        past = (k, w + 1) if is_row else (h + 1, k)
        for cells in ((off,), ((k, 0),) if is_row else ((0, k),), (past,), (claim.cells[0], off), ()):
            for positive in (True, False):
                with pytest.raises(ClaimError):
                    p.verify_claim(inst, Claim(kind, cells, claim.value, positive))
                    pytest.fail(f"{name}: {Claim(kind, cells, claim.value, positive)} was labelled")


# Puzzles without '.' among their answer symbols, and those with it (the 21 together).
NO_DOT_PUZZLES = ("solo", "keen", "towers", "unequal", "dominosa", "singles", "unruly", "filling", "slant",
                  "signpost", "bridges")
DOT_PUZZLES = ("tents", "lightup", "magnets", "undead", "pattern", "mosaic", "range", "net", "loopy", "tracks")


def _first_dev(name):
    row = next(r for r in DEV if r["puzzle"] == name)
    p = envs.get(name)
    inst = p.parse_game_id(row["game_id"])
    return p, inst, p.decode_tatham_solution(inst, row["tatham_solve"])


def test_dot_puzzle_lists_cover_the_21():
    assert sorted(NO_DOT_PUZZLES + DOT_PUZZLES) == sorted(envs.PUZZLE_NAMES)


@pytest.mark.parametrize("name", NO_DOT_PUZZLES)
def test_a_full_stop_after_the_last_row_is_accepted(name):
    # "5 2 1 3 6 4." ends the answer like a sentence: one '.' at the very end is dropped where '.' is no symbol
    p, inst, sol = _first_dev(name)
    grid = p.format_answer(inst, sol)
    for text in (f"<answer>\n{grid}.\n</answer>", f"<answer>{grid}.</answer>", f"Final grid:\n{grid}.\n"):
        parsed = p.parse_answer(text, inst)
        assert parsed.value == sol and p.check(inst, parsed).ok
    if name != "bridges":  # bridges reads the numbers of a line and nothing else, dots included
        with pytest.raises(AnswerParseError):  # one, not several
            p.parse_answer(f"<answer>\n{grid}..\n</answer>", inst)


@pytest.mark.parametrize("name", DOT_PUZZLES)
def test_a_final_dot_stays_a_symbol_where_dot_is_one(name):
    # there "T . ." + "." could be a cell: nothing is dropped, so the answer keeps failing as before
    p, inst, sol = _first_dev(name)
    with pytest.raises(AnswerParseError):
        p.parse_answer(f"<answer>\n{p.format_answer(inst, sol)}.\n</answer>", inst)


@pytest.mark.parametrize("name", ["magnets", "tracks", "solo"])
@pytest.mark.parametrize("cell,outer", [("---", True), ("-----", False), (" --- ", True), (":---:", True)])
def test_markdown_table_answers_are_read(name, cell, outer):
    # the separator line under the header is skipped, also where '-' is an answer symbol (magnets, tracks)
    p, inst, sol = _first_dev(name)
    rows = [ln.split() for ln in p.format_answer(inst, sol).splitlines()]
    cols = len(rows[0])
    sep = "|".join([cell] * cols)
    table = ["| " + " | ".join(f"c{j + 1}" for j in range(cols)) + " |", f"|{sep}|" if outer else sep]
    table += ["| " + " | ".join(r) + " |" for r in rows]
    parsed = p.parse_answer("<answer>\n" + "\n".join(table) + "\n</answer>", inst)
    assert parsed.value == sol and p.check(inst, parsed).ok


# Characters for which str.isdigit() is True but int() fails (superscripts, circled digits), or that int() reads as
# a digit of another script (Arabic-Indic three): a parser that tests isdigit() and then calls int() must not crash.
ODD_DIGITS = ("\u00b2", "\u2460", "\u0663", "\u00b9\u00b2")
ODD_CLAIMS = ("(1,\u00b2) is 3", "(\u00b2,1) is 3", "row \u00b2 needs 2 tents", "row 1 has \u00b2 tents",
              "cell (1,1) = \u00b2", "(1,1) and (1,2) are joined by \u00b2 bridges", "the clue \u00b2 above column 1",
              "\u00b2 towers are visible from the top of column 1", "there are \u2460 ghosts",
              "line between dots (1,\u00b9\u00b2) and (1,2)", "the cage at (1,1) has clue \u00b2+",
              "(1,1) shows \u0663", "row \u0663 has clue \u00b2 1", "(1,1) is linked to (1,\u2460)")


def _odd_variants(text):
    """``text`` with each ASCII digit in turn replaced by each of ODD_DIGITS (and each inserted after it)."""
    for i, ch in enumerate(text):
        if "0" <= ch <= "9":
            for odd in ODD_DIGITS:
                yield text[:i] + odd + text[i + 1:]
                yield text[:i + 1] + odd + text[i + 1:]


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_non_ascii_digits_raise_typed_errors(name):
    p = envs.get(name)
    row = next(r for r in ROWS if r["puzzle"] == name)
    for bad in _odd_variants(row["game_id"]):
        try:
            p.parse_game_id(bad)
        except GameIdError:
            pass
    inst = p.parse_game_id(row["game_id"])
    sol = p.decode_tatham_solution(inst, row["tatham_solve"])
    for bad in _odd_variants(p.format_answer(inst, sol)):
        for text in (f"<answer>\n{bad}\n</answer>", bad):
            try:
                p.parse_answer(text, inst)
            except AnswerParseError:
                pass
    for text in ODD_CLAIMS:
        for found in (p.parse_claim_text(inst, text), p.parse_claim_text(inst, text + " " + p.claim_text(
                min(p.solution_claims(inst))).replace("1", "\u00b2"))):
            assert isinstance(found, list)


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_game_id_may_carry_the_puzzle_name(name):
    # "tents:8x8dt:..." (the command line's form) reads as "8x8dt:..." for tents, and is malformed for any other
    p = envs.get(name)
    row = next(r for r in ROWS if r["puzzle"] == name)
    inst = p.parse_game_id(row["game_id"])
    assert p.parse_game_id(f" {name}:{row['game_id']} ") == inst
    other = next(n for n in envs.PUZZLE_NAMES if n != name)
    with pytest.raises(GameIdError, match=f"at position 0: expected {name} params .*got '{other}:'"):
        p.parse_game_id(f"{other}:{row['game_id']}")


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_params_with_other_scripts_digits_are_rejected(name):
    # int() reads the Arabic-Indic "٣" as 3; the collection never writes it, so "٣x3" must not read as 3x3
    p = envs.get(name)
    for params in p.LEVELS.values():
        for i, ch in enumerate(params):
            if "0" <= ch <= "9":
                with pytest.raises(GameIdError):
                    p.parse_params(params[:i] + "\u0663" + params[i + 1:])


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_digit_runs_past_int_conversion_limit_are_game_id_errors(name):
    # int() refuses a run of 4,301+ digits with a bare ValueError (CPython's conversion limit): wherever such a run
    # stands in a real game ID's params or desc, parse_game_id reports a GameIdError (the cause chained)
    p = envs.get(name)
    row = next(r for r in ROWS if r["puzzle"] == name)
    gid = row["game_id"]
    runs = list(re.finditer(r"[0-9]+", gid))
    assert runs
    for m in runs:
        with pytest.raises(GameIdError) as exc:
            p.parse_game_id(gid[:m.start()] + "9" * 4301 + gid[m.end():])
        assert "set_int_max_str_digits" not in str(exc.value)
    # the same when parse_params / parse_desc are called directly, as their docstrings promise
    params, desc = gid.split(":", 1)
    for text, parse in ((params, p.parse_params), (desc, lambda d: p.parse_desc(p.parse_params(params), d))):
        for m in re.finditer(r"[0-9]+", text):
            with pytest.raises(GameIdError) as exc:
                parse(text[:m.start()] + "9" * 4301 + text[m.end():])
            assert isinstance(exc.value.__cause__, (ValueError, type(None)))


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_game_id_error_message_stays_short_for_a_long_id(name):
    # the message shows the first GameIdError.SHOWN_CHARS characters of the ID (and of any word of 'expected',
    # which may quote it: the all-letters prefix below); the attributes keep the whole ID
    p = envs.get(name)
    gid = next(r for r in ROWS if r["puzzle"] == name)["game_id"]
    params, desc = gid.split(":", 1)
    for bad in ("q" * 5000 + ":" + desc, params + ":" + desc + "~" * 5000, params + ":" + "9" * 5000 + desc,
                params + "~" * 5000 + ":" + desc):
        with pytest.raises(GameIdError) as exc:
            p.parse_game_id(bad)
        assert len(str(exc.value)) < 300, str(exc.value)[:400]
        assert f"{bad[:GameIdError.SHOWN_CHARS]!r}... ({len(bad)} characters)" in str(exc.value)
        assert exc.value.game_id == bad


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_claim_text_with_a_digit_run_past_int_conversion_limit_reads_no_claim_from_it(name):
    # parse_claim_text gives no claim for text it cannot read, never an error: a run of 4,301+ digits put in place
    # of any number of any claim sentence of the puzzle reads as the same text with '#' there (no claim's number),
    # where int() used to raise a bare ValueError
    p = envs.get(name)
    inst = p.parse_game_id(next(r for r in ROWS if r["puzzle"] == name)["game_id"])
    claims = [*p.given_claims(inst), *p.solution_claims(inst)]
    texts = {p.claim_text(c) for c in claims + [c.negated() for c in claims]}
    runs = [(t, m) for t in sorted(texts) for m in re.finditer(r"[0-9]+", t)]
    assert runs or name in ("filling", "solo", "unruly")  # these three read no claims of their own
    for t, m in runs:
        for long in ("9" * 5000, "0" * 4400 + "1"):
            text = t[:m.start()] + long + t[m.end():]
            masked = t[:m.start()] + "#" * len(long) + t[m.end():]
            assert p.parse_claim_text(inst, text) == p.parse_claim_text(inst, masked), text[:80]


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_generate_rejects_what_is_neither_a_level_nor_params(name):
    p = envs.get(name)
    for bad in (None, 3, ("easy",)):
        with pytest.raises(ValueError, match=f"must be a level .*got {type(bad).__name__}"):
            p.generate(bad)


def test_read_int_bounds_the_digit_run():
    assert read_int("x" + "9" * MAX_DIGITS + "y", 1, "n") == (int("9" * MAX_DIGITS), MAX_DIGITS + 1)
    with pytest.raises(GameIdError, match=f"at position 1: expected n, a number of at most {MAX_DIGITS} digits "
                                          f"\\(got {MAX_DIGITS + 1}\\)"):
        read_int("x" + "1" * (MAX_DIGITS + 1), 1, "n")


def test_parse_wxh():
    assert parse_wxh("7x5i30") == (7, 5, 3)
    assert parse_wxh("9") == (9, 9, 1)
    assert parse_wxh("12x3dt") == (12, 3, 4)
    for bad, pos, what in (("", 0, "a width"), ("x5", 0, "a width"), ("5x", 2, "a height"), ("5xd", 2, "a height"),
                           ("100x5", 0, "a width between 1 and 99, got 100"), ("0", 0, "a width between 1 and 99"),
                           ("5x0", 2, "a height between 1 and 99, got 0")):
        with pytest.raises(GameIdError, match=f"at position {pos}: expected {what}"):
            parse_wxh(bad)
    assert parse_wxh("120x3", max_side=200) == (120, 3, 5)
    assert parse_wxh("4x6", min_side=4) == (4, 6, 3)
    with pytest.raises(GameIdError, match="at position 2: expected a height between 4 and 99, got 3"):
        parse_wxh("4x3", min_side=4)


# The puzzles whose params start with the collection's "W[xH]" (read by parse_wxh): a missing height after 'x'
# and an absurd side are typed errors at the right position.
WXH_PUZZLES = ("bridges", "filling", "loopy", "magnets", "net", "range", "signpost", "slant", "tents", "tracks",
               "undead", "pattern", "mosaic", "unruly", "singles")


@pytest.mark.parametrize("name", WXH_PUZZLES)
def test_wxh_params_prefix(name):
    p = envs.get(name)
    level = p.LEVELS["easy"]
    w, h, i = parse_wxh(level)
    assert (p.parse_params(level).w, p.parse_params(level).h) == (w, h)
    with pytest.raises(GameIdError, match=f"at position {len(str(w)) + 1}: expected a height"):
        p.parse_params(f"{w}x" + level[i:])
    with pytest.raises(GameIdError, match=f"at position {len(str(w)) + 1}: expected a height between [0-9]+ and"):
        p.parse_params(f"{w}x100" + level[i:])


#: Every puzzle whose params start with "W[xH]" -> its (smallest, largest) side: the collection's validate_params
#: minimum; the largest is reasonshape's bound against absurd IDs (99, singles 62).
SIDES = {"bridges": (3, 99), "filling": (1, 99), "loopy": (3, 99), "magnets": (2, 99), "net": (1, 99),
         "range": (1, 99), "signpost": (1, 99), "slant": (2, 99), "tents": (4, 99), "tracks": (4, 99),
         "undead": (3, 99), "lightup": (2, 99), "pattern": (1, 99), "mosaic": (3, 99), "unruly": (6, 99),
         "singles": (2, 62)}


@pytest.mark.parametrize("name", sorted(SIDES))
def test_each_side_is_bounded_and_named(name):
    # Each side is checked on its own, the message names it and points at its digits: lightup had no upper bound;
    # pattern, mosaic and unruly bounded the cell count (1x5000 passed); a side of 0 got parse_wxh's generic
    # "width and height between 1 and 99, got 0x5" rather than the puzzle's own minimum.
    p = envs.get(name)
    lo, hi = SIDES[name]
    level = p.LEVELS["easy"]
    w, h, i = parse_wxh(level)
    rest = level[i:]
    hpos = len(str(w)) + 1
    cases = [(f"{n}x{h}{rest}", 0, "width", n) for n in {0, lo - 1, hi + 1}]
    cases += [(f"{w}x{n}{rest}", hpos, "height", n) for n in {0, lo - 1, hi + 1}]
    for bad, pos, side, got in cases:
        with pytest.raises(GameIdError, match=re.escape(f"at position {pos}: expected a {side} between {lo} and {hi}, "
                                                        f"got {got}")):
            p.parse_params(bad)
    assert p.parse_params(level).w == w
