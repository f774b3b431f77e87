# The two commands of the quick start: `make run` and `make test`. Both create .venv and install.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run student test lint bench clean install

$(STAMP): pyproject.toml scripts/install_system_deps.sh
	bash scripts/install_system_deps.sh || echo "WARNING: system deps missing: arena sandbox isolation degrades, browser report tests skip" >&2
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e ".[dev,serve,train,report,scale]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/shoparena pipeline run --out runs/quickstart

# The hour-long CPU student (docs/fidelity.md, "The student preset"): same stages, more data, longer training.
student: $(STAMP)
	$(BIN)/shoparena pipeline run --preset student --out runs/student

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/search_bench.py --quick

clean:
	rm -rf $(VENV) runs .pytest_cache
