# SPDX-License-Identifier: GPL-2.0
# Benchmarks (not tests).  Included by the top Makefile.
#   make bench-validate   chain validator packets/s and its ratio to memcpy

BUILD ?= build
BENCH_SECONDS ?= 2

$(BUILD)/bench/chain_validate_bench: bench/chain_validate_bench.c kmod/sdma_limits.c \
		kmod/chain_validate.c kmod/chain_overlap.c $(wildcard uapi/*.h kmod/*.h tests/host/chain_fixture.h)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iuapi -Ikmod -Itests/host -o $@ \
		bench/chain_validate_bench.c kmod/sdma_limits.c kmod/chain_validate.c kmod/chain_overlap.c

.PHONY: bench-validate
bench-validate: $(BUILD)/bench/chain_validate_bench
	$< $(BENCH_SECONDS)

# put_bench runs in the VM (static, like the selftests):
#   make bench   boots the VM and prints put bandwidth against memcpy, the
#                latency of one small copy and idle engine CPU time
$(BUILD)/bench/put_bench: bench/put_bench.c bench/engine_threads.h $(LIB_A) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(CFLAGS) $(WARNFLAGS) $(TPLAN_CPPFLAGS) -static -pthread $< -o $@ $(LIB_A)

.PHONY: bench bench-vm-programs
bench-vm-programs: $(BUILD)/bench/put_bench
bench:
	scripts/bench.sh

# plan_bench runs in the VM too (make bench): a round's host CPU, ioctls,
# sleeps, engine CPU and mark-to-arrival latency for chunks x regions x
# peers, against a null ioctl and memcpy of the chain bytes; all-gather
# rounds per second and bandwidth.  Its ioctls are counted through
# --wrap=ioctl (the library's too).
$(BUILD)/bench/plan_bench: bench/plan_bench.c bench/engine_threads.h $(LIB_A) $(LIB_HDRS) $(wildcard device/*.h)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(CFLAGS) $(WARNFLAGS) $(TPLAN_CPPFLAGS) -static -pthread \
		-Wl,--wrap=ioctl $< -o $@ $(LIB_A)

bench-vm-programs: $(BUILD)/bench/plan_bench
