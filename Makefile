# Proscenium: the README's two commands are `make run` and `make test`.
# Both install what is missing first (make deps) and are safe to repeat.
#
# Shared file: other engineers add lines to FUZZ_TARGETS and fill cuda-check.
# Edit with small, local changes.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GOBIN_DIR := $(shell go env GOPATH)/bin
export PATH := $(GOBIN_DIR):$(PATH)

WAILS_VERSION := v2.12.0
CLI := bin/proscenium
STUDIO := build/bin/proscenium-studio

# Fuzz targets run for FUZZTIME each in `make test`, one per line. FUZZTIME is
# an execution count, not a duration: with a duration, Go 1.26's fuzz
# coordinator can report "context deadline exceeded" as a failure when the
# time runs out under CPU load (golang/go#75804, fixed in Go 1.27; seen in
# this project's CI run on FuzzDecodeArgs with no failing input).
#   FUZZ_TARGETS += ./engine/checkpoint:FuzzSafetensorsHeader
FUZZTIME ?= 20000x
FUZZ_TARGETS :=
FUZZ_TARGETS += ./app:FuzzLoadSettings
FUZZ_TARGETS += ./app:FuzzDecodeArgs
FUZZ_TARGETS += ./app:FuzzLoadTake
FUZZ_TARGETS += ./app:FuzzProtect
FUZZ_TARGETS += ./app:FuzzTempTakeID
FUZZ_TARGETS += ./engine/gpuworker:FuzzReadFrame
FUZZ_TARGETS += ./engine/checkpoint:FuzzNPYHeader
FUZZ_TARGETS += ./engine/audio:FuzzParseWAV
FUZZ_TARGETS += ./engine/checkpoint:FuzzSafetensorsHeader
FUZZ_TARGETS += ./engine/checkpoint:FuzzTorchZip
FUZZ_TARGETS += ./engine/drama3:FuzzSampleWith
FUZZ_TARGETS += ./engine/checkpoint:FuzzUnpickle
FUZZ_TARGETS += ./engine/drama3:FuzzParseConfig
FUZZ_TARGETS += ./engine/tokenizer:FuzzRoundTrip
FUZZ_TARGETS += ./engine/tokenizer:FuzzQwenScannerMatchesRegex
FUZZ_TARGETS += ./engine/tokenizer:FuzzParse
FUZZ_TARGETS += ./app/speechapi:FuzzParseSpeech

.PHONY: help deps apt npm wails-cli frontend cli studio bindings bindings-check run test \
	vet gotest race fuzz vitest e2e api-e2e cuda-check screenshot clean

help:
	@echo "make run         install what is missing, build and open the studio window"
	@echo "make test        install what is missing, run the whole test suite"
	@echo "make screenshot  open the window under Xvfb and save out/screenshot.png"

# ---- dependencies (idempotent: each step skips what is already there) ----

deps: apt npm wails-cli

apt:
	bash scripts/setup-debian.sh

npm:
	bash scripts/npm-install.sh frontend
	bash scripts/npm-install.sh testdata-deps

wails-cli:
	@if [ "$$(wails version 2>/dev/null | head -n1)" != "$(WAILS_VERSION)" ]; then \
		echo "== go install wails CLI $(WAILS_VERSION)"; \
		go install github.com/wailsapp/wails/v2/cmd/wails@$(WAILS_VERSION); \
	fi

# ---- builds ----

# The Go packages main and cmd/proscenium embed frontend/dist: build it first.
# Rebuilt only when a front-end source is newer than the last build.
FRONTEND_SRC := $(shell find frontend/src frontend/wailsjs frontend/index.html \
	frontend/vite.config.ts frontend/package-lock.json -type f 2>/dev/null)

frontend: frontend/dist/index.html

frontend/dist/index.html: $(FRONTEND_SRC)
	cd frontend && npx vite build --logLevel warn
	touch $@

cli: frontend
	go build -o $(CLI) ./cmd/proscenium

# Same build tags `wails build` uses on Linux (webkit2gtk-4.0).
studio: frontend
	go build -tags desktop,production -ldflags "-s -w" -o $(STUDIO) .

# Regenerate frontend/wailsjs (committed) after changing the app service.
bindings: wails-cli frontend
	wails generate module

# The committed bindings must match the Go service (the UI's types come from them).
bindings-check: wails-cli frontend
	@echo "== Wails bindings match app.Service"
	@rm -rf out/wailsjs-committed && mkdir -p out && cp -r frontend/wailsjs out/wailsjs-committed
	@wails generate module >out/wails-generate.log 2>&1 || { cat out/wails-generate.log; exit 1; }
	@diff -r out/wailsjs-committed frontend/wailsjs || \
		{ echo "frontend/wailsjs is out of date with app.Service: commit the regenerated files"; exit 1; }

# ---- the README's first command ----

run: deps studio cli
	bash scripts/run-studio.sh $(STUDIO) $(CLI)

# ---- the README's second command ----

# Deps are installed by this target, so missing test data is a failure (CI=1).
test: export CI = 1
test: deps
	$(MAKE) frontend
	$(MAKE) vet
	$(MAKE) bindings-check
	$(MAKE) gotest
	$(MAKE) race
	$(MAKE) fuzz
	$(MAKE) vitest
	$(MAKE) e2e
	$(MAKE) api-e2e
	$(MAKE) cuda-check
	@echo "== make test: all passed"

vet: frontend
	@echo "== go vet ./..."
	go vet ./...
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

gotest: frontend
	@echo "== go test ./..."
	go test ./...

# The race detector over every package with goroutines of its own (takes,
# the engine worker and its client, the servers): about 3 minutes on 2 cores.
race: frontend
	@echo "== go test -race ./app/... ./engine/... ./cmd/..."
	go test -race ./app/... ./engine/... ./cmd/...

fuzz:
	@echo "== fuzz ($(FUZZTIME) each): $(or $(strip $(FUZZ_TARGETS)),none listed)"
	@for t in $(FUZZ_TARGETS); do \
		pkg="$${t%%:*}"; name="$${t##*:}"; \
		echo "-- $$pkg $$name"; \
		go test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) "$$pkg"; \
	done

# Type-check the UI against the generated Wails bindings, then unit tests.
vitest:
	@echo "== svelte-check + vitest"
	cd frontend && npx svelte-check --tsconfig ./tsconfig.json --fail-on-warnings --output machine
	cd frontend && npx vitest run

# Browser test: Debian's chromium against `proscenium serve --ui`.
e2e: cli
	@echo "== browser test (playwright-core + /usr/bin/chromium)"
	cd frontend && node e2e/speak.e2e.mjs ../$(CLI)

# The speech API driven by the official openai npm SDK (testdata-deps),
# every reply decoded back by ffmpeg.
api-e2e: cli
	@echo "== speech API test (openai SDK + ffmpeg)"
	node testdata-deps/e2e/openai-sdk.e2e.mjs $(CLI)

# CUDA (rules in kernels/cuda.mk): compile the kernels with nvcc, vet the
# cuda-tagged code and link its test binaries and the worker. Nothing runs on
# a GPU here: the test binaries run on a GPU machine (README, GPU workflow).
include kernels/cuda.mk

cuda-check: kernels
	@echo "== cuda-check: go build/vet -tags cuda, go test -tags cuda -c, worker build"
	go build -tags cuda ./...
	go vet -tags cuda $(CUDA_PKGS)
	@mkdir -p out/cuda-check
	go test -tags cuda -c -o out/cuda-check/ ./engine/cuda ./kernels
	go build -tags cuda -o out/cuda-check/proscenium-gpu ./cmd/proscenium-gpu

# ---- reviews (not in CI) ----

screenshot: studio cli
	bash scripts/screenshot.sh $(STUDIO) $(CLI) out/screenshot.png

clean:
	rm -rf bin build/bin frontend/dist out
