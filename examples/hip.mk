# SPDX-License-Identifier: GPL-2.0
# The HIP examples: hipcc builds examples/*.hip for MI200 (gfx90a) and MI300
# (gfx940), linked with the static libtplan; Debian's clang-19 builds the
# same sources for gfx942 (MI300X/MI300A), which Debian's hipcc (ROCm 5.2)
# predates, as build/examples/NAME-gfx942, against the same HIP 5.2
# runtime.  They run only on a node with
# such GPUs and the KFD engine of tplan.ko, and exit 4 (skip) elsewhere.
# tests/device/hip_example.sh checks the build and that skip; their tiling
# (examples/gemm_tiles.h) has a host unit test in tests/host.  Included by
# the top Makefile; paths are from the repository root.
#
#   make hip-examples          build/examples/hip_gemm_all_gather
#   make hip-examples HIP_ARCHS="gfx90a gfx942"   (a hipcc of ROCm 6 or newer)

HIPCC ?= hipcc
HIP_ARCHS ?= gfx90a gfx940
HIP_CFLAGS ?= -O2 -g
HIP_WARNFLAGS := -Wall -Wextra -Werror
HIP_EXAMPLE_SRCS := $(wildcard examples/*.hip)
HIP_EXAMPLE_BINS := $(HIP_EXAMPLE_SRCS:examples/%.hip=$(BUILD)/examples/%)

$(BUILD)/examples/%: examples/%.hip $(wildcard examples/*.h) $(wildcard device/*.h) $(LIB_A) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(HIPCC) -x hip $(addprefix --offload-arch=,$(HIP_ARCHS)) $(HIP_CFLAGS) $(HIP_WARNFLAGS) \
		$(TPLAN_CPPFLAGS) -Iexamples $< -o $@ -x none $(LIB_A) -lpthread


# gfx942 through clang-19 (when installed: apt-get install clang-19
# clang-tools-19 lld-19 rocm-device-libs).  Debian's rocm-device-libs 5.2
# has no gfx942 ISA-version bitcode: a directory of links to its files
# stands in, the gfx940 file as gfx942's; it only defines
# __oclc_ISA_version, which tplan's kernels never read (gfx942 has gfx940's
# memory model and cache-control bits).
HIP_CLANG ?= clang-19
HIP_CLANG_ARCHS ?= gfx942
ROCM_BITCODE ?= /usr/lib/x86_64-linux-gnu/amdgcn/bitcode
HIP_BITCODE := $(BUILD)/rocm-bitcode
HIP_CLANG_FOUND := $(shell command -v $(HIP_CLANG) 2>/dev/null)

$(HIP_BITCODE)/.links:
	@mkdir -p $(dir $@)
	@for f in $(ROCM_BITCODE)/*.bc; do ln -sf "$$f" $(dir $@); done
	@[ -e $(dir $@)oclc_isa_version_942.bc ] || ln -sf $(ROCM_BITCODE)/oclc_isa_version_940.bc $(dir $@)oclc_isa_version_942.bc
	@touch $@

$(BUILD)/examples/%-gfx942: examples/%.hip $(wildcard examples/*.h) $(wildcard device/*.h) $(LIB_A) $(LIB_HDRS) \
		$(HIP_BITCODE)/.links
	@mkdir -p $(dir $@)
	$(HIP_CLANG) -x hip $(addprefix --offload-arch=,$(HIP_CLANG_ARCHS)) --rocm-device-lib-path=$(HIP_BITCODE) \
		-I/usr/include $(HIP_CFLAGS) $(HIP_WARNFLAGS) $(TPLAN_CPPFLAGS) -Iexamples $< -o $@ \
		-x none $(LIB_A) -lamdhip64 -lpthread

# Without hipcc (or clang-19) those builds are skipped, saying so, and make
# still succeeds: building needs no GPU, and the programs themselves say
# what they need when run where it is missing.
HIPCC_FOUND := $(shell command -v $(HIPCC) 2>/dev/null)
hip-examples: $(if $(HIPCC_FOUND),$(HIP_EXAMPLE_BINS)) $(if $(HIP_CLANG_FOUND),$(HIP_EXAMPLE_BINS:=-gfx942))
ifeq ($(HIPCC_FOUND),)
	@echo "hip-examples: SKIP: no $(HIPCC): $(notdir $(HIP_EXAMPLE_BINS)) for $(HIP_ARCHS) not built (Debian 12: apt-get install hipcc libamdhip64-dev rocm-device-libs)"
endif
ifeq ($(HIP_CLANG_FOUND),)
	@echo "hip-examples: SKIP: no $(HIP_CLANG): $(notdir $(HIP_EXAMPLE_BINS:=-gfx942)) not built (apt-get install clang-19 clang-tools-19 lld-19)"
endif
.PHONY: hip-examples
