# Two commands do everything: `make test` and `make demo`. Both bootstrap first.
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: bootstrap test demo lint bench clean results

bootstrap:
	@bash deploy/bootstrap.sh

test: bootstrap
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest -q $(PYTEST_ARGS)

demo: bootstrap
	$(BIN)/idletune demo

lint: bootstrap
	$(BIN)/ruff check .
	$(BIN)/mypy

# The README's results table: the bundled suite scored, beside the bench figures.
results: bootstrap
	$(BIN)/python bench/readme_results.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
