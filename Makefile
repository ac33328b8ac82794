# reasonshape: `make test` and `make demo` are the whole set-up (see README).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_VERSION := 2.13.0
TORCH_INDEX ?=
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install test demo bench lint clean

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	# torch first, pinned to the version vllm 0.31 pins. Set TORCH_INDEX (e.g. the CPU wheel index
	# https://download.pytorch.org/whl/cpu) to choose a build; by default pip picks what it finds.
	$(BIN)/pip install -q torch==$(TORCH_VERSION) $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX),)
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

install: $(BIN)/.installed

test: lint
	$(BIN)/python -m pytest -q

demo: install
	$(BIN)/reasonshape demo

# Every benchmark runs; a script exits 1 when its target is missed, and `make bench` reports which at the end.
bench: install
	@missed=""; for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || missed="$$missed $$f"; done; \
	if [ -n "$$missed" ]; then echo "targets missed in:$$missed"; exit 1; fi

lint: install
	$(BIN)/ruff check reasonshape tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
