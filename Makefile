# The two commands (see README.md):
#   make run    install what is missing, fetch the default model, build and launch Hearth
#   make test   run every test: Rust (real model, real SQLite), UI in Chromium, real app end to end
.PHONY: run test setup bench-app

run:
	scripts/setup.sh run
	scripts/run.sh

test:
	HEARTH_LLAMA_SERVER_BUILD=background scripts/setup.sh test
	scripts/test.sh

# The speed a user sees: the real window against the engine alone (docs/benchmarks.md).
bench-app:
	scripts/setup.sh test
	scripts/bench-app.sh
