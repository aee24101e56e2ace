# SPDX-License-Identifier: GPL-2.0
# Fuzzing of the SDMA codec and the chain validator (libFuzzer, ASan, UBSan).
# Included by the top Makefile.  make fuzz: a local run of FUZZ_SECONDS
# (default 600); make check runs tests/fuzz/run.sh with its CI budget.

BUILD ?= build
FUZZ_SECONDS ?= 600

.PHONY: fuzz fuzz-corpus
fuzz:
	BUILD=$(BUILD) tests/fuzz/run.sh $(FUZZ_SECONDS)

# Regenerates the seed corpus (valid chains of every shape, other packets).
fuzz-corpus:
	@mkdir -p $(BUILD)/fuzz
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -Iuapi -Ikmod -Itests/host \
		-o $(BUILD)/fuzz/make_corpus tests/fuzz/make_corpus.c kmod/sdma_limits.c kmod/chain_validate.c kmod/chain_overlap.c
	$(BUILD)/fuzz/make_corpus tests/fuzz/corpus
