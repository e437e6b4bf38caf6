# The README's two commands: `make demo` and `make test`. Each creates .venv if it is missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

# the environment: the package with its test extras, then numba's kernels compiled into
# their on-disk cache once (about a minute), so that no run pays for them
$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@echo "compiling chipsched's numba kernels (once per install)"
	$(BIN)/python -c "import chipsched; chipsched.warm_up()"
	$(BIN)/python -m compileall -q chipsched formulations heuristics solvers instances
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/chipsched demo

# two pytest workers (pytest-xdist), each taking whole files. Bytecode is cached even where
# PYTHONDONTWRITEBYTECODE is set (it is on some machines): otherwise every worker and every
# subprocess a test starts compiles the package and pytest rewrites every test module
# again (~30 s of a 4-minute run). Files go out in the order tests/conftest.py sets
# (longest first, so the two workers finish together), not pytest-xdist's (most tests first)
test: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python benchmarks/cost_table.py

clean:
	rm -rf $(VENV) build *.egg-info
