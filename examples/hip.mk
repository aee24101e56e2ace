# SPDX-License-Identifier: GPL-2.0
# The HIP examples: hipcc builds examples/*.hip for MI200 (gfx90a) and MI300
# (gfx940), linked with the static libtplan.  They run only on a node with
# such GPUs and the KFD engine of tplan.ko, and exit 4 (skip) elsewhere.
# tests/device/hip_example.sh checks the build and that skip.  Also the
# host unit test of their shared tiling (examples/hip_gemm_tiles.h), which
# joins the host tests.  Included by the top Makefile; paths are from the
# repository root.
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

# tile_of() through its tplan_tile_order_fn wrapper gives the schedule that
# direct calls give: the host build of the kernel's own mapping.
HOST_TEST_BINS += $(BUILD)/host/hip_gemm_tiles_test
$(BUILD)/host/hip_gemm_tiles_test: tests/host/hip_gemm_tiles_test.c examples/hip_gemm_tiles.h \
		libtplan/schedule.c $(LIB_HDRS) $(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(CFLAGS) $(WARNFLAGS) -Iuapi -Ikmod -Ilibtplan -Iexamples -isystem $(KSFT_INC) \
		-o $@ $< libtplan/schedule.c
