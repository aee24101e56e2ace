# SPDX-License-Identifier: GPL-2.0
# The HIP examples: hipcc builds examples/*.hip for MI200 (gfx90a) and MI300
# (gfx940), linked with the static libtplan.  They run only on a node with
# such GPUs and the KFD engine of tplan.ko, and exit 4 (skip) elsewhere.
# tests/device/hip_example.sh checks the build and that skip; their tiling
# (examples/gemm_tiles.h) has a host unit test in tests/host.  Included by
# the top Makefile; paths are from the repository root.
#
#   make hip-examples          build/examples/hip_gemm_all_gather
#   make hip-examples HIP_ARCHS="gfx90a gfx942"   (gfx942 needs a newer ROCm)

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

hip-examples: $(HIP_EXAMPLE_BINS)
.PHONY: hip-examples
