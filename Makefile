# iotuner: `make demo` runs the main job, `make test` runs the tests (`make check`: the fast ones).
# Both install what they need first (scripts/setup.sh).

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# the editable install's build directory, one per interpreter (pyproject.toml); expanded once the venv exists
BUILD   = build/$(shell $(PY) -c 'import sys; print(sys.implementation.cache_tag)')
SOURCES := $(shell find native kernels bench python tests/programs -type f \( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.txt' -o -name '*.py' -o -name '*.map' -o -name '*.in' \) 2>/dev/null) CMakeLists.txt pyproject.toml $(wildcard docs/*.schema.json)

.PHONY: all setup build demo test test-c test-py check stress-test bench sanitize clean

all: build

# (Re)install when sources change: the editable install rebuilds the C part in $(BUILD).
$(STAMP): $(SOURCES) scripts/setup.sh
	./scripts/setup.sh
	touch $@

setup build: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/iotuner demo

test: test-c test-py

test-c: $(STAMP)
	ctest --test-dir $(BUILD) --output-on-failure

# pytest in two parts: the tests that time nothing on $(WORKERS) xdist workers (a test file stays on one
# worker, so its module fixtures are built once), then those marked serial (they time or compare speeds,
# oversubscribe the cores, or start Slurm or PostgreSQL) alone. Both parts run; either failing fails the target.
# Each prints its slowest tests, for the suite's time.
WORKERS ?= 2
test-py: $(STAMP)
	./scripts/setup-browser.sh
	status=0; \
	$(PY) -m pytest -q -n $(WORKERS) --dist loadfile -m "not serial" --durations=25 || status=1; \
	$(PY) -m pytest -q -m serial --durations=10 || status=1; \
	exit $$status

# The edit loop's tests (under 3 minutes): the C tests, and the Python tests that are neither slow, serial nor
# real MPI jobs, on $(WORKERS) workers. `make test` (what CI runs) is the whole suite.
check: test-c
	$(PY) -m pytest -q -n $(WORKERS) --dist loadfile -m "not slow and not serial and not mpi"

# The suite with 2 CPU-burning processes beside it: it must pass on a busy machine (scripts/stress-test.sh).
stress-test: $(STAMP)
	./scripts/stress-test.sh

# Every benchmark in bench/: the runtime's overhead, the search strategies (synthetic, then a
# real kernel: about 4 minutes in all), smart mode's cost and speedups, TunIO's search and stoppers,
# the hybrid model against ML and random search (about 5 minutes).
bench: $(STAMP)
	$(PY) bench/overhead.py
	$(PY) bench/strategies.py
	$(PY) bench/smart.py
	$(PY) bench/many_files.py
	$(PY) bench/tunio.py
	$(PY) bench/hybrid.py

# ASan + UBSan: the C core's tests and kernel runs under the library (its own build in build/sanitize).
sanitize: $(STAMP)
	./scripts/sanitize.sh

clean:
	rm -rf build $(VENV) .pytest_cache
