# Proscenium: the README's two commands are `make run` and `make test`.
# Both install what is missing first (make deps) and are safe to repeat.
#
# Shared file: other engineers add lines to FUZZ_TARGETS and fill cuda-check.
# Edit with small, local changes.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# go.mod names Go 1.27 (toolchain go1.27.3): the go command fetches that
# toolchain from the module proxy on first use (76 MB, seconds) even where the
# machine's Go is older or its go env says GOTOOLCHAIN=local.
export GOTOOLCHAIN := go1.27.3

GOBIN_DIR := $(shell go env GOPATH)/bin
export PATH := $(GOBIN_DIR):$(PATH)

WAILS_VERSION := v2.14.0
NFPM_VERSION := v2.45.2
GOVULNCHECK_VERSION := v1.9.0
# The Go vulnerability database as the module proxy serves it (OSV files);
# make vulncheck indexes it locally, so the scan needs no vuln.go.dev.
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
CLI := bin/proscenium
STUDIO := build/bin/proscenium-studio

# Fuzz targets run for FUZZTIME each in `make test`, one per line: a
# duration, so the suite's time does not depend on how fast each target is
# (Go 1.27 fixed the coordinator reporting "context deadline exceeded" when
# the time ran out under load, golang/go#75804).
#   FUZZ_TARGETS += ./engine/checkpoint:FuzzSafetensorsHeader
FUZZTIME ?= 5s
FUZZ_TARGETS :=
FUZZ_TARGETS += ./app/settings:FuzzLoadSettings
FUZZ_TARGETS += ./app/server:FuzzDecodeArgs
FUZZ_TARGETS += ./app/takes:FuzzLoadTake
FUZZ_TARGETS += ./app/server:FuzzProtect
FUZZ_TARGETS += ./app/takes:FuzzTempTakeID
FUZZ_TARGETS += ./app/model:FuzzCheckScript
FUZZ_TARGETS += ./engine/gpuworker:FuzzReadFrame
FUZZ_TARGETS += ./engine/checkpoint:FuzzNPYHeader
FUZZ_TARGETS += ./engine/audio/pcm:FuzzParseWAV
FUZZ_TARGETS += ./engine/checkpoint:FuzzSafetensorsHeader
FUZZ_TARGETS += ./engine/checkpoint:FuzzShardIndex
FUZZ_TARGETS += ./engine/checkpoint:FuzzTorchZip
FUZZ_TARGETS += ./engine/drama3:FuzzSampleWith
FUZZ_TARGETS += ./app/lexicon:FuzzParse
FUZZ_TARGETS += ./engine/checkpoint:FuzzUnpickle
FUZZ_TARGETS += ./app/script:FuzzParseScreenplay
FUZZ_TARGETS += ./engine/drama3:FuzzParseConfig
FUZZ_TARGETS += ./engine/tokenizer:FuzzRoundTrip
FUZZ_TARGETS += ./engine/tokenizer:FuzzQwenScannerMatchesRegex
FUZZ_TARGETS += ./engine/tokenizer:FuzzParse
FUZZ_TARGETS += ./app/speechapi:FuzzParseSpeech
FUZZ_TARGETS += ./engine/audio/decode:FuzzDecodeWAV
FUZZ_TARGETS += ./engine/audio/decode:FuzzDecode
FUZZ_TARGETS += ./engine/cuda:FuzzParseMemAvailable
FUZZ_TARGETS += ./cmd/proscenium:FuzzParseByteSize
FUZZ_TARGETS += ./engine/audio/decode:FuzzReadReference
FUZZ_TARGETS += ./app/speechapi:FuzzUploadVoice
FUZZ_TARGETS += ./app/voicelib:FuzzManifest
FUZZ_TARGETS += ./app/projects:FuzzParseProject
FUZZ_TARGETS += ./app/scene:FuzzCaptions
FUZZ_TARGETS += ./app/lexicon:FuzzApply

.PHONY: help deps apt npm wails-cli nfpm-cli frontend cli studio bindings bindings-check run test \
	vet gotest race fuzz vitest e2e window-e2e studio-e2e api-e2e cuda-check vulncheck deb deb-test screenshot browser-screenshots clean

help:
	@echo "make run         install what is missing, build and open the studio window"
	@echo "make test        install what is missing, run the whole test suite"
	@echo "make screenshot  the window test under Xvfb, its window at 900/1280/1920 px into docs/screenshots"
	@echo "make browser-screenshots  the browser test's pages at 800/1280/1920 px into docs/screenshots"
	@echo "make deb         build out/deb/webkit2gtk-4.{0,1}/proscenium_<version>_amd64.deb"
	@echo "make deb-test    install both in a clean Debian 12 root and run the demo there"

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

nfpm-cli:
	@if [ "$$(go version -m $(GOBIN_DIR)/nfpm 2>/dev/null | awk '$$1 == "mod" {print $$3}')" != "$(NFPM_VERSION)" ]; then \
		echo "== go install nfpm $(NFPM_VERSION)"; \
		go install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION); \
	fi

# ---- builds ----

# The Go packages main and cmd/proscenium embed frontend/dist: build it first.
# Rebuilt only when a front-end source is newer than the last build.
FRONTEND_SRC := $(shell find frontend/src frontend/public frontend/wailsjs frontend/index.html \
	frontend/vite.config.ts frontend/package-lock.json -type f 2>/dev/null)

frontend: frontend/dist/index.html

frontend/dist/index.html: $(FRONTEND_SRC)
	cd frontend && npx vite build --logLevel warn
	touch $@

# The version the programs report (`proscenium version`) and the .deb's:
# the release, then the date and commit it was built from.
VERSION ?= 0.1.0+git$(shell git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null).$(shell git rev-parse --short=12 HEAD 2>/dev/null)
LDFLAGS_VERSION := -X main.version=$(VERSION)

cli: frontend
	go build -ldflags "$(LDFLAGS_VERSION)" -o $(CLI) ./cmd/proscenium

# Same build tags `wails build` uses on Linux (webkit2gtk-4.0).
studio: frontend
	go build -tags desktop,production -ldflags "-s -w" -o $(STUDIO) .

# The studio with the window test's hooks (windowtest.go: -tags e2e); the
# one people run has none.
STUDIO_E2E := build/bin/proscenium-studio-e2e
studio-e2e: frontend
	go build -tags desktop,production,e2e -ldflags "-s -w" -o $(STUDIO_E2E) .

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

# ---- vulnerabilities ----

# govulncheck against the served golang.org/x/vulndb module, indexed into a
# v1 database under out/ by the module's own indexdb: offline, reproducible
# (a new database is a VULNDB_VERSION bump). Fails on any finding the code
# can reach, in the untagged build and in the studio's and the worker's tags.
VULNDB_DIR := out/vulndb/$(VULNDB_VERSION)

vulncheck: frontend kernels
	@if [ "$$(go version -m $(GOBIN_DIR)/govulncheck 2>/dev/null | awk '$$1 == "mod" {print $$3}')" != "$(GOVULNCHECK_VERSION)" ]; then \
		echo "== go install govulncheck $(GOVULNCHECK_VERSION)"; \
		go install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION); \
	fi
	@if [ ! -s $(VULNDB_DIR)/index/db.json ]; then \
		echo "== vulnerability database from golang.org/x/vulndb@$(VULNDB_VERSION)"; \
		osv="$$(go mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p')/data/osv"; \
		rm -rf $(VULNDB_DIR).tmp; \
		go run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) -vulns "$$osv" -out $(VULNDB_DIR).tmp; \
		mv $(VULNDB_DIR).tmp $(VULNDB_DIR); \
	fi
	@echo "== govulncheck (golang.org/x/vulndb@$(VULNDB_VERSION))"
	govulncheck -db file://$(CURDIR)/$(VULNDB_DIR) ./...
	govulncheck -db file://$(CURDIR)/$(VULNDB_DIR) -tags desktop,production,cuda ./...

# ---- the Debian package ----

# Two packages of the same programs: the studio linked against WebKitGTK 4.0
# (Debian 12, Ubuntu 22.04) and against 4.1 (-tags webkit2_41: Debian 13,
# Ubuntu 24.04, which dropped 4.0). scripts/deb.sh says what goes in.
DEB_OUT := out/deb
DEB_BIN := $(DEB_OUT)/bin
DEB_LDFLAGS := -s -w $(LDFLAGS_VERSION)

deb: nfpm-cli frontend kernels
	@echo "== deb $(VERSION)"
	@mkdir -p $(DEB_BIN)/webkit2gtk-4.0 $(DEB_BIN)/webkit2gtk-4.1
	go build -tags desktop,production -ldflags "$(DEB_LDFLAGS)" -o $(DEB_BIN)/webkit2gtk-4.0/proscenium-studio .
	go build -tags desktop,production,webkit2_41 -ldflags "$(DEB_LDFLAGS)" -o $(DEB_BIN)/webkit2gtk-4.1/proscenium-studio .
	go build -ldflags "$(DEB_LDFLAGS)" -o $(DEB_BIN)/proscenium ./cmd/proscenium
	go build -tags cuda -ldflags "$(DEB_LDFLAGS)" -o $(DEB_BIN)/proscenium-gpu ./cmd/proscenium-gpu
	cd frontend && npx vite build --sourcemap --outDir ../$(DEB_BIN)/ui-sourcemaps --emptyOutDir --logLevel warn
	go run ./tools/notices -bin $(DEB_BIN)/webkit2gtk-4.0/proscenium-studio -bin $(DEB_BIN)/webkit2gtk-4.1/proscenium-studio \
		-bin $(DEB_BIN)/proscenium -bin $(DEB_BIN)/proscenium-gpu -sourcemaps $(DEB_BIN)/ui-sourcemaps \
		-extra engine/demo/qwen3/NOTICE.md:engine/demo/qwen3/LICENSE >$(DEB_OUT)/NOTICES
	@for wk in 4.0 4.1; do \
		d=$(DEB_OUT)/webkit2gtk-$$wk; rm -rf $$d && mkdir -p $$d && cp $(DEB_OUT)/NOTICES $$d/; \
		bash scripts/deb.sh "$(VERSION)" $$wk $$d $(DEB_BIN)/webkit2gtk-$$wk/proscenium-studio \
			$(DEB_BIN)/proscenium $(DEB_BIN)/proscenium-gpu || exit 1; \
	done

# Install each package in a clean Debian 12 root (which has WebKitGTK 4.0 and
# 4.1) and run the demo from /tmp there (scripts/deb-test.sh; the base
# system and apt's downloads are cached under out/deb-test).
deb-test: deb
	@for wk in 4.0 4.1; do \
		bash scripts/deb-test.sh $$(ls $(DEB_OUT)/webkit2gtk-$$wk/proscenium_$(VERSION)_amd64.deb) out/deb-test || exit 1; \
	done

# ---- the README's first command ----

# The GPU worker too, so takes run on an NVIDIA GPU where there is one (auto);
# a worker that does not build leaves the studio on the CPU backend.
run: deps studio cli
	@$(MAKE) gpu-worker || echo "== run: the GPU worker did not build (above); takes run on the CPU backend"
	bash scripts/run-studio.sh $(STUDIO) $(CLI) bin/proscenium-gpu

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
	$(MAKE) window-e2e
	$(MAKE) api-e2e
	$(MAKE) cuda-check
	$(MAKE) vulncheck
	$(MAKE) deb-test
	@echo "== make test: all passed"

vet: frontend
	@echo "== go vet ./..."
	go vet ./...
	@echo "== the kernel bindings (engine/cuda/kernel, frame_control.go) match kernels/"
	go run ./tools/kernelgen -check
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

gotest: frontend
	@echo "== go test ./..."
	go test ./...

# The race detector over every package with goroutines of its own (takes,
# the engine worker and its client, the servers): about 4 minutes on 2 cores.
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
	cd frontend && node e2e/variations.e2e.mjs ../$(CLI)
	@echo "== browser test of the studio: lines, cast, projects, scene export (+ ffmpeg ebur128, axe-core)"
	cd frontend && node e2e/studio.e2e.mjs ../$(CLI)

# The studio's flows in the desktop window (Wails, WebKitGTK) under Xvfb on
# the demo model: frontend/e2e/window.e2e.mjs. About 15 s on 2 cores.
window-e2e: studio-e2e
	@echo "== window test: the studio in its Wails window under Xvfb (lines, takes, stars, Speak all, scene export + ffmpeg ebur128, restart, axe-core)"
	cd frontend && node e2e/window.e2e.mjs ../$(STUDIO_E2E)

# The speech API driven by the official openai npm SDK (testdata-deps),
# every reply decoded back by ffmpeg.
api-e2e: cli
	@echo "== speech API test (openai SDK + ffmpeg)"
	node testdata-deps/e2e/openai-sdk.e2e.mjs $(CLI)

# CUDA (rules in kernels/cuda.mk): compile the kernels with nvcc, vet the
# cuda-tagged code and link its test binaries and the worker. Nothing runs on
# a GPU here: the test binaries run on a GPU machine (docs/CONTRIBUTING.md, "GPU workflow").
include kernels/cuda.mk

cuda-check: kernels
	@echo "== cuda-check: go build/vet -tags cuda, go test -tags cuda -c, worker build"
	go build -tags cuda ./...
	go vet -tags cuda $(CUDA_PKGS)
	@mkdir -p out/cuda-check
	go test -tags cuda -c -o out/cuda-check/ ./engine/cuda ./kernels ./cmd/proscenium-gpu
	@# no loads above a PDL wait (needs no GPU): cuobjdump beside the nvcc that built the kernels
	export PATH="$(dir $(NVCC)):$$PATH"; command -v cuobjdump >/dev/null || { echo "cuobjdump not found beside $(NVCC)"; exit 1; }; \
		go test -tags cuda -run '^(TestPreWaitAccessesParse|TestNoGlobalAccessBeforePDLWait)$$' ./kernels
	go build -tags cuda -o out/cuda-check/proscenium-gpu ./cmd/proscenium-gpu

# ---- reviews (not in CI) ----

# The window test's pages (the studio window at 900×700, 1280×800 and
# 1920×1080, new and after the scene; 1280×800 while a take runs), reduced to
# 64 colours for docs/screenshots.
screenshot: studio-e2e
	rm -rf out/window-shots && mkdir -p out/window-shots
	cd frontend && SCREENSHOTS=$(CURDIR)/out/window-shots node e2e/window.e2e.mjs ../$(STUDIO_E2E)
	for f in out/window-shots/*.png; do convert "$$f" -colors 64 "PNG8:docs/screenshots/$$(basename "$$f")"; done

# The browser tests' pages (800, 1280 and 1920 px; the studio's at 900×700,
# 1280×800 and 1920×1080), reduced to 64 colours for docs/screenshots.
browser-screenshots: cli
	rm -rf out/browser-shots && mkdir -p out/browser-shots
	cd frontend && SCREENSHOTS=$(CURDIR)/out/browser-shots node e2e/speak.e2e.mjs ../$(CLI)
	cd frontend && SCREENSHOTS=$(CURDIR)/out/browser-shots node e2e/studio.e2e.mjs ../$(CLI)
	for f in out/browser-shots/*.png; do convert "$$f" -colors 64 "PNG8:docs/screenshots/$$(basename "$$f")"; done

clean:
	rm -rf bin build/bin frontend/dist out
