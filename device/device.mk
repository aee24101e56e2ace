# SPDX-License-Identifier: GPL-2.0
# The device header on real GPU compilers: hipcc builds
# tests/device/isa_kernels.hip for gfx90a and gfx940 and
# tests/device/isa_check.sh reads the machine code for the memory ordering
# of ARCHITECTURE.md §5 (SKIPs, exit 4, without hipcc).  Included by the
# top Makefile; paths are from the repository root.
#
#   make isa-check                          the shipped header must pass
#   make isa-check ISA_VARIANT=no-barrier   a broken producer: must fail
#   make isa-check ISA_VARIANT=no-release   a broken producer: must fail
#   make isa-check ISA_VARIANT=release-no-wait   a broken release: must fail
#   make isa-check ISA_VARIANT=release-relaxed   a broken release: must fail
#   make isa-check-negatives                passes only if all are refused

ISA_VARIANT ?= normal

.PHONY: isa-check isa-check-negatives
isa-check:
	tests/device/isa_check.sh --variant $(ISA_VARIANT)
isa-check-negatives:
	tests/device/isa_check.sh --negatives
