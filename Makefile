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
	$(BIN)/python -m tests.layers
	$(BIN)/pytest -q $(PYTEST_ARGS)

demo: bootstrap
	$(BIN)/idletune demo

# Lint, types, and the layers contract (tests/layers.py): an upward import is named and fails.
lint: bootstrap
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m tests.layers

# Every benchmark, its figures recorded in bench/results/ for the README (needs root for eBPF).
bench: bootstrap
	$(BIN)/python bench/overhead.py --json bench/results/overhead.json
	$(BIN)/python bench/duty_split.py --json bench/results/duty-split.json
	$(BIN)/python bench/cost.py --json bench/results/cost.json
	$(BIN)/python bench/diagnose.py --json bench/results/diagnose.json
	$(BIN)/python bench/eval.py --json bench/results/eval.json
	$(BIN)/python bench/hook.py --json bench/results/hook.json
	$(BIN)/python bench/api.py --json bench/results/api.json
	$(BIN)/python bench/llm.py --json bench/results/llm.json
	$(BIN)/python bench/testbed.py --json bench/results/testbed.json
	$(BIN)/idletune eval evals/incidents --proposer llm --json > bench/results/eval-llm.json
	$(BIN)/idletune eval --chat evals/chat --json > bench/results/eval-chat-template.json
	$(BIN)/idletune eval --chat evals/chat --answerer llm --json > bench/results/eval-chat-llm.json

# The README's results table: the bundled suite scored, beside the bench figures.
results: bootstrap
	$(BIN)/python bench/readme_results.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
