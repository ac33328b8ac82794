"""Sentence segmentation and the deterministic claim schema."""

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape import envs
from reasonshape.envs import Claim
from reasonshape.extraction.schema import SchemaReader
from reasonshape.extraction.segment import split_sentences, trace_text

SOLO = envs.get("solo")
# A 4x4 sudoku (2x2 boxes) from the collection's dev data.
INST = SOLO.parse_game_id("2x2:b3_1b2b2b1_3b")


def claims(text, inst=INST, puzzle=SOLO):
    return [m.claim for m in SchemaReader(puzzle, inst).read(text)]


def v(r, c, x, positive=True):
    return SOLO.value_claim((r, c), x, positive)


class TestTraceText:
    def test_reasoning_content_comes_first_as_a_think_block(self):
        msg = [{"role": "assistant", "content": "<answer>x</answer>", "reasoning_content": "think"}]
        assert trace_text(msg) == "<think>\nthink\n</think>\n\n<answer>x</answer>"

    def test_plain_and_none(self):
        assert trace_text("abc") == "abc"
        assert trace_text(None) == ""
        assert trace_text(12) == ""

    def test_thinking_key_and_content_parts(self):
        msg = {"role": "assistant", "thinking": "t", "content": [{"type": "text", "text": "a"}]}
        assert trace_text(msg) == "<think>\nt\n</think>\n\na"

    def test_only_assistant_messages_are_read(self):
        conv = [{"role": "user", "content": "<answer>u</answer>"}, {"role": "assistant", "content": "a1"},
                {"role": "tool", "content": "<answer>t</answer>", "reasoning_content": "tool"},
                {"content": "a2"}, {"role": "system", "content": "s"}]
        assert trace_text(conv) == "a1\n\na2"
        assert trace_text({"role": "tool", "content": "<answer>t</answer>"}) == ""
        assert trace_text([{"role": "tool", "content": "<answer>t</answer>"}]) == ""


class TestSplitSentences:
    def test_offsets_point_into_text(self):
        text = "First (1,1) is 3. Then (1,2) is 4!\nRow 2: 1 2 3 4\n\n. . #"
        sents = split_sentences(text)
        assert [s.text for s in sents] == ["First (1,1) is 3.", "Then (1,2) is 4!", "Row 2: 1 2 3 4", ". . #"]
        for s in sents:
            assert text[s.start:s.end] == s.text

    def test_no_split_inside_abbreviation_or_grid(self):
        assert len(split_sentences("e.g. this stays. And this not")) == 2
        assert len(split_sentences(". . . #")) == 1

    def test_linear_on_one_megabyte(self):
        text = "In row 1, (1,2) is 4. " * 50000
        t0 = time.perf_counter()
        assert len(split_sentences(text)) == 50000
        assert time.perf_counter() - t0 < 5


class TestSchema:
    @pytest.mark.parametrize("text", ["(3,4) is 2", "(3, 4) = 2", "r3c4=2", "R3C4 must be 2", "row 3, column 4 is 2",
                                      "cell at row 3 col 4 is 2", "Place 2 at (3,4)", "(3,4) contains the value 2"])
    def test_cell_reference_variants(self, text):
        assert claims(text) == [v(3, 4, 2)]

    @pytest.mark.parametrize("text", ["(2,3) is not 1", "(2,3) can't be 1", "(2,3) cannot be 1", "(2,3) ≠ 1"])
    def test_eliminations(self, text):
        assert claims(text) == [v(2, 3, 1, False)]

    def test_candidates(self):
        assert claims("(2,3) can be 1 or 4") == [Claim("candidates", ((2, 3),), (1, 4))]

    def test_row_listing(self):
        assert claims("Row 4: 1 3 4 2") == [v(4, 1, 1), v(4, 2, 3), v(4, 3, 4), v(4, 4, 2)]

    @pytest.mark.parametrize("text", ["Row 1: ² ² ² ²", "² ² ² ²", "(1,1) is ²", "Row 2: ① 1 2 3"])
    def test_digits_int_cannot_read_are_no_values(self, text):
        # str.isdigit() is True for "²" and "①", which int() rejects: such a row or value is not a claim
        assert claims(text) == []
        assert SchemaReader(SOLO, INST).value("²") is None and SchemaReader(SOLO, INST).value(" 3 ") == 3

    def test_out_of_domain_values_and_cells_are_dropped(self):
        assert claims("(3,4) is 7 and (9,9) is 1") == []

    def test_count_claims(self):
        tents = envs.get("tents")
        inst = tents.generate("easy", seed=0)
        cl = [m.claim for m in SchemaReader(tents, inst).read("Row 3 needs 2 more tents and row 2 has 1 tent.")]
        # "row 2 has 1 tent" is the tents clue claim (the puzzle's own kind wins over the generic count)
        assert [c.kind for c in cl] == ["count_remaining", "row_count"]
        assert cl[0].value == (2, tents.VALUE_WORDS["tent"]) and len(cl[0].cells) == inst.params.w
        solo = [m.claim for m in SchemaReader(SOLO, INST).read("Row 3 has 2 3s")]
        assert solo == []  # digits are not count words

    def test_one_megabyte_trace_is_linear(self):
        text = "(1,1) is 2 and r2c2 = 3; (4,4) can be 1 or 2. " * 22000
        assert len(text) > 1_000_000
        t0 = time.perf_counter()
        out = SchemaReader(SOLO, INST).read(text)
        assert len(out) == 3 * 22000
        assert time.perf_counter() - t0 < 10

    def test_pathological_backtracking_input(self):
        # Long runs that nearly match (digits, spaces, commas, "or") must not blow up.
        text = "(1,1) can be " + "1 or " * 20000 + "x" + "(" * 50000 + "1," * 50000
        t0 = time.perf_counter()
        SchemaReader(SOLO, INST).read(text)
        assert time.perf_counter() - t0 < 10


@pytest.mark.parametrize("name", envs.list_puzzles())
def test_claim_text_reads_back(name):
    """Every sentence a puzzle writes for its claims is read back as exactly that claim (the engine relies on it)."""
    p = envs.get(name)
    inst = p.generate("easy", seed=5)
    reader = SchemaReader(p, inst)
    sol = p.unique_solution(inst)
    doms = p.variables(inst)
    for var in sorted(doms, key=str)[:40]:
        for val in doms[var]:
            for positive in (True, False):
                cl = p.value_claim(var, val, positive)
                got = [m.claim for m in reader.read(p.claim_text(cl))]
                assert got == [cl], (p.claim_text(cl), got)
    assert sol is not None


ROW_DRESSINGS = {"plain": "{}", "backticks": "`{}`", "quotes": '"{}"', "check mark": "{} ✓", "period": "{}.",
                 "answer tag": "<answer>{}", "closing tag": "{}</answer>", "indented": "   {}   "}


@pytest.mark.parametrize("name", envs.list_puzzles())
def test_answer_rows_read_as_grid_rows_in_every_dressing(name):
    """Each line of a puzzle's own answer layout, dressed as models write it (quotes, a check mark, a glued tag...),
    is one grid row (the fast character pre-check of the reader must never reject a row the full reading accepts)."""
    p = envs.get(name)
    inst = p.generate("easy", seed=5)
    reader = SchemaReader(p, inst)
    if not reader.grid:
        pytest.skip(f"{name}: not a cell grid")
    lines = [ln for ln in p.format_answer(inst, p.unique_solution(inst)).splitlines() if ln.strip()]
    for dressing, form in ROW_DRESSINGS.items():
        if dressing == "period" and any("." in ln or "-" in ln for ln in lines):
            continue  # a final "." is a cell where "." is a symbol (or stands for a magnet's blank)
        for ln in lines:
            got = [m.claim.kind for m in reader.read(form.format(ln))]
            assert got == ["_grid_row"], (dressing, form.format(ln), got)


@pytest.mark.parametrize("name", envs.list_puzzles())
def test_claims_the_puzzle_cannot_label_are_skipped_not_fatal(name):
    """The puzzle's own claim forms with any number in place of each of theirs (0-based and off-grid cells, clue
    values no cell holds, a 4,400-digit run) are read only when the puzzle can label them: the reader never hands
    the graph builder a claim whose label raises, and one such sentence never costs the rest of the trace."""
    import re

    from reasonshape.extraction.deterministic import extract_deterministic
    from reasonshape.extraction.labels import label_claim

    p = envs.get(name)
    inst = p.generate("easy", seed=0)
    reader = SchemaReader(p, inst)
    texts = {p.claim_text(c) for c in sorted(p.solution_claims(inst), key=str)[:4]}
    texts |= {p.claim_text(c) for c in p.given_claims(inst)[:4]} | {u.name for u in p.units(inst)[::4][:6]}
    good = p.claim_text(min(p.solution_claims(inst), key=str))
    kept = 0
    for text in sorted(texts):
        for m in re.finditer(r"\d+", text):
            for n in ("0", "1", "2", "7", "12", "99", "9" * 4400):
                bad = text[:m.start()] + n + text[m.end():]
                for mention in reader.read(bad):
                    label_claim(p, inst, mention.claim)  # raises ClaimError for a claim it cannot label
                    kept += 1
                res = extract_deterministic(p, inst, f"{good}. Then {bad}. So {good}.")
                assert len(res.graph) >= 2 and res.fallback is None, bad[:80]
    assert kept  # some mutated numbers still name real cells and values: those claims are read


@pytest.mark.parametrize("name", envs.PUZZLE_NAMES)
def test_every_given_and_solution_claim_is_read_back_from_its_claim_text(name):
    """What ``claim_text`` writes (the engine's traces, the prompts' examples) is read as that claim, negations
    included: on the first dev instances of every puzzle, for every given claim (tents' trees among them) and C*."""
    from tests.envs._tatham import dev_rows

    puzzle = envs.get(name)
    for row in dev_rows(name)[:3]:
        inst = puzzle.parse_game_id(row["game_id"])
        reader = SchemaReader(puzzle, inst)
        for claim in (*puzzle.given_claims(inst), *puzzle.solution_claims(inst)):
            for c in (claim, claim.negated()):
                text = puzzle.claim_text(c)
                assert c in [m.claim for m in reader.read(text)], text


def _split_reference(text):
    """The plain form of split_sentences: the boundary pattern without its look-ahead, spaces trimmed one by one."""
    out, pos = [], 0
    bounds = [(m.start(), m.end()) for m in re.finditer(r"\n+|(?<=[^\s.][.!?])\s+(?=[A-Z0-9(\[<*-])", text)]
    for start, end in [*bounds, (len(text), len(text))]:
        a, b = pos, start
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((len(out), a, b, text[a:b]))
        pos = end
    return out


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=" \t\n\r\u00a0\u2003\u2028\x1c\x85.!?aA1(-*[<\u3000x", max_size=40))
def test_split_sentences_equals_its_plain_form(text):
    """The look-ahead of the boundary pattern and the strip-based trimming change no sentence or offset."""
    assert [tuple(s) for s in split_sentences(text)] == _split_reference(text)
