"""Generation backends, GRPO training (``reasonshape train`` / ``ablate``) and the standalone eval.

Public names are imported lazily (torch and transformers load only when a backend or the trainer is used).
"""

from __future__ import annotations

import importlib

_LAZY = {
    "get_backend": "reasonshape.training.backends",
    "Sample": "reasonshape.training.backends",
    "GenerationBackend": "reasonshape.training.backends",
    "TransformersBackend": "reasonshape.training.backends",
    "OpenAICompatibleBackend": "reasonshape.training.backends",
    "VLLMBackend": "reasonshape.training.backends",
    "build_tiny_model": "reasonshape.training.tiny",
    "load_manifest": "reasonshape.training.manifest",
    "build_report": "reasonshape.training.report",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reasonshape.training' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
