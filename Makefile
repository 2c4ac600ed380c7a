# The two commands (see README.md):
#   make run    install what is missing, fetch the default model, build and launch Hearth
#   make test   run every test: Rust (real model, real SQLite), UI in Chromium, real app end to end
.PHONY: run test setup bench-app bench-check package

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

# The engine's figures against docs/benchmarks.json: fails on a section that failed or a ratio
# that regressed past its noise (scripts/bench-check.sh; SECTIONS=a,b for some, RECORD=1 to accept).
bench-check:
	scripts/setup.sh run
	scripts/bench-check.sh

# Release packages: .deb and .rpm (scripts/package.sh says what they hold); PROFILE=debug for a
# cheap one of the debug build.
package:
	scripts/setup.sh run
	scripts/package.sh
