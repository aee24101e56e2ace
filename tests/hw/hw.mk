# SPDX-License-Identifier: GPL-2.0
# The test-node protocol (docs/test-node.md): tests/hw/hw_check.c, the
# steps of it a program takes on KFD and tplan.ko, linked with the static
# libtplan (its KFD glue, libtplan/kfd.c, is what it tests) and static, so
# that it also runs in the test VM over the tests' KFD stand-in.
# scripts/hw-check.sh runs it on an MI200/MI300 node, then the examples and
# benchmarks on tplan's KFD engine; anywhere else it says what it needs and
# skips (exit 0).  make check builds it and runs it over the stand-in.
# Included by the top Makefile; paths are from the repository root.
#
#   make hw-check            the protocol here (SKIPs without such a node)
#   make hw-check-programs   build/hw/hw_check only

HW_CHECK_SRCS := tests/hw/hw_check.c tests/hw/hw_queue.c
$(BUILD)/hw/hw_check: $(HW_CHECK_SRCS) tests/hw/hw_queue.h selftests/tplan_kfd.h $(LIB_A) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(CFLAGS) $(WARNFLAGS) $(TPLAN_CPPFLAGS) -Iselftests -static -pthread \
		$(HW_CHECK_SRCS) -o $@ $(LIB_A)

.PHONY: hw-check hw-check-programs
hw-check-programs: $(BUILD)/hw/hw_check
hw-check:
	BUILD=$(BUILD) scripts/hw-check.sh
