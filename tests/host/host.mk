# SPDX-License-Identifier: GPL-2.0
# Host unit tests of the plain-C parts (codec, limits, validator, ring,
# schedules, chain building, the examples' GEMM tiling), and libtplan's
# KFD ABI against the kernels' headers.
# Included by the top Makefile; paths are from the repository root.
# Standalone: make -f tests/host/host.mk host-check

BUILD ?= build
KSFT_INC ?= $(BUILD)/ksft
HOST_CC ?= cc
HOST_CFLAGS ?= -std=gnu11 -O2 -g -Wall -Wextra -Werror
# -isystem: the 6.1 harness itself trips -Wextra (unused parameters).
HOST_CPPFLAGS := -Iuapi -Ikmod -Ilibtplan -Iexamples -isystem $(KSFT_INC)
LINUX_SOURCE_TAR ?= /usr/src/linux-source-6.1.tar.xz

HOST_PLAIN_HDRS := $(wildcard uapi/*.h kmod/tplan_shim.h kmod/sdma_limits.h kmod/chain_validate.h \
	kmod/ring.h libtplan/libtplan.h libtplan/chain_build.h examples/gemm_tiles.h)

# Each test and the plain-C files it links (the same sources tplan.ko builds).
HOST_TEST_NAMES := sdma_codec_test chain_validate_test ring_test schedule_test chain_build_test \
	device_view_test gemm_tiles_test chain_fast_test
HOST_SRCS_sdma_codec_test :=
HOST_SRCS_chain_validate_test := kmod/sdma_limits.c kmod/chain_validate.c kmod/chain_overlap.c
HOST_SRCS_ring_test := kmod/ring.c
HOST_SRCS_schedule_test := libtplan/schedule.c
# Chains from the library's builders, checked by the kernel's own validator.
HOST_SRCS_chain_build_test := libtplan/schedule.c libtplan/chain_build.c \
	kmod/chain_validate.c kmod/sdma_limits.c
# The validator's fast accept path against its full walk, on the builder's chains.
HOST_SRCS_chain_fast_test := libtplan/chain_build.c kmod/chain_validate.c kmod/sdma_limits.c
HOST_SRCS_device_view_test :=
HOST_FLAGS_device_view_test := -Idevice -pthread
HOST_DEPS_device_view_test := $(BUILD)/host/device_header.stamp
# The examples' GEMM tiling (examples/gemm_tiles.h), also the producer's
# order in the schedule and chain tests: tile_of() through its
# tplan_tile_order_fn wrapper gives the schedule that direct calls give.
HOST_SRCS_gemm_tiles_test := libtplan/schedule.c

HOST_TEST_BINS += $(addprefix $(BUILD)/host/,$(HOST_TEST_NAMES))

# libtplan's KFD ABI (libtplan/kfd_abi.h) against each Debian kernel's
# kfd_ioctl.h and amdgpu_drm.h: kfd_abi_test-KVER, one per headers tree.
KFD_UAPI_TREES := $(wildcard /usr/src/linux-headers-*-common/include/uapi/linux/kfd_ioctl.h)
KFD_ABI_KVERS := $(patsubst /usr/src/linux-headers-%-common/include/uapi/linux/kfd_ioctl.h,%,\
	$(KFD_UAPI_TREES))
HOST_TEST_BINS += $(addprefix $(BUILD)/host/kfd_abi_test-,$(KFD_ABI_KVERS))
$(BUILD)/host/kfd_abi_test-%: tests/host/kfd_abi_test.c libtplan/kfd_abi.h \
		/usr/src/linux-headers-%-common/include/uapi/linux/kfd_ioctl.h
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -Ilibtplan -idirafter /usr/src/linux-headers-$*-common/include/uapi \
		-DKFD_IOCTL_H='"/usr/src/linux-headers-$*-common/include/uapi/linux/kfd_ioctl.h"' \
		-o $@ $<

.PHONY: host-tests host-check
host-tests: $(HOST_TEST_BINS)

# Runs every test binary; each prints TAP and exits non-zero on a failure.
host-check: $(HOST_TEST_BINS)
	@set -e; for t in $(HOST_TEST_BINS); do echo "# $$t"; $$t; done

define HOST_TEST_RULE
$(BUILD)/host/$(1): tests/host/$(1).c $(HOST_SRCS_$(1)) $(HOST_PLAIN_HDRS) \
		$(wildcard tests/host/*.h) $(KSFT_INC)/kselftest_harness.h $(HOST_DEPS_$(1))
	@mkdir -p $$(@D)
	$$(HOST_CC) $$(HOST_CFLAGS) $$(HOST_CPPFLAGS) $(HOST_FLAGS_$(1)) -o $$@ $$< $(HOST_SRCS_$(1))
endef
$(foreach t,$(HOST_TEST_NAMES),$(eval $(call HOST_TEST_RULE,$(t))))

# The device header's host build must stand alone as C11 (with POSIX
# barriers) and as C++.
HOST_CXX ?= c++
$(BUILD)/host/device_header.stamp: device/tplan_device.h uapi/tplan_chain.h
	@mkdir -p $(@D)
	echo '#include "tplan_device.h"' | $(HOST_CC) -x c -std=c11 -D_POSIX_C_SOURCE=200112L \
		-pedantic -Wall -Wextra -Werror -Iuapi -Idevice -fsyntax-only -
	echo '#include "tplan_device.h"' | $(HOST_CXX) -x c++ -std=c++11 -pedantic \
		-Wall -Wextra -Werror -Iuapi -Idevice -fsyntax-only -
	@touch $@

# The kselftest harness comes from Debian's linux-source package and is
# extracted into the build tree, never committed.  The top Makefile has this
# rule; it is repeated only for standalone use of this file.
ifeq ($(words $(MAKEFILE_LIST)),1)
$(KSFT_INC)/kselftest_harness.h:
	@mkdir -p $(KSFT_INC)
	tar -xJf $(LINUX_SOURCE_TAR) -C $(KSFT_INC) --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	@touch $@
endif
