"""``reasonshape eval``: offline evaluation of a checkpoint, a served model or existing traces.

The pipeline, per instance (a *group* = the k completions of one instance):

    sample -> verify -> extract -> claim graph -> eta and metrics -> structural uncertainty (k >= 2)

Three input modes:

* **local model**: ``--model PATH --backend transformers|vllm`` samples k completions per benchmark instance
  (:mod:`reasonshape.training.manifest`, 21 puzzles x 4 levels x 5 = 420; ``--puzzles/--levels/--limit`` subset it;
  instances of unimplemented puzzles are skipped with a message);
* **served model**: ``--base-url URL --model NAME`` (any OpenAI-compatible endpoint: ``vllm serve``,
  ``transformers serve``, a hosted API);
* **traces**: ``--traces FILE`` scores existing completions (no sampling): our traces schema (JSON lines with
  ``puzzle``, ``game_id``, ``completion``, ``model``, optional ``tokens``...; see :func:`load_traces`) or
  reasoning-gym-eval result files (:func:`import_reasoning_gym_eval`). With no input at all, the traces shipped in
  the package (``reasonshape/data/embedded_traces.jsonl``, real reasoning-gym futoshiki/sudoku traces) are used.

Outputs in ``--out DIR``: ``results.jsonl`` (one record per completion, :data:`RESULT_KEYS`), ``run_meta.json``
(model, backend, library versions, seeds, sampling settings, time split sampling vs scoring, median scoring overhead
per completion) and ``report.md`` / ``report.html`` (:func:`reasonshape.training.report.build_report`).

Resume semantics: records are appended one group at a time, in one ``write`` followed by ``flush`` and
``os.fsync`` (:class:`ResultsLog`). A rerun with the same ``--out`` reads the ids already written and skips those
groups; a truncated last line (a kill during the write) is dropped and the torn group redone; a group whose records
are only partly present at the end of the file is removed and redone. So a ``kill -9`` loses at most the batch of
groups in flight (``--batch-instances``, default 8; 1 gives group granularity) and never duplicates a record.

Source: paper A §A (benchmark, temperature 1, one shared solver prompt, accuracy and tokens per level), §B-C (claim
graphs, eta and the baselines, via :func:`reasonshape.rewards.scorer.score_completion`); paper B (structural
uncertainty of the k samples judged by the same model, via :func:`reasonshape.rewards.structural_uncertainty.
score_groups`). File layout, ids, resume and batching are reasonshape choices.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import platform
import re
import signal
import statistics
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Literal

from reasonshape.errors import ConfigError, ReasonshapeError, UnknownPuzzleError

__all__ = [
    "RESULT_KEYS",
    "EMBEDDED_TRACES_RESOURCE",
    "TraceRecord",
    "embedded_traces_path",
    "load_traces",
    "import_reasoning_gym_eval",
    "read_traces",
    "ResultsLog",
    "EvalConfig",
    "EvalSummary",
    "run_eval",
    "make_parser",
    "add_parser",
    "config_from_args",
    "main",
]

log = logging.getLogger(__name__)

#: Keys of one ``results.jsonl`` record, in file order (the report builder reads exactly these).
RESULT_KEYS: tuple[str, ...] = (
    "id", "puzzle", "level", "game_id", "model", "sample", "tokens", "finish_reason", "correct", "parse_error",
    "violations", "n_sentences", "metrics", "labels", "extraction", "su", "dispersion", "timing", "graph",
)
#: Package-relative path of the shipped real traces.
EMBEDDED_TRACES_RESOURCE = "data/embedded_traces.jsonl"
#: Level recorded for traces whose instance is not in the benchmark manifest and that carry no ``level``.
EXTERNAL_LEVEL = "external"
_LABEL_KEYS = ("correct", "wrong", "unverifiable", "tentative")
#: reasoning-gym tasks the importer reads (the others in a result directory are skipped).
_RG_TASKS = ("futoshiki", "sudoku", "mini_sudoku")


# ===================================================================================================== traces
@dataclass(frozen=True)
class TraceRecord:
    """One existing completion to score (our traces schema, one JSON object per line).

    Attributes
    ----------
    puzzle : str
        Registry name of the puzzle (``"solo"``, ``"unequal"``...).
    game_id : str
        The instance's ``params:desc``.
    completion : str or list of message dicts
        The model's full response (TRL standard or conversational; ``reasoning_content`` is read).
    model : str
        Who wrote it; traces of one model on one instance form a group.
    tokens : int or None
        Completion length in tokens, when known.
    finish_reason : str or None
        ``"stop"``, ``"length"``... when known.
    level : str or None
        Benchmark level; default: the manifest's level for this game ID, else ``"external"``.
    source, license : str or None
        Provenance and licence of the text.
    """

    puzzle: str
    game_id: str
    completion: Any
    model: str = "unknown"
    tokens: int | None = None
    finish_reason: str | None = None
    level: str | None = None
    source: str | None = None
    license: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The record as a traces-file line (``None`` fields left out).

        Examples
        --------
        >>> TraceRecord("solo", "2x2:1c2f3c1", "<answer>...</answer>", "m", tokens=12).to_json()
        {'puzzle': 'solo', 'game_id': '2x2:1c2f3c1', 'completion': '<answer>...</answer>', 'model': 'm', 'tokens': 12}
        """
        return {k: v for k, v in asdict(self).items() if v is not None}


def embedded_traces_path() -> Path:
    """Filesystem path of the shipped real traces (``importlib.resources``)."""
    return Path(str(resources.files("reasonshape").joinpath(EMBEDDED_TRACES_RESOURCE)))


def _trace_error(where: str, msg: str) -> ReasonshapeError:
    from reasonshape.envs.interop import TraceFileError

    return TraceFileError(f"{where}: {msg}")


def _trace_from_obj(obj: Any, where: str) -> TraceRecord:
    if not isinstance(obj, dict):
        raise _trace_error(where, f"expected a JSON object, got {type(obj).__name__}")
    missing = [k for k in ("puzzle", "game_id", "completion") if k not in obj]
    if missing:
        raise _trace_error(where, f"missing field(s) {missing} (our traces schema needs puzzle, game_id, completion)")
    for k in ("puzzle", "game_id"):
        if not isinstance(obj[k], str) or not obj[k]:
            raise _trace_error(where, f"{k} must be a non-empty string, got {obj[k]!r}")
    comp = obj["completion"]
    if not (isinstance(comp, str) or (isinstance(comp, list) and all(isinstance(m, dict) for m in comp))):
        raise _trace_error(where, "completion must be a string or a list of message objects")
    tokens = obj.get("tokens")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0):
        raise _trace_error(where, f"tokens must be an integer >= 0 or null, got {tokens!r}")
    for k in ("model", "finish_reason", "level", "source", "license"):
        if obj.get(k) is not None and not isinstance(obj[k], str):
            raise _trace_error(where, f"{k} must be a string or null, got {obj[k]!r}")
    return TraceRecord(puzzle=obj["puzzle"], game_id=obj["game_id"], completion=comp,
                       model=obj.get("model") or "unknown", tokens=tokens, finish_reason=obj.get("finish_reason"),
                       level=obj.get("level"), source=obj.get("source"), license=obj.get("license"))


def load_traces(path: str | Path) -> list[TraceRecord]:
    """Read a traces file in our schema: JSON lines ``{"puzzle", "game_id", "completion", "model", "tokens"?,
    "finish_reason"?, "level"?, "source"?, "license"?}``.

    Parameters
    ----------
    path : str or Path
        A ``.jsonl`` file; blank lines are skipped.

    Returns
    -------
    list of TraceRecord
        In file order.

    Raises
    ------
    ConfigError
        The file cannot be read.
    TraceFileError
        (:class:`reasonshape.envs.interop.TraceFileError`, a ``ValueError``) a line that is not JSON or breaks the
        schema; the message names the file, the line and the field.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"traces must be a readable file, got {str(path)!r}: {e}") from e
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise _trace_error(f"{path}:{lineno}", f"not JSON ({e.msg})") from None
        out.append(_trace_from_obj(obj, f"{path}:{lineno}"))
    return out


_RUN_STAMP = re.compile(r"_\d{8}_\d{6}$")


def _rg_model_from_path(path: Path) -> str:
    """reasoning-gym-eval stores each run in ``<model>_<YYYYMMDD>_<HHMMSS>/<category>/<task>.json``; the model is
    the run directory's name without its time stamp (``"unknown"`` when no parent directory has one)."""
    for d in (path.parent.parent, path.parent):
        if _RUN_STAMP.search(d.name):
            return _RUN_STAMP.sub("", d.name) or "unknown"
    return "unknown"


def _rg_result_file(path: Path) -> list[TraceRecord]:
    from reasonshape.envs.interop import REASONING_GYM_TASKS, ReasoningGymParseError, from_reasoning_gym

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise _trace_error(str(path), f"not a readable JSON result file ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise _trace_error(str(path), "expected a reasoning-gym-eval result object with a 'results' list")
    task = doc.get("name") or path.stem
    if task not in REASONING_GYM_TASKS:
        log.info("%s: reasoning-gym task %r has no reasonshape puzzle; skipped", path, task)
        return []
    model = doc.get("model") if isinstance(doc.get("model"), str) else _rg_model_from_path(path)
    out = []
    for qi, res in enumerate(doc["results"]):
        if not isinstance(res, dict) or not isinstance(res.get("question"), str):
            raise _trace_error(f"{path}#{qi}", "a result needs a 'question' string")
        try:
            inst = from_reasoning_gym(task, res["question"])
        except ReasoningGymParseError as e:
            log.warning("%s#%d: question skipped, its puzzle cannot be read (%s)", path, qi, e)
            continue
        # Newer files: several completions per question; older ones: one full_model_response per result.
        comps = res.get("completions")
        if isinstance(comps, list) and comps:
            texts = [c.get("full_model_response") for c in comps if isinstance(c, dict)]
        else:
            texts = [res.get("full_model_response")]
        for ci, text in enumerate(texts):
            if not isinstance(text, str):
                raise _trace_error(f"{path}#{qi}.{ci}", "full_model_response must be a string")
            out.append(TraceRecord(puzzle=inst.puzzle, game_id=inst.game_id, completion=text, model=model,
                                   source=f"{path}#{qi}.{ci}"))
    return out


def import_reasoning_gym_eval(path: str | Path) -> list[TraceRecord]:
    """Import reasoning-gym-eval results (futoshiki, sudoku, mini_sudoku) as :class:`TraceRecord` objects.

    Reads, by what ``path`` is:

    * a ``.json`` result file of reasoning-gym-eval (``{"name": task, "results": [...]}``; each result has a
      ``question`` and either ``completions: [{"full_model_response", ...}]`` (paper-experiments runs) or one
      ``full_model_response`` (older runs)); the model comes from a top-level ``model`` field or from the run
      directory name ``<model>_<YYYYMMDD>_<HHMMSS>``;
    * a directory: every ``futoshiki.json``, ``sudoku.json`` and ``mini_sudoku.json`` below it (sorted);
    * a ``.jsonl`` file in the layout of ``shared/data/real_traces`` (``task``, ``question``, ``completion``,
      ``model``, ``source``, ``license``), through :func:`reasonshape.envs.interop.load_reasoning_gym_traces`.

    Each question becomes the equivalent instance (:func:`reasonshape.envs.interop.from_reasoning_gym`: futoshiki
    -> ``unequal``, sudoku / mini_sudoku -> ``solo``); questions whose grid cannot be read are skipped with a warning.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    list of TraceRecord
        In file order.

    Raises
    ------
    ConfigError
        ``path`` does not exist.
    TraceFileError
        A file that is not a reasoning-gym-eval result (the message names it).
    """
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"traces must be an existing file or directory, got {str(path)!r}")
    if p.is_dir():
        out: list[TraceRecord] = []
        for f in sorted(p.rglob("*.json")):
            if f.stem in _RG_TASKS:
                out.extend(_rg_result_file(f))
        return out
    if p.suffix == ".jsonl":
        from reasonshape.envs.interop import load_reasoning_gym_traces

        lic = _jsonl_license(p)
        return [TraceRecord(puzzle=t.instance.puzzle, game_id=t.instance.game_id, completion=t.completion,
                            model=t.model or "unknown", source=t.source or None, license=lic)
                for t in load_reasoning_gym_traces(p)]
    return _rg_result_file(p)


def _jsonl_license(path: Path) -> str | None:
    # load_reasoning_gym_traces drops the licence field; files in the shared layout carry one licence per row and
    # every row of reasoning-gym-eval is Apache-2.0. Read it back from the first row (cheap, one line).
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                lic = json.loads(line).get("license")
                return lic if isinstance(lic, str) else None
    return None


def read_traces(path: str | Path, fmt: Literal["auto", "reasonshape", "reasoning_gym"] = "auto") -> list[TraceRecord]:
    """Read traces in our schema or reasoning-gym-eval's, choosing by ``fmt``.

    ``"auto"``: a directory or a ``.json`` file is reasoning-gym-eval; a ``.jsonl`` file whose first object has
    ``game_id`` is ours, one with ``task`` and ``question`` is reasoning-gym's.

    Raises
    ------
    ConfigError
        Unknown ``fmt``, a missing path, or (``"auto"``) a ``.jsonl`` file whose first line is not JSON or
        matches neither schema.
    TraceFileError
        Malformed lines (see :func:`load_traces`, :func:`import_reasoning_gym_eval`).
    """
    if fmt not in ("auto", "reasonshape", "reasoning_gym"):
        raise ConfigError(f"traces_format must be 'auto', 'reasonshape' or 'reasoning_gym', got {fmt!r}")
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"traces must be an existing file or directory, got {str(path)!r}")
    if fmt == "reasonshape":
        return load_traces(p)
    if fmt == "reasoning_gym" or p.is_dir() or p.suffix == ".json":
        return import_reasoning_gym_eval(p)
    with open(p, encoding="utf-8") as f:
        lineno, first = next(((i, ln) for i, ln in enumerate(f, 1) if ln.strip()), (0, ""))
    if not first:
        raise ConfigError(f"traces file {str(p)!r} is empty (no non-blank line): no completion to score")
    try:
        obj = json.loads(first)
    except json.JSONDecodeError as e:
        raise ConfigError(f"traces file {str(p)!r}:{lineno}: not JSON ({e.msg}); each line must be one JSON object, "
                          "in our schema (puzzle, game_id, completion) or reasoning-gym's (task, question, "
                          "completion)") from None
    if isinstance(obj, dict) and "game_id" in obj:
        return load_traces(p)
    if isinstance(obj, dict) and "task" in obj and "question" in obj:
        return import_reasoning_gym_eval(p)
    has = f"fields {sorted(obj)[:12]}" if isinstance(obj, dict) else f"a JSON {type(obj).__name__}"
    raise ConfigError(f"traces file {str(p)!r}:{lineno} has {has}, matching neither our schema (puzzle, game_id, "
                      "completion) nor reasoning-gym's (task, question, completion); fix the file, or pass "
                      "--traces-format to read it as one of them and see what is missing")


# ===================================================================================================== results log
def _json_default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _group_of(record_id: str) -> str:
    return record_id.rsplit("#", 1)[0]


class ResultsLog:
    """``results.jsonl``, append-only and crash-safe: the resume bookkeeping of :func:`run_eval`.

    On opening an existing file, every complete line (ending in a newline) is parsed; a last line without its
    newline, or one that is not JSON, is a torn write and is cut off (the file is truncated to the last good line).
    :meth:`drop_partial_tail` then removes a group whose records are only partly present at the end of the file.
    :meth:`append_group` writes one group's records in a single ``write`` and ``fsync``\\ s it.

    Parameters
    ----------
    path : str or Path
        The results file (created with its parent directory when missing).

    Attributes
    ----------
    ids : set of str
        Record ids present in the file.
    n_records : int
        Records in the file.
    graphs : dict of str -> bool or None
        Ids of the records in the file that keep their claim graph, with their ``correct`` value (what
        ``--keep-graphs`` counts; a group removed as a torn tail leaves it too).

    Raises
    ------
    ConfigError
        A line before the last one is not valid JSON or has no ``id`` (the file was edited; the message names the
        line), or an id appears twice.

    Notes
    -----
    Record ids are ``<group id>#<sample>``; the group id of a benchmark instance is its manifest id
    (``"tents/easy/3"``), that of a trace group ``"<puzzle>/<level>/<hash of game ID and model>"``. Source:
    reasonshape choice.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lines: list[tuple[int, str]] = []  # (byte offset of the line start, record id)
        self.ids: set[str] = set()
        self.graphs: dict[str, bool | None] = {}
        if not self.path.exists():
            self.path.touch()
            return
        data = self.path.read_bytes()
        good_end = 0
        pos = 0
        lineno = 0
        while pos < len(data):
            nl = data.find(b"\n", pos)
            lineno += 1
            if nl < 0:  # no newline: a torn last write
                break
            raw = data[pos:nl]
            if raw.strip():
                try:
                    rec = json.loads(raw)
                    rid = rec["id"]
                    if not isinstance(rid, str):
                        raise TypeError
                except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError):
                    if not data[nl + 1:].strip():  # the last line: torn by a kill during its write
                        break
                    raise ConfigError(f"{self.path}:{lineno}: not a results record (edited by hand?); move the "
                                      "file away or fix the line") from None
                if rid in self.ids:
                    raise ConfigError(f"{self.path}:{lineno}: duplicate record id {rid!r}")
                self.ids.add(rid)
                self._lines.append((pos, rid))
                if rec.get("graph") is not None:
                    self.graphs[rid] = rec.get("correct")
            pos = nl + 1
            good_end = pos
        if good_end < len(data):
            log.warning("%s: dropped a torn last line (%d bytes) left by an interrupted run", self.path,
                        len(data) - good_end)
            self._truncate(good_end)

    @property
    def n_records(self) -> int:
        return len(self._lines)

    @property
    def n_graphs(self) -> int:
        """Records in the file that keep their claim graph."""
        return len(self.graphs)

    def _truncate(self, size: int) -> None:
        with open(self.path, "r+b") as f:
            f.truncate(size)
            f.flush()
            os.fsync(f.fileno())

    def drop_partial_tail(self, expected: Mapping[str, int]) -> list[str]:
        """Remove the trailing group if only some of its records were written.

        Parameters
        ----------
        expected : mapping of group id -> number of records in the full group

        Returns
        -------
        list of str
            The ids removed (empty when the file ends with a complete group).

        Raises
        ------
        ConfigError
            A group other than the last one is incomplete, or has more records than expected: the file was written
            with other settings (e.g. another ``k``); use a new output directory.
        """
        counts: dict[str, int] = {}
        for _, rid in self._lines:
            g = _group_of(rid)
            counts[g] = counts.get(g, 0) + 1
        tail = _group_of(self._lines[-1][1]) if self._lines else None
        for g, c in counts.items():
            want = expected.get(g)
            if want is None:
                continue  # a group of another subset (other --puzzles/--limit): kept, not ours to judge
            if c > want or (c < want and g != tail):
                raise ConfigError(f"{self.path}: group {g!r} has {c} records where this run expects {want} (was it "
                                  "written with another k or traces file?); use a new --out directory")
        if tail is None or expected.get(tail) is None or counts[tail] == expected[tail]:
            return []
        start = next(i for i, (_, rid) in enumerate(self._lines) if _group_of(rid) == tail)
        removed = [rid for _, rid in self._lines[start:]]
        self._truncate(self._lines[start][0])
        del self._lines[start:]
        self.ids.difference_update(removed)
        for rid in removed:  # the removed group's kept graphs no longer count against --keep-graphs
            self.graphs.pop(rid, None)
        log.warning("%s: removed %d records of the incomplete group %r (it is redone)", self.path, len(removed), tail)
        return removed

    def append_group(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Append one group's records (one write, then flush and fsync).

        Raises
        ------
        ConfigError
            A record id is already in the file (it would be a duplicate).
        """
        ids = [r["id"] for r in records]
        dup = [i for i in ids if i in self.ids]
        if dup or len(set(ids)) != len(ids):
            raise ConfigError(f"refusing to write duplicate record ids {dup or ids}")
        payload = "".join(json.dumps(r, ensure_ascii=False, default=_json_default) + "\n" for r in records)
        data = payload.encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            start = os.lseek(fd, 0, os.SEEK_END)
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        offset = start
        for r, line in zip(records, payload.splitlines(keepends=True), strict=True):
            self._lines.append((offset, r["id"]))
            offset += len(line.encode("utf-8"))
            self.ids.add(r["id"])
            if r.get("graph") is not None:
                self.graphs[r["id"]] = r.get("correct")

    def records(self) -> list[dict[str, Any]]:
        """All records in the file (re-read from disk)."""
        out = []
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    out.append(json.loads(line))
        return out


# ===================================================================================================== config
_BACKENDS = ("transformers", "vllm", "openai")
#: Largest GPU memory share the policy's and the judge's vLLM engines may ask for together (vLLM needs the rest
#: for the CUDA context and its own overhead outside its budget).
MAX_VLLM_MEMORY = 0.95
#: ``gpu_memory_utilization`` of each of two vLLM engines when the option is not given (vLLM's default 0.9, split).
SHARED_VLLM_MEMORY = 0.45


@dataclass
class EvalConfig:
    """Settings of one eval run; each field is one ``reasonshape eval`` flag (``--out``, ``--k``...).

    Cross-field rules are checked in ``__post_init__`` (``ConfigError`` naming the field, the value and the fix).
    """

    # ----------------------------------------------------------------- inputs and outputs
    out: str = field(default="eval_out", metadata={"help": "output directory (results.jsonl, run_meta.json, "
                                                          "report.md/.html); a rerun with the same one resumes"})
    traces: str | None = field(default=None, metadata={
        "help": "score existing completions: a JSON-lines file in our traces schema, or reasoning-gym-eval result "
                "files (.json file, directory, or the shared .jsonl layout); no sampling"})
    traces_format: Literal["auto", "reasonshape", "reasoning_gym"] = field(default="auto", metadata={
        "help": "format of --traces (auto: by extension and first line)"})
    embedded: bool = field(default=False, metadata={
        "help": "score the real traces shipped with reasonshape (also what happens with neither --model nor "
                "--traces)"})
    model: str | None = field(default=None, metadata={
        "help": "model directory (transformers/vllm) or served model name (with --base-url)"})
    backend: Literal["transformers", "vllm", "openai"] | None = field(default=None, metadata={
        "help": "generation backend (default: openai with --base-url, else transformers)"})
    base_url: str | None = field(default=None, metadata={"help": "OpenAI-compatible endpoint, e.g. "
                                                                 "http://127.0.0.1:8000/v1"})
    api_key_env: str = field(default="OPENAI_API_KEY", metadata={
        "help": "environment variable holding the API key (never logged)"})
    model_name: str | None = field(default=None, metadata={"help": "model name written in the records "
                                                                   "(default: --model)"})
    # ----------------------------------------------------------------- benchmark subset
    puzzles: list[str] | None = field(default=None, metadata={"help": "puzzles to evaluate (default: all 21)"})
    levels: list[str] | None = field(default=None, metadata={"help": "levels: trivial easy normal hard"})
    limit: int | None = field(default=None, metadata={
        "help": "keep the first N instances (manifest entries, or trace groups) after filtering, in file order "
                "(not N per puzzle)"})
    # ----------------------------------------------------------------- sampling
    k: int = field(default=1, metadata={"help": "samples per instance (k >= 2 enables structural uncertainty)"})
    temperature: float = field(default=1.0, metadata={"help": "sampling temperature (paper A: 1)"})
    top_p: float = field(default=1.0, metadata={"help": "nucleus mass in (0, 1]"})
    max_tokens: int = field(default=4096, metadata={"help": "largest completion length in tokens"})
    seed: int = field(default=0, metadata={"help": "seed of sampling, judge trees and judge sampling"})
    system_prompt: str | None = field(default=None, metadata={
        "help": "system prompt (default: the shared solver prompt of reasonshape.envs.dataset)"})
    prompt_format: str = field(default="conversational", metadata={
        "help": "prompt layout: conversational (chat messages, the model's chat template applied) or standard (one "
                "string, system prompt and puzzle separated by a blank line: a base model without a chat template)"})
    chat_template_kwargs: dict[str, Any] | str | None = field(default=None, metadata={
        "help": "keywords for the evaluated model's chat template, a JSON object, e.g. '{\"enable_thinking\": "
                "false}' (transformers/vllm: apply_chat_template / LLM.chat; openai: the request's "
                "chat_template_kwargs, which vLLM's server reads)"})
    batch_instances: int = field(default=8, metadata={
        "help": "instances sampled per backend call; a kill loses at most this batch"})
    device: str = field(default="auto", metadata={"help": "transformers backend device (auto, cpu, cuda...)"})
    dtype: str | None = field(default=None, metadata={"help": "transformers/vllm dtype, e.g. bfloat16"})
    gpu_memory_utilization: float | None = field(default=None, metadata={
        "help": "vLLM engines (--backend vllm, --judge-backend vllm): share of GPU memory each engine may take, in "
                "(0, 1]; default vLLM's 0.9, or 0.45 each when the policy and the judge are both vLLM engines (then "
                "at most 0.475 each)"})
    max_concurrency: int = field(default=16, metadata={"help": "openai backend: requests in flight"})
    use_n: bool = field(default=False, metadata={
        "help": "openai backend: ask for the k samples in one request (vLLM serve supports n; transformers serve "
                "does not)"})
    # ----------------------------------------------------------------- structural uncertainty and extraction
    su: bool = field(default=True, metadata={"help": "structural uncertainty for groups of k >= 2 (paper B)"})
    su_trials: int = field(default=8, metadata={"help": "spanning-tree trials M per group (M*(k-1) judge calls)"})
    judge_max_tokens: int = field(default=512, metadata={"help": "judge reply length in tokens"})
    judge_unparsed: str = field(default="tie", metadata={
        "help": "a judge reply without a readable verdict: tie (0.5) or drop (left out of the Bradley-Terry fit)"})
    judge_model: str | None = field(default=None, metadata={
        "help": "judge for --traces mode (a model directory, or a served name with --judge-base-url); sampling "
                "mode uses the policy itself unless given"})
    judge_backend: Literal["transformers", "vllm", "openai"] | None = field(default=None, metadata={
        "help": "judge backend (default: openai with --judge-base-url, else transformers)"})
    judge_base_url: str | None = field(default=None, metadata={"help": "judge's OpenAI-compatible endpoint"})
    judge_chat_template_kwargs: dict[str, Any] | str | None = field(default=None, metadata={
        "help": "keywords for the judge's chat template, a JSON object, e.g. '{\"enable_thinking\": false}' for a "
                "model that thinks by default (Qwen3), whose verdict would otherwise come after a <think> block "
                "likely cut at --judge-max-tokens (an unread verdict is a tie); default: the evaluated model's "
                "--chat-template-kwargs when it is its own judge, none for --judge-model"})
    llm_extraction: bool = field(default=False, metadata={
        "help": "LLM-assisted claim extraction through the judge/policy backend (default: deterministic)"})
    keep_graphs: int = field(default=3, metadata={
        "help": "records that keep their claim graph (node-link JSON): the first N non-empty ones, plus the first "
                "correct and the first wrong one when they come later (the report's examples); 0 keeps none"})
    # ----------------------------------------------------------------- output
    report: bool = field(default=True, metadata={"help": "write report.md and report.html at the end"})
    progress: bool = field(default=True, metadata={"help": "show a progress bar (rate, ETA) on stderr"})

    def __post_init__(self):
        if self.puzzles is not None and isinstance(self.puzzles, str):
            self.puzzles = [self.puzzles]
        if self.levels is not None and isinstance(self.levels, str):
            self.levels = [self.levels]
        if self.base_url is not None and self.backend is None:
            self.backend = "openai"
        if self.judge_base_url is not None and self.judge_backend is None:
            self.judge_backend = "openai"
        from reasonshape.training.backends import chat_template_kwargs_from

        self.chat_template_kwargs = chat_template_kwargs_from(self.chat_template_kwargs, "chat_template_kwargs")
        self.judge_chat_template_kwargs = chat_template_kwargs_from(self.judge_chat_template_kwargs,
                                                                    "judge_chat_template_kwargs")
        from reasonshape.envs.dataset import PROMPT_FORMATS
        from reasonshape.rewards.structural_uncertainty import UNPARSED_POLICIES

        if self.judge_unparsed not in UNPARSED_POLICIES:
            raise ConfigError(f"judge_unparsed must be 'tie' or 'drop', got {self.judge_unparsed!r}")
        if self.prompt_format not in PROMPT_FORMATS:
            raise ConfigError(f"prompt_format must be one of {', '.join(PROMPT_FORMATS)}, got {self.prompt_format!r}")
        if not isinstance(self.out, (str, Path)) or not str(self.out):
            raise ConfigError(f"out must be a directory path, got {self.out!r}")
        self.out = str(self.out)
        if self.embedded and (self.traces is not None or self.model is not None):
            raise ConfigError("embedded excludes traces and model: it scores the shipped traces; drop --embedded "
                              "or the other input")
        if self.traces is not None and self.model is not None:
            raise ConfigError("traces and model exclude each other: --traces scores existing completions, --model "
                              "samples new ones; give one")
        if self.traces is not None and self.base_url is not None:
            raise ConfigError("traces and base_url exclude each other; for a judge in --traces mode use "
                              "--judge-base-url / --judge-model")
        if self.backend is not None and self.model is None:
            raise ConfigError(f"model must be given with backend {self.backend!r}, got None")
        if self.base_url is not None and self.model is None:
            raise ConfigError("model must name the served model when base_url is given, got None")
        if self.backend is not None and self.backend not in _BACKENDS:
            raise ConfigError(f"backend must be one of {list(_BACKENDS)}, got {self.backend!r}")
        if self.judge_backend is not None and self.judge_backend not in _BACKENDS:
            raise ConfigError(f"judge_backend must be one of {list(_BACKENDS)}, got {self.judge_backend!r}")
        if self.backend == "openai" and self.base_url is None:
            raise ConfigError("base_url must be given for backend 'openai', got None")
        if self.judge_backend == "openai" and (self.judge_base_url is None or self.judge_model is None):
            raise ConfigError("judge_base_url and judge_model must both be given for judge_backend 'openai'")
        if self.judge_base_url is not None and self.judge_model is None:
            raise ConfigError("judge_model must name the served judge model when judge_base_url is given")
        for name, lo in (("k", 1), ("max_tokens", 1), ("batch_instances", 1), ("su_trials", 1),
                         ("judge_max_tokens", 1), ("max_concurrency", 1), ("keep_graphs", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ConfigError(f"{name} must be an integer >= {lo}, got {v!r}")
        gmu = self.gpu_memory_utilization
        if gmu is not None:
            if isinstance(gmu, bool) or not isinstance(gmu, (int, float)) or not 0 < gmu <= 1:
                raise ConfigError(f"gpu_memory_utilization must be a number in (0, 1], got {gmu!r}")
            if self.vllm_engines == 0:
                raise ConfigError("gpu_memory_utilization sets vLLM engines' memory, but none is built: use it with "
                                  f"--backend vllm or --judge-backend vllm, or drop it, got backend={self.backend!r}, "
                                  f"judge_backend={self.judge_backend!r}")
            if self.vllm_engines == 2 and 2 * gmu > MAX_VLLM_MEMORY:
                raise ConfigError(f"gpu_memory_utilization must be at most {MAX_VLLM_MEMORY / 2} when the policy "
                                  f"and the judge are both vLLM engines (each takes that share of the same GPU, "
                                  f"{MAX_VLLM_MEMORY} at most together), got {gmu}")
        if self.limit is not None and (isinstance(self.limit, bool) or not isinstance(self.limit, int)
                                       or self.limit < 1):
            raise ConfigError(f"limit must be an integer >= 1 or None, got {self.limit!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ConfigError(f"seed must be an integer, got {self.seed!r}")
        if not isinstance(self.temperature, (int, float)) or not math.isfinite(self.temperature) \
                or self.temperature < 0:
            raise ConfigError(f"temperature must be a finite number >= 0, got {self.temperature!r}")
        if not isinstance(self.top_p, (int, float)) or not 0 < self.top_p <= 1:
            raise ConfigError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if self.traces_format not in ("auto", "reasonshape", "reasoning_gym"):
            raise ConfigError(f"traces_format must be 'auto', 'reasonshape' or 'reasoning_gym', "
                              f"got {self.traces_format!r}")
        if self.levels is not None:
            from reasonshape.envs.base import LEVEL_NAMES

            bad = [lv for lv in self.levels if lv not in LEVEL_NAMES and lv != EXTERNAL_LEVEL]
            if bad:
                raise ConfigError(f"levels must be among {list(LEVEL_NAMES)} (or {EXTERNAL_LEVEL!r} for traces), "
                                  f"got {bad}")

    @property
    def vllm_engines(self) -> int:
        """vLLM engines this run builds in its process: the policy's (sampling with ``--backend vllm``) and the
        judge's (``--judge-model`` with ``--judge-backend vllm``)."""
        policy = self.model is not None and self.backend == "vllm"
        judge = self.judge_model is not None and self.judge_backend == "vllm"
        return int(policy) + int(judge)

    def vllm_gpu_memory(self) -> float | None:
        """``gpu_memory_utilization`` for each vLLM engine: the option's value, else
        :data:`SHARED_VLLM_MEMORY` when two engines share the GPU, else ``None`` (vLLM's default, 0.9)."""
        if self.gpu_memory_utilization is not None:
            return float(self.gpu_memory_utilization)
        return SHARED_VLLM_MEMORY if self.vllm_engines == 2 else None

    def judge_template_kwargs(self) -> dict[str, Any] | None:
        """The judge's chat-template keywords: ``judge_chat_template_kwargs`` when given, else the evaluated
        model's ``chat_template_kwargs`` when it is its own judge (sampling mode without ``judge_model``)."""
        if self.judge_chat_template_kwargs is not None:
            return self.judge_chat_template_kwargs
        return self.chat_template_kwargs if self.mode == "sample" and self.judge_model is None else None

    @property
    def mode(self) -> Literal["sample", "traces"]:
        """``"sample"`` with a model, else ``"traces"`` (the embedded traces when ``traces`` is None)."""
        return "sample" if self.model is not None else "traces"

    def fingerprint(self) -> dict[str, Any]:
        """The settings a resumed run must share with the run that started ``results.jsonl``.

        A model loaded from a local directory (not through ``base_url``) adds ``checkpoint``, and a judge loaded from
        one (``judge_model`` without ``judge_base_url``) adds ``judge_checkpoint``: the directory's
        :func:`~reasonshape.training.backends.checkpoint_identity` (names, sizes and modification times of
        ``config.json`` and the weight files), since a checkpoint replaced at the same path is another model. A stored
        fingerprint without them (written before they existed) resumes: see :data:`_UNKNOWN_WHEN_MISSING`. An
        entry of :data:`_DEFAULT_WHEN_MISSING` holding its default is left out, as runs before the option wrote it.
        """
        su = {"su": self.su, "su_trials": self.su_trials, "judge_model": self.judge_model,
              "llm_extraction": self.llm_extraction, "judge_unparsed": self.judge_unparsed}
        judge_checkpoint = _local_identity(self.judge_model, self.judge_backend)
        if judge_checkpoint is not None:
            su["judge_checkpoint"] = judge_checkpoint
        if self.mode == "sample":
            fp = {"mode": "sample", "model": self.model_name or self.model, "k": self.k,
                  "temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens,
                  "system_prompt": self.system_prompt, "chat_template_kwargs": self.chat_template_kwargs,
                  "prompt_format": self.prompt_format, **su}
            checkpoint = _local_identity(self.model, self.backend)
            if checkpoint is not None:
                fp["checkpoint"] = checkpoint
        else:
            fp = {"mode": "traces", "traces": str(Path(self.traces).resolve()) if self.traces else "embedded", **su}
        return {k: v for k, v in fp.items() if k not in _DEFAULT_WHEN_MISSING or v != _DEFAULT_WHEN_MISSING[k]}


def _check_chat_templates(cfg: EvalConfig, backend: Any, judge: Any, llm_backend: Any) -> None:
    """Refuse, before anything is sampled, chat messages for a loaded model whose tokenizer has no chat template
    (a base model): the evaluated model's prompts in the conversational format, a ``--judge-model``'s comparisons
    (the policy judging itself uses ``--prompt-format``), and ``--llm-extraction``'s prompts. A served model
    (no tokenizer here) is not checked.

    Raises
    ------
    ConfigError
        Naming the model and the option that fixes it.
    """
    def lacks(b: Any) -> bool:
        tok = getattr(b, "tokenizer", None) if b is not None else None
        return tok is not None and not getattr(tok, "chat_template", None)

    if cfg.mode == "sample" and cfg.prompt_format == "conversational" and lacks(backend):
        raise ConfigError(f"the tokenizer of --model {cfg.model!r} has no chat template, so conversational prompts "
                          "cannot be rendered: evaluate it with --prompt-format standard")
    if cfg.judge_model is not None and lacks(judge):
        raise ConfigError(f"the tokenizer of --judge-model {cfg.judge_model!r} has no chat template, and the judge's "
                          "comparisons are chat messages: give a chat model as --judge-model, or --no-su")
    if llm_backend is not None and lacks(llm_backend):
        raise ConfigError("--llm-extraction sends chat messages, and the tokenizer of "
                          f"{cfg.judge_model or cfg.model!r} has no chat template: drop --llm-extraction")


def _local_identity(model: str | None, backend: str | None) -> str | None:
    """:func:`~reasonshape.training.backends.checkpoint_identity` of a model the run loads itself (``None`` for a
    served one, ``backend == "openai"``, and for no model)."""
    from reasonshape.training.backends import checkpoint_identity

    return None if model is None or backend == "openai" else checkpoint_identity(model)


# ===================================================================================================== the run
@dataclass
class _Group:
    """One group: an instance and its completions (given, or filled in by sampling)."""

    gid: str
    puzzle: Any
    instance: Any
    level: str
    model: str
    k: int
    completions: list[Any] = field(default_factory=list)
    tokens: list[int | None] = field(default_factory=list)
    finish: list[str | None] = field(default_factory=list)
    sample_s: list[float | None] = field(default_factory=list)

    def record_id(self, i: int) -> str:
        return f"{self.gid}#{i}"


@dataclass(frozen=True)
class EvalSummary:
    """What :func:`run_eval` did.

    Attributes
    ----------
    out_dir, results_path, meta_path : Path
    report_paths : tuple of Path
        ``(report.md, report.html)``, or ``()`` when no report was written.
    n_records : int
        Records in ``results.jsonl`` after the run (earlier runs included).
    n_new : int
        Records written by this run.
    n_skipped_done : int
        Groups skipped because a previous run had written them.
    skipped : str
        Why instances were skipped (unimplemented puzzles, unreadable traces); ``""`` when none.
    meta : dict
        The run metadata (as in ``run_meta.json``).
    """

    out_dir: Path
    results_path: Path
    meta_path: Path
    report_paths: tuple[Path, ...]
    n_records: int
    n_new: int
    n_skipped_done: int
    skipped: str
    meta: dict[str, Any]


def _short_hash(*parts: str) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=6).hexdigest()


def _build_backend(kind: str | None, model: str, base_url: str | None, cfg: EvalConfig,
                   chat_template_kwargs: Mapping[str, Any] | None = None):
    from reasonshape.training.backends import check_model_path, get_backend

    kind = kind or ("openai" if base_url else "transformers")
    if kind != "openai":  # a path that does not exist: say so rather than the hub's error about an id
        check_model_path(model)
    if kind == "openai":
        return get_backend("openai", base_url=base_url, model=model, api_key_env=cfg.api_key_env,
                           max_concurrency=cfg.max_concurrency, use_n=cfg.use_n,
                           extra_body={"chat_template_kwargs": chat_template_kwargs} if chat_template_kwargs else None)
    if kind == "vllm":
        kw: dict[str, Any] = {"model": model, "seed": cfg.seed, "chat_template_kwargs": chat_template_kwargs}
        if cfg.dtype:
            kw["dtype"] = cfg.dtype
        if cfg.vllm_gpu_memory() is not None:
            kw["gpu_memory_utilization"] = cfg.vllm_gpu_memory()
        return get_backend("vllm", **kw)
    return get_backend("transformers", model=model, device=cfg.device, dtype=cfg.dtype,
                       batch_size=max(1, cfg.batch_instances), chat_template_kwargs=chat_template_kwargs)


def _manifest_groups(cfg: EvalConfig, model: str) -> tuple[list[_Group], list[dict], str]:
    from reasonshape.envs import get
    from reasonshape.training.manifest import load_manifest, skipped_summary, split_implemented

    entries = load_manifest(puzzles=cfg.puzzles, levels=cfg.levels)
    implemented, skipped = split_implemented(entries)
    if cfg.limit is not None:
        implemented = implemented[:cfg.limit]
    groups = []
    for e in implemented:
        p = get(e.puzzle)
        groups.append(_Group(gid=e.id, puzzle=p, instance=p.parse_game_id(e.game_id), level=e.level, model=model,
                             k=cfg.k))
    return groups, [e.to_dict() for e in skipped], skipped_summary(skipped)


def _manifest_levels() -> dict[tuple[str, str], str]:
    from reasonshape.training.manifest import load_manifest

    try:
        return {(e.puzzle, e.game_id): e.level for e in load_manifest()}
    except ReasonshapeError:  # no manifest shipped: every trace is external
        return {}


def _trace_groups(cfg: EvalConfig, traces: Sequence[TraceRecord]) -> tuple[list[_Group], list[dict], str]:
    from reasonshape.envs import get

    levels = _manifest_levels()
    by_key: dict[tuple[str, str, str], _Group] = {}
    unimplemented: dict[str, int] = {}
    skipped: list[dict] = []
    unreadable = 0
    for t in traces:
        key = (t.puzzle, t.game_id, t.model)
        g = by_key.get(key)
        if g is None:
            # the filters first: a trace they leave out is neither scored nor listed as skipped
            level = t.level or levels.get((t.puzzle, t.game_id), EXTERNAL_LEVEL)
            if cfg.puzzles is not None and t.puzzle not in cfg.puzzles:
                continue
            if cfg.levels is not None and level not in cfg.levels:
                continue
            try:
                p = get(t.puzzle)
            except UnknownPuzzleError:
                unimplemented[t.puzzle] = unimplemented.get(t.puzzle, 0) + 1
                skipped.append({"puzzle": t.puzzle, "level": t.level or EXTERNAL_LEVEL, "game_id": t.game_id,
                                "model": t.model})
                continue
            try:
                inst = p.parse_game_id(t.game_id)
            except ReasonshapeError as e:
                log.info("trace of %s skipped: %s", t.puzzle, e)  # summed up in the skipped summary (one line)
                unreadable += 1
                skipped.append({"puzzle": t.puzzle, "level": t.level or EXTERNAL_LEVEL, "game_id": t.game_id,
                                "model": t.model, "reason": f"game ID does not parse: {e}"})
                continue
            g = by_key[key] = _Group(gid=f"{t.puzzle}/{level}/{_short_hash(t.game_id, t.model)}", puzzle=p,
                                     instance=inst, level=level, model=t.model, k=0)
        g.completions.append(t.completion)
        g.tokens.append(t.tokens)
        g.finish.append(t.finish_reason)
        g.sample_s.append(None)
        g.k += 1
    groups = list(by_key.values())
    if cfg.limit is not None:
        groups = groups[:cfg.limit]
    parts = []
    if unimplemented:
        parts.append(f"skipped {sum(unimplemented.values())} traces of unknown or unimplemented puzzles: "
                     + ", ".join(f"{k} ({v})" for k, v in unimplemented.items()))
    if unreadable:
        parts.append(f"skipped {unreadable} traces whose game ID does not parse")
    return groups, skipped, "; ".join(parts)


def _filters(cfg: EvalConfig) -> str:
    parts = [f"--puzzles {' '.join(cfg.puzzles)}" if cfg.puzzles else "",
             f"--levels {' '.join(cfg.levels)}" if cfg.levels else ""]
    return " ".join(p for p in parts if p)


def _nothing_to_score(cfg: EvalConfig, traces: Sequence[TraceRecord] | None, skipped: str) -> str:
    """The one-line reason why a run has no completion to score, naming the input and the filters."""
    filters = _filters(cfg)
    why = f"; {skipped}" if skipped else ""
    if traces is None:
        return (f"no instance to evaluate: the benchmark manifest{' with ' + filters if filters else ''} has no "
                f"instance of an implemented puzzle{why}")
    what = "the embedded traces" if cfg.traces is None else f"traces {cfg.traces!r}"
    if not traces:
        p = Path(cfg.traces or "")
        hint = (" (a directory is read as reasoning-gym-eval results: futoshiki.json, sudoku.json, mini_sudoku.json "
                "files below it; pass a .jsonl file in our schema as --traces FILE)") if p.is_dir() else ""
        return f"no completion to score: {what} holds no trace{hint}"
    puzzles = ", ".join(sorted({t.puzzle for t in traces}))
    known = _manifest_levels()
    levels = ", ".join(sorted({t.level or known.get((t.puzzle, t.game_id), EXTERNAL_LEVEL) for t in traces}))
    if filters:
        return (f"no completion to score: none of the {len(traces)} traces of {what} matches {filters} (their "
                f"puzzles: {puzzles}; their levels: {levels}){why}")
    return f"no completion to score: none of the {len(traces)} traces of {what} can be scored{why}"


def _versions() -> dict[str, str]:
    out = {}
    for pkg in ("reasonshape", "torch", "transformers", "trl", "ortools", "networkx", "numpy", "vllm", "openai"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    out["python"] = platform.python_version()
    return out


def _completion_of(sample: Any) -> Any:
    """A backend Sample as a TRL conversational completion (reasoning kept apart when the server split it)."""
    if sample.reasoning_text:
        return [{"role": "assistant", "content": sample.text, "reasoning_content": sample.reasoning_text}]
    return sample.text


def _record(g: _Group, i: int, sc: Any, su: dict | None, dispersion: float | None, keep_graph: bool) -> dict:
    rec = (sc if keep_graph else replace(sc, graph=None)).to_record()  # node-link JSON only when kept
    labels = {k: int(rec["labels"].get(k, 0)) for k in _LABEL_KEYS}
    return {
        "id": g.record_id(i), "puzzle": g.puzzle.name, "level": g.level, "game_id": sc.game_id, "model": g.model,
        "sample": i, "tokens": g.tokens[i], "finish_reason": g.finish[i], "correct": bool(sc.correct),
        "parse_error": sc.error or sc.parse_error, "violations": list(sc.violations), "n_sentences": sc.n_sentences,
        "metrics": rec["metrics"], "labels": labels, "extraction": rec["extraction"], "su": su,
        "dispersion": dispersion, "timing": {"sample_s": g.sample_s[i], "score_s": sc.score_s},
        "graph": rec["graph"] if keep_graph else None,
    }


def _progress(total: int, enabled: bool, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="completion", desc=desc, disable=not enabled, dynamic_ncols=True,
                smoothing=0.1, file=sys.stderr)


def run_eval(cfg: EvalConfig, backend: Any = None, judge: Any = None) -> EvalSummary:
    """Run (or resume) an eval and write ``results.jsonl``, ``run_meta.json`` and the report.

    Parameters
    ----------
    cfg : EvalConfig
        The settings.
    backend : GenerationBackend, optional
        Use this backend for sampling instead of building one from ``cfg`` (tests, notebooks, TRL's engine).
    judge : GenerationBackend, optional
        Use this backend as the structural-uncertainty judge (default: the sampling backend in sampling mode, with
        ``judge_chat_template_kwargs`` in place of its own chat-template keywords when given, the
        ``judge_*`` settings in traces mode, else no structural uncertainty in traces mode).

    Returns
    -------
    EvalSummary

    Raises
    ------
    ConfigError
        Bad settings, an output directory holding records written with other settings
        (:meth:`EvalConfig.fingerprint`), or nothing to score: the input holds no trace, or the filters
        (``puzzles``, ``levels``) select none (the message names the input and the filters).
    UnknownPuzzleError
        ``cfg.puzzles`` names a puzzle outside the benchmark (in sampling and traces mode alike).
    BackendError
        Sampling or judging failed (what was written so far stays; rerun to resume).
    TraceFileError
        A malformed traces file.

    Notes
    -----
    Per batch of ``batch_instances`` pending groups: ONE ``backend.generate`` call (k samples per instance), each
    completion scored by :func:`reasonshape.rewards.scorer.score_completion` (instances share one extraction
    context), then ONE :func:`reasonshape.rewards.structural_uncertainty.score_groups` call for all groups of the
    batch with k >= 2 (the policy judging its own samples, paper B), then one append + fsync per group. The
    scoring overhead (everything but sampling and judging) is timed per completion; its median is in the metadata.
    """
    t_start = time.perf_counter()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    # ----------------------------------------------------------------- the groups (before --out is touched)
    if cfg.mode == "sample":
        groups, skipped_entries, skipped = _manifest_groups(cfg, cfg.model_name or cfg.model)
        source = "manifest"
    else:
        from reasonshape.training.manifest import check_puzzle_names

        check_puzzle_names(cfg.puzzles)  # as the manifest does in sampling mode: a typo is an error, not an empty run
        traces = read_traces(cfg.traces or embedded_traces_path(), cfg.traces_format)
        groups, skipped_entries, skipped = _trace_groups(cfg, traces)
        source = "embedded" if cfg.traces is None else str(cfg.traces)
    if skipped:  # printed once (not logged as well)
        print(f"reasonshape eval: {skipped}", file=sys.stderr)
    if not groups:
        raise ConfigError(_nothing_to_score(cfg, traces if cfg.mode == "traces" else None, skipped))
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    meta_path = out / "run_meta.json"
    previous = _read_meta(meta_path)
    fingerprint = _jsonable(cfg.fingerprint())
    changed = None if previous is None else _fingerprint_diff(previous.get("fingerprint"), fingerprint)
    if changed:
        if _has_records(out / "results.jsonl"):
            raise ConfigError(_settings_changed(out, cfg, previous.get("fingerprint"), fingerprint, changed))
        # no record written: the earlier run (one that failed early, say) fixed nothing; this run's settings count
        log.info("%s: no record written by the earlier run; starting over with this run's settings", out)
        previous = None
    if previous is None:  # record the settings first, so that a killed run is resumed only with the same ones
        _write_json(meta_path, {"fingerprint": fingerprint, "sessions": []})
    results = ResultsLog(out / "results.jsonl")
    results.drop_partial_tail({g.gid: g.k for g in groups})
    n_at_start = results.n_records  # new records = what the file holds beyond this, whenever the session ends
    pending = [g for g in groups if not all(g.record_id(i) in results.ids for i in range(g.k))]
    # ----------------------------------------------------------------- backends
    owned = []
    if pending and cfg.mode == "sample" and backend is None:
        backend = _build_backend(cfg.backend, cfg.model, cfg.base_url, cfg, cfg.chat_template_kwargs)
        owned.append(backend)
    if judge is None and cfg.judge_model is not None and pending:
        judge = _build_backend(cfg.judge_backend, cfg.judge_model, cfg.judge_base_url, cfg,
                               cfg.judge_chat_template_kwargs)
        owned.append(judge)
    if judge is None and cfg.mode == "sample" and backend is not None:
        # paper B: the policy judges its own samples (the same model and engine; its own chat-template keywords
        # unless --judge-chat-template-kwargs gives the judge's; the view is not closed: the backend is)
        from reasonshape.training.backends import with_chat_template_kwargs

        judge = with_chat_template_kwargs(backend, cfg.judge_chat_template_kwargs)
    # What the settings ask for, whether or not a backend was built (a rerun with nothing pending builds none)
    judge_named = judge is not None or cfg.judge_model is not None or cfg.mode == "sample"
    su_on = cfg.su and judge_named and any(g.k >= 2 for g in groups)
    use_su = su_on and judge is not None
    if cfg.llm_extraction and not (judge_named or backend is not None):
        raise ConfigError("llm_extraction needs a backend: give --model or --judge-model")
    llm_backend = (judge or backend) if cfg.llm_extraction else None
    _check_chat_templates(cfg, backend, judge if use_su else None, llm_backend)
    system_prompt = cfg.system_prompt
    if system_prompt is None:
        from reasonshape.envs.dataset import DEFAULT_SYSTEM_PROMPT

        system_prompt = DEFAULT_SYSTEM_PROMPT
    # ----------------------------------------------------------------- loop: sample, score, judge, write
    runner = _BatchRunner(cfg, results, backend, judge if use_su else None, llm_backend, system_prompt,
                          {g.gid: i for i, g in enumerate(groups)})
    why_no_su = (None if su_on else "off (--no-su)" if not cfg.su
                 else "no judge: traces have no policy to judge its own solutions; give --judge-model"
                 if not judge_named else "no group holds two or more completions (k < 2): nothing to compare")
    judge_name = (cfg.judge_model or cfg.model or repr(judge)) if su_on else None

    def write_meta(ended: str) -> tuple[dict, list[dict]]:
        """Record this session (``ended``: completed, SIGINT, SIGTERM or the error) in ``run_meta.json``."""
        records = results.records()
        session = {
            "started": started, "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "wall_s": time.perf_counter() - t_start, "new_records": len(records) - n_at_start,
            "groups_skipped_done": len(groups) - len(pending), "sampling_s": runner.sample_s,
            "judge_s": runner.judge_s, "scoring_s": runner.score_s, "argv": sys.argv[1:], "ended": ended,
        }
        meta = _run_meta(cfg, source, groups, records, skipped, skipped_entries, system_prompt, judge_name,
                         _sessions(previous) + [session], why_no_su, fingerprint)
        _write_json(meta_path, meta)
        return meta, records

    bar = _progress(sum(g.k for g in pending), cfg.progress,
                    f"eval {source if cfg.mode == 'traces' else cfg.model_name or cfg.model}")
    restore_sigterm = _catch_sigterm()
    try:
        try:
            for b0 in range(0, len(pending), cfg.batch_instances):
                runner.run(pending[b0:b0 + cfg.batch_instances], bar)
        finally:
            restore_sigterm()
            bar.close()
            for b in owned:
                b.close()
    except BaseException as e:  # an interrupted session still counts: its records and its time are in the file
        sig = "SIGINT" if isinstance(e, KeyboardInterrupt) else \
            signal.Signals(e.signum).name if isinstance(e, _Signalled) else None
        n_new = runner.n_new
        try:
            n_new = len(write_meta(sig or f"error: {type(e).__name__}")[1]) - n_at_start
        except Exception as meta_error:  # noqa: BLE001 - never hide the interruption behind a metadata error
            log.warning("run_meta.json not updated after the interruption: %s", meta_error)
        if sig:
            print(f"reasonshape eval: interrupted by {sig} after {n_new} new records in {results.path}; "
                  "rerun the same command to resume", file=sys.stderr)
            if isinstance(e, KeyboardInterrupt):
                e.reasonshape_reported = True  # the CLI prints no second line
        if isinstance(e, _Signalled):  # now what the signal would have done (default: end the process, 128 + n)
            signal.raise_signal(e.signum)
        raise
    # ----------------------------------------------------------------- metadata and report
    meta, records = write_meta("completed")
    report_paths: tuple[Path, ...] = ()
    if cfg.report:
        report_paths = _write_report(results.path, out, meta)
    return EvalSummary(out_dir=out, results_path=results.path, meta_path=meta_path, report_paths=report_paths,
                       n_records=len(records), n_new=runner.n_new, n_skipped_done=len(groups) - len(pending),
                       skipped=skipped, meta=meta)


class _BatchRunner:
    """One batch of groups: one sampling call, scoring, one batched judge call, one append + fsync per group."""

    def __init__(self, cfg: EvalConfig, results: ResultsLog, backend: Any, judge: Any, llm_backend: Any,
                 system_prompt: str, index_of: Mapping[str, int]):
        from reasonshape.rewards.structural_uncertainty import PairwiseJudge

        self.cfg, self.results, self.backend, self.llm_backend = cfg, results, backend, llm_backend
        # the policy judging itself sends its comparisons in its own prompt layout; a --judge-model gets chat messages
        fmt = cfg.prompt_format if cfg.judge_model is None else "conversational"
        self.judge = None if judge is None else PairwiseJudge(judge, max_tokens=cfg.judge_max_tokens,
                                                              unparsed=cfg.judge_unparsed, prompt_format=fmt)
        self.system_prompt, self.index_of = system_prompt, index_of
        self.sample_s = self.judge_s = self.score_s = 0.0
        self.n_new = 0

    def run(self, batch: list[_Group], bar: Any) -> None:
        if self.cfg.mode == "sample":
            self._sample(batch)
        scores = [self._score(g) for g in batch]
        su = self._structural_uncertainty(batch)
        for j, g in enumerate(batch):
            recs = self._records(g, scores[j], su.get(j))
            self.results.append_group(recs)
            self.n_new += len(recs)
            bar.update(len(recs))

    def _sample(self, batch: list[_Group]) -> None:
        from reasonshape.envs.dataset import make_record

        cfg = self.cfg
        prompts = [make_record(g.puzzle, g.instance, g.level, self.system_prompt, cfg.prompt_format)["prompt"]
                   for g in batch]
        t0 = time.perf_counter()
        # instance j of the run, sample s: stream seed + j*k + s on the vLLM and OpenAI-compatible backends
        # (request_seed: prompt i of a call seeded b gets b + i*k), whatever --batch-instances is; a batch seeded
        # seed + j overlapped the next batch's streams (with k = batch_instances, instance j+1 had instance j+k's)
        seed = cfg.seed + self.index_of[batch[0].gid] * cfg.k
        samples = self.backend.generate(prompts, n=cfg.k, temperature=cfg.temperature, top_p=cfg.top_p,
                                        max_tokens=cfg.max_tokens, seed=seed)
        dt = time.perf_counter() - t0
        self.sample_s += dt
        per = dt / max(1, len(batch) * cfg.k)  # amortised over the batch's completions
        for g, row in zip(batch, samples, strict=True):
            g.completions = [_completion_of(s) for s in row]
            g.tokens = [int(s.completion_tokens) for s in row]
            g.finish = [s.finish_reason for s in row]
            g.sample_s = [per] * len(row)

    def _score(self, g: _Group) -> list[Any]:
        from reasonshape.extraction.deterministic import PuzzleContext
        from reasonshape.rewards.scorer import score_completion

        ctx = PuzzleContext(g.puzzle, g.instance)  # shared by the group's completions
        out = []
        for i, comp in enumerate(g.completions):
            sc = score_completion(g.puzzle, g.instance, comp, llm_backend=self.llm_backend, context=ctx,
                                  tokens=g.tokens[i], keep_graph=self.cfg.keep_graphs > 0)
            self.score_s += sc.score_s
            out.append(sc)
        return out

    def _structural_uncertainty(self, batch: list[_Group]) -> dict[int, Any]:
        from reasonshape.rewards.structural_uncertainty import Group, score_groups

        multi = [j for j, g in enumerate(batch) if g.k >= 2]
        if self.judge is None or not multi:
            return {}
        t0 = time.perf_counter()
        groups = [Group(batch[j].puzzle.render_prompt(batch[j].instance), batch[j].completions) for j in multi]
        scores = score_groups(groups, self.judge, m=self.cfg.su_trials,
                              seed=self.cfg.seed + self.index_of[batch[0].gid])
        self.judge_s += time.perf_counter() - t0
        return dict(zip(multi, scores, strict=True))

    def _records(self, g: _Group, scores: list[Any], gsc: Any) -> list[dict]:
        from reasonshape.rewards.structural_uncertainty import answer_dispersion

        disp = float(answer_dispersion([sc.canonical_answer for sc in scores])) if g.k >= 2 else None
        recs: list[dict] = []
        for i, sc in enumerate(scores):
            su = None
            if gsc is not None:
                # a group without one readable verdict (every reply unparsed) gets nulls: ties alone measure
                # nothing (training leaves such groups out of the logged U / A / I the same way)
                mute = gsc.no_verdict
                su = {"U": None if mute else float(gsc.su.total),
                      "A": None if mute else float(gsc.su.ambiguity),
                      "I": None if mute else float(gsc.su.instability),
                      "preference_mass": None if mute else float(gsc.su.preference_mass[i]),
                      "rank_stability": None if mute else float(gsc.su.rank_stability[i]),
                      "judge_prompts": int(gsc.n_judge_prompts), "unparsed": int(gsc.n_unparsed)}
            # example graphs: the first keep_graphs non-empty claim graphs of the results file, plus the first
            # correct and the first wrong one (the report's examples) when they come later
            kept = [*self.results.graphs.values(), *(r["correct"] for r in recs if r["graph"] is not None)]
            keep = self.cfg.keep_graphs > 0 and sc.graph is not None and len(sc.graph) > 0 and (
                len(kept) < self.cfg.keep_graphs or bool(sc.correct) not in kept)
            recs.append(_record(g, i, sc, su, disp, keep_graph=keep))
        return recs


class _Signalled(BaseException):
    """SIGTERM during the eval loop, raised by :func:`_catch_sigterm`'s handler so that the session is recorded."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _catch_sigterm():
    """Turn SIGTERM into :class:`_Signalled` (main thread only, and only where SIGTERM has its default action, which
    ends the process: a caller that ignores or handles SIGTERM keeps its own behaviour); returns the function
    restoring the old handler."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        return lambda: None

    def handler(signum: int, frame: Any) -> None:
        raise _Signalled(signum)

    signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run_meta(cfg: EvalConfig, source: str, groups: Sequence[_Group], records: Sequence[Mapping[str, Any]],
              skipped: str, skipped_entries: list[dict], system_prompt: str, judge_name: str | None,
              sessions: list[dict], why_no_su: str | None, fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    """The run's ``run_meta.json``; ``judge_name`` is None when structural uncertainty is off (``why_no_su``
    says why); ``fingerprint`` is the one checked when the run started (a checkpoint written meanwhile does not
    replace the identity of the one that was loaded)."""
    sample = cfg.mode == "sample"
    score_times = [r["timing"]["score_s"] for r in records
                   if isinstance(r.get("timing"), Mapping) and r["timing"].get("score_s") is not None]
    models = (cfg.model_name or cfg.model) if sample else ", ".join(sorted({g.model for g in groups}))
    meta = {
        "fingerprint": fingerprint,
        "mode": cfg.mode,
        "source": source,
        "model": models,
        "backend": (cfg.backend or ("openai" if cfg.base_url else "transformers")) if sample else None,
        "base_url": cfg.base_url,
        "judge": judge_name,
        "versions": _versions(),
        "platform": platform.platform(),
        "seed": cfg.seed,
        "k": cfg.k if sample else None,
        "temperature": cfg.temperature if sample else None,
        "top_p": cfg.top_p if sample else None,
        "max_tokens": cfg.max_tokens if sample else None,
        "system_prompt": system_prompt if sample else None,
        "prompt_format": cfg.prompt_format if sample else None,
        "chat_template_kwargs": cfg.chat_template_kwargs if sample else None,
        "su": {"enabled": judge_name is not None, "trials": cfg.su_trials, "judge_max_tokens": cfg.judge_max_tokens,
               "unparsed_as": cfg.judge_unparsed,
               "judge_chat_template_kwargs": cfg.judge_template_kwargs() if judge_name is not None else None,
               "model": "bradley_terry", "C": 1.0, "aggregation": "pagerank", "damping": 0.85,
               **_judge_counts(records), **({"not_computed": why_no_su} if why_no_su else {})},
        "extraction": "llm" if cfg.llm_extraction else "deterministic",
        "subset": {"puzzles": cfg.puzzles, "levels": cfg.levels, "limit": cfg.limit},
        "skipped_summary": skipped,
        "skipped": skipped_entries,
        "n_instances": len({(g.puzzle.name, g.puzzle.format_game_id(g.instance)) for g in groups}),
        "n_groups": len(groups),
        "n_records": len(records),
        "time": {k: sum(s[k] for s in sessions) for k in ("sampling_s", "judge_s", "scoring_s")},
        "scoring_overhead_ms": {
            "median": 1000 * statistics.median(score_times) if score_times else None,
            "p90": 1000 * _quantile(score_times, 0.9) if score_times else None,
            "mean": 1000 * statistics.fmean(score_times) if score_times else None,
            "n": len(score_times),
            "what": "per completion: parse, verify, extract, claim graph, eta and metrics (no sampling, no judge)",
        },
        "sessions": sessions,
    }
    return _jsonable(meta)


def _judge_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The judge's bookkeeping over the file's judged groups (:func:`reasonshape.training.report.su_judge_counts`)
    under ``run_meta.su``'s names, with the unparsed share."""
    from reasonshape.training.report import su_judge_counts

    jc = su_judge_counts(records)
    return {"groups_judged": jc["groups"], "judge_prompts": jc["prompts"], "judge_unparsed": jc["unparsed"],
            "judge_unparsed_rate": jc["unparsed"] / jc["prompts"] if jc["prompts"] else None,
            "groups_without_verdict": jc["no_verdict"]}


def _write_report(results_path: Path, out: Path, meta: dict) -> tuple[Path, ...]:
    try:
        from reasonshape.training.report import build_report
    except ImportError as e:
        log.warning("report not written: reasonshape.training.report is unavailable (%s)", e)
        print(f"reasonshape eval: report not written ({e})", file=sys.stderr)
        return ()
    md, html = build_report(results_path, out, meta)
    return (Path(md), Path(html))


def _write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (temporary file, then ``os.replace``)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _quantile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=_json_default))


def _read_meta(path: Path) -> dict | None:
    if not path.exists():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return meta if isinstance(meta, dict) else None


def _has_records(path: Path) -> bool:
    """Whether ``path`` holds at least one complete (newline-terminated) non-blank line."""
    try:
        with open(path, "rb") as f:
            return any(line.endswith(b"\n") and line.strip() for line in f)
    except OSError:
        return False


#: Fingerprint entries holding a local checkpoint's identity: entry -> (the option giving its path, what it is).
_CHECKPOINT_ENTRIES = {"checkpoint": ("model", "checkpoint"), "judge_checkpoint": ("judge_model", "judge checkpoint")}

#: Fingerprint entries that only one side may have: unknown there, not a change (a checkpoint identity is not stored
#: by runs made before it was added, nor for a hub id or a served model).
_UNKNOWN_WHEN_MISSING = frozenset(_CHECKPOINT_ENTRIES)


#: Fingerprint entries left out when they hold their default (so that runs made before the entry existed resume):
#: entry -> the value a missing entry stands for.
_DEFAULT_WHEN_MISSING = {"prompt_format": "conversational", "judge_unparsed": "tie"}

#: Fingerprint entries naming a model: two spellings of one local directory ("./ckpt", "/abs/ckpt/") are one model
#: (its checkpoint identity tells whether the weights changed).
_MODEL_ENTRIES = ("model", "judge_model")


def _same_model_path(a: Any, b: Any) -> bool:
    if not (isinstance(a, str) and isinstance(b, str)):
        return False
    pa, pb = Path(a).expanduser(), Path(b).expanduser()
    return pa.is_dir() and pb.is_dir() and pa.resolve() == pb.resolve()


def _fingerprint_diff(old: Any, new: Mapping[str, Any]) -> str:
    """The settings that differ, as ``name: earlier value (this run: value)``; ``""`` when none does. An entry of
    :data:`_UNKNOWN_WHEN_MISSING` counts only when both sides have it; a missing entry of
    :data:`_DEFAULT_WHEN_MISSING` stands for its default; the :data:`_MODEL_ENTRIES` compare local directories by
    their resolved path."""
    if not isinstance(old, Mapping):
        return f"no readable settings: {old!r}"
    keys = list(new) + [k for k in old if k not in new]
    out = []
    for k in keys:
        a, b = old.get(k, _DEFAULT_WHEN_MISSING.get(k)), new.get(k, _DEFAULT_WHEN_MISSING.get(k))
        if a == b or (k in _UNKNOWN_WHEN_MISSING and (k not in old or k not in new)):
            continue
        if k in _MODEL_ENTRIES and _same_model_path(a, b):
            continue
        out.append(f"{k}: {a!r} (this run: {b!r})")
    return "; ".join(out)


def _settings_changed(out: Path, cfg: EvalConfig, old: Any, new: Mapping[str, Any], diff: str) -> str:
    """The refusal to resume ``out`` with other settings (``diff``: :func:`_fingerprint_diff`); a checkpoint (the
    policy's or the judge's) replaced at the same path is said in those words."""
    for entry, (option, what) in _CHECKPOINT_ENTRIES.items():
        if (isinstance(old, Mapping) and old.get(option) == new.get(option) and entry in old and entry in new
                and old[entry] != new[entry]):
            return (f"out directory {str(out)!r} holds results of another {what}: the {what} at "
                    f"{getattr(cfg, option)!r} changed since those results were written ({diff}); use another --out "
                    f"for this {what}")
    return (f"out directory {str(out)!r} holds a run with other settings ({diff}); use a new --out or the same "
            "settings to resume")


def _sessions(previous: dict | None) -> list[dict]:
    if not previous or not isinstance(previous.get("sessions"), list):
        return []
    keep = ("sampling_s", "judge_s", "scoring_s")
    return [s for s in previous["sessions"] if isinstance(s, dict) and all(
        isinstance(s.get(k), (int, float)) for k in keep)]


# ===================================================================================================== CLI
def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def make_parser(subparsers: Any = None) -> argparse.ArgumentParser:
    """The ``eval`` parser: one flag per :class:`EvalConfig` field, help text from the field's metadata."""
    desc = ("Evaluate a model on the benchmark (sample -> verify -> extract -> graph -> eta -> structural "
            "uncertainty), or score existing traces. With no --model and no --traces, scores the real traces "
            "shipped with reasonshape. Reruns with the same --out resume.")
    if subparsers is None:
        parser = argparse.ArgumentParser(prog="reasonshape eval", description=desc)
    else:
        parser = subparsers.add_parser("eval", help="evaluate a model or existing traces", description=desc)
    for f in fields(EvalConfig):
        help_ = f.metadata.get("help", "")
        flag = _flag(f.name)
        if f.default not in (None, MISSING) and "default" not in help_:
            shown = (flag if f.default else "--no-" + flag[2:]) if isinstance(f.default, bool) else f.default
            help_ += f" (default: {shown})"
        help_ = help_.replace("%", "%%")
        if f.type in ("bool", bool):
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=f.default,
                                help=help_)
        elif f.name in ("puzzles", "levels"):
            parser.add_argument(flag, dest=f.name, nargs="+", default=None, metavar="NAME", help=help_)
        elif f.name in ("backend", "judge_backend"):
            parser.add_argument(flag, dest=f.name, choices=_BACKENDS, default=None, help=help_)
        elif f.name == "traces_format":
            parser.add_argument(flag, dest=f.name, choices=("auto", "reasonshape", "reasoning_gym"),
                                default=f.default, help=help_)
        elif f.name in ("k", "max_tokens", "seed", "batch_instances", "max_concurrency", "su_trials",
                        "judge_max_tokens", "keep_graphs", "limit"):
            parser.add_argument(flag, dest=f.name, type=int, default=f.default, help=help_)
        elif f.name in ("temperature", "top_p", "gpu_memory_utilization"):
            parser.add_argument(flag, dest=f.name, type=float, default=f.default, help=help_)
        elif f.name in ("chat_template_kwargs", "judge_chat_template_kwargs"):  # read by EvalConfig
            parser.add_argument(flag, dest=f.name, default=f.default, metavar="JSON", help=help_)
        else:
            parser.add_argument(flag, dest=f.name, default=f.default, help=help_)
    parser.set_defaults(func=main)
    return parser


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``reasonshape eval`` on the CLI's subparsers (called by :mod:`reasonshape.cli`)."""
    return make_parser(subparsers)


def config_from_args(args: argparse.Namespace) -> EvalConfig:
    """An :class:`EvalConfig` from parsed arguments (unknown attributes such as ``func`` are ignored)."""
    names = {f.name for f in fields(EvalConfig)}
    return EvalConfig(**{k: v for k, v in vars(args).items() if k in names})


def main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """Run ``reasonshape eval``; returns the exit status (0 on success).

    ``args`` is a parsed namespace (from :mod:`reasonshape.cli`) or an argument list (``python -m
    reasonshape.training.eval ...``). Errors of reasonshape propagate as typed exceptions when called with a
    namespace (the CLI turns them into exit status 2).
    """
    if args is None or not isinstance(args, argparse.Namespace):
        parser = make_parser()
        args = parser.parse_args(None if args is None else list(args))
    cfg = config_from_args(args)
    summary = run_eval(cfg)
    med = summary.meta["scoring_overhead_ms"]["median"]
    lines = [f"results: {summary.results_path} ({summary.n_records} records, {summary.n_new} new, "
             f"{summary.n_skipped_done} groups already done)"]
    if med is not None:
        lines.append(f"scoring overhead: median {med:.1f} ms per completion")
    for p in summary.report_paths:
        lines.append(f"report: {p}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":  # the same as ``reasonshape eval ...`` (its error, Ctrl-C and exit-status handling)
    from reasonshape.cli import main as _cli_main

    sys.exit(_cli_main(["eval", *sys.argv[1:]]))
