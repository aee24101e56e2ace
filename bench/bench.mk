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
$(BUILD)/bench/put_bench: bench/put_bench.c $(LIB_A) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(CFLAGS) $(WARNFLAGS) $(TPLAN_CPPFLAGS) -static -pthread $< -o $@ $(LIB_A)

.PHONY: bench bench-vm-programs
bench-vm-programs: $(BUILD)/bench/put_bench
bench:
	scripts/bench.sh

# plan_bench runs in the VM too (make bench): per-round host cost of a plan
# for 1..1024 regions x 1..7 peers against memcpy of its chain bytes, and
# all-gather bandwidth on the software engine against memcpy
$(BUILD)/bench/plan_bench: bench/plan_bench.c $(LIB_A) $(LIB_HDRS) $(wildcard device/*.h)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(CFLAGS) $(WARNFLAGS) $(TPLAN_CPPFLAGS) -static -pthread $< -o $@ $(LIB_A)

bench-vm-programs: $(BUILD)/bench/plan_bench
