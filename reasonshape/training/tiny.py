"""A tiny causal language model built locally, for tests, the GRPO smoke run and ``make demo``.

Nothing is downloaded: :func:`build_tiny_model` trains a byte-level BPE tokenizer with the ``tokenizers`` library on
text it generates itself (puzzle-like sentences, grids, answer blocks, judge verdicts and common English words),
wraps it as a ``transformers`` fast tokenizer with a ChatML chat template (the Qwen ``<|im_start|>role ...
<|im_end|>`` layout, ``add_generation_prompt`` supported), builds a randomly initialised ``Qwen2ForCausalLM`` from a
small config and saves both with ``save_pretrained``. The result loads with ``AutoTokenizer`` /
``AutoModelForCausalLM`` and is served by ``transformers serve`` like any hub model.

The model is untrained: it emits near-uniform token soup. It exists to exercise code paths (generation, chat
templates, token counting, GRPO updates, HTTP serving), not to solve puzzles. Source: reasonshape choice.

>>> from reasonshape.training.tiny import build_tiny_model
>>> path = build_tiny_model("/tmp/tiny-model", seed=0)   # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from pathlib import Path

from reasonshape.errors import ConfigError

__all__ = ["TINY_CHAT_TEMPLATE", "TINY_SPECIAL_TOKENS", "TINY_CONFIG", "tiny_corpus", "build_tiny_tokenizer",
           "build_tiny_model"]

#: ChatML (Qwen) chat template. Each message renders as ``<|im_start|>{role}\n{content}<|im_end|>\n``; with
#: ``add_generation_prompt=True`` the text ends in ``<|im_start|>assistant\n``.
TINY_CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

#: Special tokens, in id order: padding / end of text, message start, message end (the EOS of a chat turn).
TINY_SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
#: Added (non-special) tokens kept whole by the tokenizer and kept by ``decode(skip_special_tokens=True)``.
_ADDED_TOKENS = ("<think>", "</think>", "<answer>", "</answer>")

#: Model size: ~0.14 M parameters with the ~1000-token vocabulary (tied input/output embeddings).
TINY_CONFIG = {
    "vocab_size": 1024,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": True,
}

_WORDS = (
    "the a an and or but if then so because therefore hence thus since which that this these those is are was "
    "were be been not no yes must can cannot only one two three four five six seven eight nine ten first second "
    "third last next each every all some none other same different more less most least left right up down top "
    "bottom above below row rows column columns cell cells grid puzzle clue clues value values number numbers "
    "tent tents tree trees light lights bulb bridge bridges island loop line lines edge edges black white empty "
    "filled shaded unshaded region regions box boxes cage cages sum product difference ratio digit digits solve "
    "solution answer check checks verify verified correct wrong contradiction suppose assume try hypothesis "
    "place placed put remove follows implies need needs needed have has given from with without into onto at in "
    "on of to for by we it its there here now again still already also only final candidate candidates better "
    "worse judge verdict tie reasoning step steps because count counts total remaining more fewer adjacent "
    "neighbour neighbours diagonal horizontal vertical forced possible impossible unique must exactly least "
    "most once twice rule rules constraint constraints Latin square magnet magnets plus minus ghost vampire "
    "zombie mirror domino dominoes pattern mosaic singles range unruly filling net slant signpost loopy tracks"
).split()


def tiny_corpus(seed: int = 0, n_lines: int = 3000) -> list[str]:
    """Generate the tokenizer's training text: deterministic in ``seed``.

    Parameters
    ----------
    seed : int
        Seed of a private ``random.Random``; the global RNG is not touched.
    n_lines : int
        Number of generated lines (each a few to ~60 characters), >= 1.

    Returns
    -------
    list of str
        ``n_lines`` lines mixing claim sentences ("cell (3,4) is a tent"), count sentences, grid rows, answer
        blocks, judge verdicts and random English word sequences.

    Raises
    ------
    ConfigError
        ``n_lines < 1`` (a ``ValueError``).
    """
    if n_lines < 1:
        raise ConfigError(f"n_lines must be >= 1, got {n_lines}")
    rng = random.Random(f"reasonshape-tiny|{seed}")
    lines: list[str] = []
    for _ in range(n_lines):
        kind = rng.randrange(7)
        r, c = rng.randint(1, 10), rng.randint(1, 10)
        if kind == 0:
            thing = rng.choice(("a tent", "grass", "a light", "black", "white", "empty", str(rng.randint(1, 9))))
            lines.append(f"cell ({r},{c}) is {thing}.")
        elif kind == 1:
            unit = rng.choice(("row", "column", "box", "cage"))
            lines.append(f"{unit} {r} needs {rng.randint(0, 5)} more {rng.choice(('tents', 'lights', 'cells'))}.")
        elif kind == 2:
            width = rng.randint(3, 9)
            lines.append(" ".join(rng.choice("T.#X123456789") for _ in range(width)))
        elif kind == 3:
            lines.append(f"<answer>\n{' '.join(str(rng.randint(1, 9)) for _ in range(rng.randint(3, 6)))}\n</answer>")
        elif kind == 4:
            lines.append(f"Verdict: {rng.choice(('A', 'B', 'tie'))}")
        elif kind == 5:
            lines.append(f"<think>so ({r},{c}) must be {rng.randint(1, 9)}</think>")
        else:
            lines.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12))))
    return lines


def build_tiny_tokenizer(seed: int = 0, vocab_size: int = TINY_CONFIG["vocab_size"]):
    """Train the tiny byte-level BPE tokenizer and wrap it for ``transformers``.

    Parameters
    ----------
    seed : int
        Seed of the training corpus (:func:`tiny_corpus`).
    vocab_size : int
        Target vocabulary size including special and added tokens; at least 300 (256 byte symbols + specials).

    Returns
    -------
    transformers.Qwen2Tokenizer
        EOS ``<|im_end|>``, PAD ``<|endoftext|>``, left padding, the ChatML :data:`TINY_CHAT_TEMPLATE`. Its
        ``len()`` is at most ``vocab_size``.

    Raises
    ------
    ConfigError
        ``vocab_size < 300`` (a ``ValueError``).

    Notes
    -----
    BPE training with ``tokenizers`` is deterministic for a fixed corpus, so the tokenizer is a function of ``seed``.
    """
    if vocab_size < 300:
        raise ConfigError(f"vocab_size must be >= 300 (256 byte symbols + special tokens), got {vocab_size}")
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    # Train with the exact pipeline Qwen2Tokenizer rebuilds on load (NFC, Qwen's split regex, byte-level), so the
    # in-memory tokenizer and the one AutoTokenizer loads from disk encode identically.
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(_ADDED_TOKENS),
        special_tokens=list(TINY_SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(tiny_corpus(seed), trainer=trainer)
    state = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in state["merges"]]
    wrapped = Qwen2Tokenizer(
        vocab=state["vocab"],
        merges=merges,
        unk_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens=["<|im_start|>"],
        padding_side="left",
        model_max_length=TINY_CONFIG["max_position_embeddings"],
    )
    wrapped.add_tokens(list(_ADDED_TOKENS))
    wrapped.chat_template = TINY_CHAT_TEMPLATE
    return wrapped


def build_tiny_model(out_dir: str | Path, seed: int = 0) -> Path:
    """Build and save the tiny chat model (tokenizer + random-init ``Qwen2ForCausalLM``) into ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        Target directory. A missing one is built under a temporary name beside it and renamed into place when
        complete, so a crash leaves no half-written model there, and processes building it at once (the ranks
        of a multi-process run) each see either nothing or a whole model; the first rename wins. Under
        ``torch.distributed`` transformers writes weights on rank 0 only, so there it must run on the main process
        (``reasonshape train`` builds it there while the other ranks wait); elsewhere it raises. In an existing
        directory, files of the same names are overwritten.
    seed : int
        Seeds both the tokenizer corpus and the weight initialisation (inside ``torch.random.fork_rng``, so the
        caller's global torch RNG state is left unchanged).

    Returns
    -------
    Path
        ``out_dir``, which then holds ``config.json``, ``generation_config.json``, ``model.safetensors`` and the
        tokenizer files; load it with ``AutoModelForCausalLM.from_pretrained(path)`` and
        ``AutoTokenizer.from_pretrained(path)``.

    Raises
    ------
    ConfigError
        A missing ``out_dir`` built on a rank other than 0 of an initialised ``torch.distributed`` group (where
        transformers writes no weights).

    Notes
    -----
    Deterministic given ``seed`` (same tokenizer, same weights: a test compares two builds). Takes a few seconds on
    one CPU core. Size: :data:`TINY_CONFIG` (hidden 64, 2 layers, vocabulary 1024). ``generation_config.json``
    sets ``eos_token_id`` to ``<|im_end|>`` and ``pad_token_id`` to ``<|endoftext|>``. Source: reasonshape choice.
    """
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            build_tiny_model(tmp, seed)
            missing = [n for n in ("config.json", "model.safetensors") if not (tmp / n).exists()]
            if missing:  # transformers writes weights on rank 0 only once torch.distributed is initialised
                raise ConfigError(f"build_tiny_model wrote no {' / '.join(missing)}: in a multi-process run, build "
                                  "the tiny model on the main process only (reasonshape train does)")
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)  # mkdtemp's 0700 would hide the model from other users
            os.rename(tmp, out)  # atomic; fails when another process renamed its build there first
        except OSError:
            if not (out / "model.safetensors").exists():
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return out
    tokenizer = build_tiny_tokenizer(seed)
    eos_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad_id = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    cfg = dict(TINY_CONFIG)
    cfg["vocab_size"] = max(cfg["vocab_size"], len(tokenizer))
    config = Qwen2Config(**cfg, eos_token_id=eos_id, pad_token_id=pad_id, bos_token_id=None)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=eos_id, pad_token_id=pad_id, do_sample=True,
                                               temperature=1.0, top_p=1.0, max_new_tokens=64)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    # Record provenance next to the weights (what built it, with which seed).
    (out / "reasonshape_tiny.json").write_text(json.dumps({"builder": "reasonshape.training.tiny.build_tiny_model",
                                                           "seed": seed, "config": cfg}, indent=1))
    return out
