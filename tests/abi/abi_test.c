/* SPDX-License-Identifier: MIT */
/*
 * The ioctl ABI of uapi/tplan.h and uapi/tplan_chain.h, frozen in a table:
 * every struct's size, every member's offset and size, every ioctl number
 * and constant.  Checked at compile time (static assertions) and at run
 * time (TAP, one point per struct), built as C and as C++ by
 * tests/abi/run.sh, which also checks that the table names everything the
 * headers define.  An accidental change fails; a deliberate one updates
 * the table (tests/abi/table.sh prints it) and, if old binaries would
 * break, TPLAN_ABI_VERSION.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tplan.h"

/* S(struct, sizeof), F(struct, member, offset, sizeof), C(constant, value) */
#define ABI_TABLE(S, F, C) \
	S(tplan_info, 40) \
	F(tplan_info, size, 0, 4) \
	F(tplan_info, flags, 4, 4) \
	F(tplan_info, abi_version, 8, 4) \
	F(tplan_info, engines, 12, 4) \
	F(tplan_info, ring_size, 16, 4) \
	F(tplan_info, prep_limit_pct, 20, 4) \
	F(tplan_info, max_world_size, 24, 4) \
	F(tplan_info, __reserved, 28, 4) \
	F(tplan_info, max_copy_bytes_sdma440, 32, 4) \
	F(tplan_info, max_copy_bytes_sdma442, 36, 4) \
	S(tplan_group_join, 56) \
	F(tplan_group_join, size, 0, 4) \
	F(tplan_group_join, flags, 4, 4) \
	F(tplan_group_join, key, 8, 8) \
	F(tplan_group_join, world_size, 16, 4) \
	F(tplan_group_join, rank, 20, 4) \
	F(tplan_group_join, heap_size, 24, 8) \
	F(tplan_group_join, engine, 32, 4) \
	F(tplan_group_join, sdma_ip, 36, 4) \
	F(tplan_group_join, timeout_ms, 40, 4) \
	F(tplan_group_join, heap_fd, 44, 4) \
	F(tplan_group_join, heap_base, 48, 8) \
	S(tplan_group_barrier, 16) \
	F(tplan_group_barrier, size, 0, 4) \
	F(tplan_group_barrier, flags, 4, 4) \
	F(tplan_group_barrier, timeout_ms, 8, 4) \
	F(tplan_group_barrier, __reserved, 12, 4) \
	S(tplan_group_all_gather, 32) \
	F(tplan_group_all_gather, size, 0, 4) \
	F(tplan_group_all_gather, flags, 4, 4) \
	F(tplan_group_all_gather, blob_size, 8, 4) \
	F(tplan_group_all_gather, timeout_ms, 12, 4) \
	F(tplan_group_all_gather, in, 16, 8) \
	F(tplan_group_all_gather, out, 24, 8) \
	S(tplan_heap_info, 40) \
	F(tplan_heap_info, size, 0, 4) \
	F(tplan_heap_info, rank, 4, 4) \
	F(tplan_heap_info, heap_base, 8, 8) \
	F(tplan_heap_info, heap_size, 16, 8) \
	F(tplan_heap_info, mmap_offset, 24, 8) \
	F(tplan_heap_info, gate_area_offset, 32, 8) \
	S(tplan_put, 48) \
	F(tplan_put, size, 0, 4) \
	F(tplan_put, flags, 4, 4) \
	F(tplan_put, peer, 8, 4) \
	F(tplan_put, __reserved, 12, 4) \
	F(tplan_put, src_offset, 16, 8) \
	F(tplan_put, dst_offset, 24, 8) \
	F(tplan_put, length, 32, 8) \
	F(tplan_put, signal_offset, 40, 8) \
	S(tplan_quiet, 16) \
	F(tplan_quiet, size, 0, 4) \
	F(tplan_quiet, peer, 4, 4) \
	F(tplan_quiet, timeout_ms, 8, 4) \
	F(tplan_quiet, flags, 12, 4) \
	S(tplan_queue_info, 112) \
	F(tplan_queue_info, size, 0, 4) \
	F(tplan_queue_info, peer, 4, 4) \
	F(tplan_queue_info, rptr, 8, 8) \
	F(tplan_queue_info, wptr, 16, 8) \
	F(tplan_queue_info, packets, 24, 8) \
	F(tplan_queue_info, ring_size, 32, 4) \
	F(tplan_queue_info, state, 36, 4) \
	F(tplan_queue_info, prep_charged, 40, 4) \
	F(tplan_queue_info, prep_limit, 44, 4) \
	F(tplan_queue_info, fault_offset, 48, 8) \
	F(tplan_queue_info, fault_dword, 56, 4) \
	F(tplan_queue_info, fault_reason, 60, 4) \
	F(tplan_queue_info, flags, 64, 4) \
	F(tplan_queue_info, __reserved, 68, 4) \
	F(tplan_queue_info, ring_mmap_offset, 72, 8) \
	F(tplan_queue_info, ptr_mmap_offset, 80, 8) \
	F(tplan_queue_info, gate_seq, 88, 4) \
	F(tplan_queue_info, done_seq, 92, 4) \
	F(tplan_queue_info, doorbells, 96, 8) \
	F(tplan_queue_info, prep_reserved, 104, 4) \
	F(tplan_queue_info, __reserved2, 108, 4) \
	S(tplan_queue_inject, 24) \
	F(tplan_queue_inject, size, 0, 4) \
	F(tplan_queue_inject, peer, 4, 4) \
	F(tplan_queue_inject, ndw, 8, 4) \
	F(tplan_queue_inject, flags, 12, 4) \
	F(tplan_queue_inject, dwords, 16, 8) \
	S(tplan_chain_desc, 24) \
	F(tplan_chain_desc, ndw, 0, 4) \
	F(tplan_chain_desc, ref, 4, 4) \
	F(tplan_chain_desc, ready_offset, 8, 8) \
	F(tplan_chain_desc, arrival_offset, 16, 8) \
	S(tplan_chain_submit, 80) \
	F(tplan_chain_submit, size, 0, 4) \
	F(tplan_chain_submit, flags, 4, 4) \
	F(tplan_chain_submit, peer, 8, 4) \
	F(tplan_chain_submit, nchains, 12, 4) \
	F(tplan_chain_submit, chains, 16, 8) \
	F(tplan_chain_submit, dwords, 24, 8) \
	F(tplan_chain_submit, ndw, 32, 4) \
	F(tplan_chain_submit, __reserved, 36, 4) \
	F(tplan_chain_submit, reject, 40, 40) \
	S(tplan_plan_create, 72) \
	F(tplan_plan_create, size, 0, 4) \
	F(tplan_plan_create, flags, 4, 4) \
	F(tplan_plan_create, buffer_offset, 8, 8) \
	F(tplan_plan_create, buffer_bytes, 16, 8) \
	F(tplan_plan_create, own_offset, 24, 8) \
	F(tplan_plan_create, own_bytes, 32, 8) \
	F(tplan_plan_create, nchunks, 40, 4) \
	F(tplan_plan_create, timeout_ms, 44, 4) \
	F(tplan_plan_create, chunk_base, 48, 8) \
	F(tplan_plan_create, plan_id, 56, 4) \
	F(tplan_plan_create, depth, 60, 4) \
	F(tplan_plan_create, gate_offset, 64, 8) \
	S(tplan_plan_chain, 16) \
	F(tplan_plan_chain, chunk, 0, 4) \
	F(tplan_plan_chain, peer, 4, 4) \
	F(tplan_plan_chain, ndw, 8, 4) \
	F(tplan_plan_chain, __reserved, 12, 4) \
	S(tplan_plan_prepare, 88) \
	F(tplan_plan_prepare, size, 0, 4) \
	F(tplan_plan_prepare, plan_id, 4, 4) \
	F(tplan_plan_prepare, nchains, 8, 4) \
	F(tplan_plan_prepare, ndw, 12, 4) \
	F(tplan_plan_prepare, chains, 16, 8) \
	F(tplan_plan_prepare, dwords, 24, 8) \
	F(tplan_plan_prepare, writers, 32, 8) \
	F(tplan_plan_prepare, timeout_ms, 40, 4) \
	F(tplan_plan_prepare, flags, 44, 4) \
	F(tplan_plan_prepare, reject, 48, 40) \
	S(tplan_plan_start, 32) \
	F(tplan_plan_start, size, 0, 4) \
	F(tplan_plan_start, plan_id, 4, 4) \
	F(tplan_plan_start, round, 8, 4) \
	F(tplan_plan_start, nchunks, 12, 4) \
	F(tplan_plan_start, first_chunk, 16, 4) \
	F(tplan_plan_start, total_chunks, 20, 4) \
	F(tplan_plan_start, gate_offset, 24, 8) \
	S(tplan_plan_shortfall, 32) \
	F(tplan_plan_shortfall, chunk, 0, 4) \
	F(tplan_plan_shortfall, rank, 4, 4) \
	F(tplan_plan_shortfall, what, 8, 4) \
	F(tplan_plan_shortfall, __reserved, 12, 4) \
	F(tplan_plan_shortfall, have, 16, 8) \
	F(tplan_plan_shortfall, want, 24, 8) \
	S(tplan_fault_report, 24) \
	F(tplan_fault_report, src, 0, 4) \
	F(tplan_fault_report, dst, 4, 4) \
	F(tplan_fault_report, reason, 8, 4) \
	F(tplan_fault_report, dword, 12, 4) \
	F(tplan_fault_report, offset, 16, 8) \
	S(tplan_plan_wait, 64) \
	F(tplan_plan_wait, size, 0, 4) \
	F(tplan_plan_wait, plan_id, 4, 4) \
	F(tplan_plan_wait, timeout_ms, 8, 4) \
	F(tplan_plan_wait, flags, 12, 4) \
	F(tplan_plan_wait, report, 16, 8) \
	F(tplan_plan_wait, report_cap, 24, 4) \
	F(tplan_plan_wait, report_count, 28, 4) \
	F(tplan_plan_wait, round, 32, 4) \
	F(tplan_plan_wait, __reserved, 36, 4) \
	F(tplan_plan_wait, fault, 40, 24) \
	S(tplan_plan_next_round, 32) \
	F(tplan_plan_next_round, size, 0, 4) \
	F(tplan_plan_next_round, plan_id, 4, 4) \
	F(tplan_plan_next_round, timeout_ms, 8, 4) \
	F(tplan_plan_next_round, round, 12, 4) \
	F(tplan_plan_next_round, flags, 16, 4) \
	F(tplan_plan_next_round, __reserved, 20, 4) \
	F(tplan_plan_next_round, armed, 24, 4) \
	F(tplan_plan_next_round, __reserved2, 28, 4) \
	S(tplan_plan_close, 16) \
	F(tplan_plan_close, size, 0, 4) \
	F(tplan_plan_close, plan_id, 4, 4) \
	F(tplan_plan_close, timeout_ms, 8, 4) \
	F(tplan_plan_close, state, 12, 4) \
	S(tplan_plan_state, 24) \
	F(tplan_plan_state, size, 0, 4) \
	F(tplan_plan_state, plan_id, 4, 4) \
	F(tplan_plan_state, state, 8, 4) \
	F(tplan_plan_state, round, 12, 4) \
	F(tplan_plan_state, armed, 16, 4) \
	F(tplan_plan_state, depth, 20, 4) \
	S(tplan_heap_export, 16) \
	F(tplan_heap_export, size, 0, 4) \
	F(tplan_heap_export, rank, 4, 4) \
	F(tplan_heap_export, flags, 8, 4) \
	F(tplan_heap_export, fd, 12, 4) \
	S(tplan_addr_map_set, 24) \
	F(tplan_addr_map_set, size, 0, 4) \
	F(tplan_addr_map_set, flags, 4, 4) \
	F(tplan_addr_map_set, count, 8, 4) \
	F(tplan_addr_map_set, __reserved, 12, 4) \
	F(tplan_addr_map_set, heap_dev, 16, 8) \
	S(tplan_queue_attach_kfd, 48) \
	F(tplan_queue_attach_kfd, size, 0, 4) \
	F(tplan_queue_attach_kfd, flags, 4, 4) \
	F(tplan_queue_attach_kfd, peer, 8, 4) \
	F(tplan_queue_attach_kfd, kfd_fd, 12, 4) \
	F(tplan_queue_attach_kfd, ring_addr, 16, 8) \
	F(tplan_queue_attach_kfd, ptr_addr, 24, 8) \
	F(tplan_queue_attach_kfd, doorbell_addr, 32, 8) \
	F(tplan_queue_attach_kfd, gpu_id, 40, 4) \
	F(tplan_queue_attach_kfd, queue_id, 44, 4) \
	S(tplan_chain_reject, 40) \
	F(tplan_chain_reject, rule, 0, 4) \
	F(tplan_chain_reject, chain, 4, 4) \
	F(tplan_chain_reject, packet, 8, 4) \
	F(tplan_chain_reject, rank, 12, 4) \
	F(tplan_chain_reject, value, 16, 8) \
	F(tplan_chain_reject, other_rank, 24, 4) \
	F(tplan_chain_reject, other_chain, 28, 4) \
	F(tplan_chain_reject, other_packet, 32, 4) \
	F(tplan_chain_reject, __reserved, 36, 4) \
	C(TPLAN_ABI_VERSION, 0x1) \
	C(TPLAN_ENGINE_SOFT, 0x1) \
	C(TPLAN_ENGINE_KFD, 0x2) \
	C(TPLAN_ENGINE_ALL, 0x3) \
	C(TPLAN_IOC_INFO, 0x3b80) \
	C(TPLAN_SDMA_440, 0x40400) \
	C(TPLAN_SDMA_442, 0x40402) \
	C(TPLAN_TIMEOUT_DEFAULT_MS, 0x7530) \
	C(TPLAN_IOC_GROUP_JOIN, 0x3b81) \
	C(TPLAN_HEAP_SIZE_MAX, 0x400000000) \
	C(TPLAN_IOC_GROUP_BARRIER, 0x3b82) \
	C(TPLAN_ALL_GATHER_MAX, 0x1000) \
	C(TPLAN_IOC_GROUP_ALL_GATHER, 0x3b83) \
	C(TPLAN_IOC_HEAP_INFO, 0x3b84) \
	C(TPLAN_PUT_SIGNAL, 0x1) \
	C(TPLAN_PUT_FLAGS_ALL, 0x1) \
	C(TPLAN_IOC_PUT, 0x3b85) \
	C(TPLAN_QUIET_OPEN_GATES, 0x1) \
	C(TPLAN_QUIET_FLAGS_ALL, 0x1) \
	C(TPLAN_IOC_QUIET, 0x3b86) \
	C(TPLAN_QPTR_WPTR, 0) \
	C(TPLAN_QPTR_RPTR, 0x8) \
	C(TPLAN_QPTR_GATE_SEQ, 0x40) \
	C(TPLAN_QPTR_DONE_SEQ, 0x48) \
	C(TPLAN_CHAIN_FENCE_BYTES, 0x10) \
	C(TPLAN_ROUND_HEAD_BYTES, 0x18) \
	C(TPLAN_QUEUE_INFO_MAKE, 0x1) \
	C(TPLAN_QUEUE_INFO_FLAGS_ALL, 0x1) \
	C(TPLAN_IOC_QUEUE_INFO, 0x3b87) \
	C(TPLAN_IOC_QUEUE_INJECT, 0x3b88) \
	C(TPLAN_CHAIN_SUBMIT_MAX, 0x10000) \
	C(TPLAN_CHAIN_SUBMIT_DWORDS_MAX, 0x100000) \
	C(TPLAN_IOC_CHAIN_SUBMIT, 0x3b89) \
	C(TPLAN_ROUND_MAX, 0xffffffff) \
	C(TPLAN_PLAN_CHUNKS_MAX, 0x10000) \
	C(TPLAN_PLAN_DWORDS_MAX, 0x1000000) \
	C(TPLAN_PLAN_DEPTH_MAX, 0x40) \
	C(TPLAN_IOC_PLAN_CREATE, 0x3b8a) \
	C(TPLAN_IOC_PLAN_PREPARE, 0x3b8b) \
	C(TPLAN_IOC_PLAN_START, 0x3b8c) \
	C(TPLAN_PLAN_WAIT_AT, 0x1) \
	C(TPLAN_PLAN_WAIT_FLAGS_ALL, 0x1) \
	C(TPLAN_IOC_PLAN_WAIT, 0x3b8d) \
	C(TPLAN_NEXT_ROUND_UNRELEASED, 0x1) \
	C(TPLAN_NEXT_ROUND_AT, 0x2) \
	C(TPLAN_NEXT_ROUND_FLAGS_ALL, 0x3) \
	C(TPLAN_IOC_PLAN_NEXT_ROUND, 0x3b8e) \
	C(TPLAN_IOC_PLAN_CLOSE, 0x3b8f) \
	C(TPLAN_IOC_PLAN_STATE, 0x3b90) \
	C(TPLAN_IOC_HEAP_EXPORT, 0x3b91) \
	C(TPLAN_IOC_ADDR_MAP, 0x3b92) \
	C(TPLAN_IOC_QUEUE_ATTACH_KFD, 0x3b93) \
	C(TPLAN_CMD_BASE, 0x80) \
	C(TPLAN_CMD_INFO, 0x80) \
	C(TPLAN_CMD_GROUP_JOIN, 0x81) \
	C(TPLAN_CMD_GROUP_BARRIER, 0x82) \
	C(TPLAN_CMD_GROUP_ALL_GATHER, 0x83) \
	C(TPLAN_CMD_HEAP_INFO, 0x84) \
	C(TPLAN_CMD_PUT, 0x85) \
	C(TPLAN_CMD_QUIET, 0x86) \
	C(TPLAN_CMD_QUEUE_INFO, 0x87) \
	C(TPLAN_CMD_QUEUE_INJECT, 0x88) \
	C(TPLAN_CMD_CHAIN_SUBMIT, 0x89) \
	C(TPLAN_CMD_PLAN_CREATE, 0x8a) \
	C(TPLAN_CMD_PLAN_PREPARE, 0x8b) \
	C(TPLAN_CMD_PLAN_START, 0x8c) \
	C(TPLAN_CMD_PLAN_WAIT, 0x8d) \
	C(TPLAN_CMD_PLAN_NEXT_ROUND, 0x8e) \
	C(TPLAN_CMD_PLAN_CLOSE, 0x8f) \
	C(TPLAN_CMD_PLAN_STATE, 0x90) \
	C(TPLAN_CMD_HEAP_EXPORT, 0x91) \
	C(TPLAN_CMD_ADDR_MAP, 0x92) \
	C(TPLAN_CMD_QUEUE_ATTACH_KFD, 0x93) \
	C(TPLAN_QUEUE_IDLE, 0) \
	C(TPLAN_QUEUE_BUSY, 0x1) \
	C(TPLAN_QUEUE_FAULT, 0x2) \
	C(TPLAN_QUEUE_STOPPED, 0x3) \
	C(TPLAN_FAULT_NONE, 0) \
	C(TPLAN_FAULT_BAD_PACKET, 0x1) \
	C(TPLAN_FAULT_UNSUPPORTED, 0x2) \
	C(TPLAN_FAULT_BAD_ADDRESS, 0x3) \
	C(TPLAN_FAULT_POLL_TIMEOUT, 0x4) \
	C(TPLAN_FAULT_RING_END, 0x5) \
	C(TPLAN_PLAN_EMPTY, 0) \
	C(TPLAN_PLAN_PREPARED, 0x1) \
	C(TPLAN_PLAN_DONE, 0x2) \
	C(TPLAN_PLAN_FAILED, 0x3) \
	C(TPLAN_PLAN_CLOSING, 0x4) \
	C(TPLAN_PLAN_CLOSED, 0x5) \
	C(TPLAN_SHORT_MARKS, 0x1) \
	C(TPLAN_SHORT_EXTRA_MARKS, 0x2) \
	C(TPLAN_SHORT_ARRIVAL, 0x3) \
	C(TPLAN_GATE_ROW_BYTES, 0x40) \
	C(TPLAN_GATE_READY, 0) \
	C(TPLAN_GATE_ARRIVAL, 0x8) \
	C(TPLAN_GATE_WRITERS, 0x10) \
	C(TPLAN_GATE_EXPECTED, 0x18) \
	C(TPLAN_GATE_RELEASED, 0) \
	C(TPLAN_CHAIN_MAX_DWORDS, 0x40000) \
	C(TPLAN_CHAIN_POLL_FUNC, 0x5) \
	C(TPLAN_CHAIN_POLL_MASK, 0xffffffff) \
	C(TPLAN_CHAIN_POLL_RETRY, 0xfff) \
	C(TPLAN_CHAIN_OK, 0) \
	C(TPLAN_CHAIN_R_SIZE, 0x1) \
	C(TPLAN_CHAIN_R_TRUNCATED, 0x2) \
	C(TPLAN_CHAIN_R_OPCODE, 0x3) \
	C(TPLAN_CHAIN_R_FIRST, 0x4) \
	C(TPLAN_CHAIN_R_POLL_AGAIN, 0x5) \
	C(TPLAN_CHAIN_R_NO_COPY, 0x6) \
	C(TPLAN_CHAIN_R_NO_ATOMIC, 0x7) \
	C(TPLAN_CHAIN_R_TRAILING, 0x8) \
	C(TPLAN_CHAIN_R_RESERVED, 0x9) \
	C(TPLAN_CHAIN_R_POLL_MODE, 0xa) \
	C(TPLAN_CHAIN_R_POLL_FUNC, 0xb) \
	C(TPLAN_CHAIN_R_POLL_MASK, 0xc) \
	C(TPLAN_CHAIN_R_POLL_REF, 0xd) \
	C(TPLAN_CHAIN_R_POLL_RETRY, 0xe) \
	C(TPLAN_CHAIN_R_POLL_ADDR, 0xf) \
	C(TPLAN_CHAIN_R_COPY_FLAGS, 0x10) \
	C(TPLAN_CHAIN_R_COPY_SRC, 0x12) \
	C(TPLAN_CHAIN_R_COPY_DST, 0x13) \
	C(TPLAN_CHAIN_R_COPY_DST_RANGE, 0x14) \
	C(TPLAN_CHAIN_R_SUBWIN_ELEMENT, 0x15) \
	C(TPLAN_CHAIN_R_SUBWIN_DEPTH, 0x16) \
	C(TPLAN_CHAIN_R_SUBWIN_EXTENT, 0x17) \
	C(TPLAN_CHAIN_R_SUBWIN_ALIGN, 0x18) \
	C(TPLAN_CHAIN_R_SUBWIN_SHAPE, 0x19) \
	C(TPLAN_CHAIN_R_ATOMIC_OP, 0x1a) \
	C(TPLAN_CHAIN_R_ATOMIC_VALUE, 0x1b) \
	C(TPLAN_CHAIN_R_ATOMIC_UNUSED, 0x1c) \
	C(TPLAN_CHAIN_R_ATOMIC_ADDR, 0x1d) \
	C(TPLAN_CHAIN_R_OVERLAP, 0x1e) \
	C(TPLAN_CHAIN_R_OVERLAP, 0x1e)

#ifdef __cplusplus
#define ABI_ASSERT(cond, what) static_assert(cond, what);
#else
#define ABI_ASSERT(cond, what) _Static_assert(cond, what);
#endif
#define S_ASSERT(s, size) ABI_ASSERT(sizeof(struct s) == (size), "sizeof(struct " #s ")")
#define F_ASSERT(s, f, off, size)                                                        \
	ABI_ASSERT(offsetof(struct s, f) == (off) && sizeof(((struct s *)0)->f) == (size), \
		   "struct " #s "." #f)
#define C_ASSERT(c, v) ABI_ASSERT((unsigned long long)(c) == (v##ULL), #c)
ABI_TABLE(S_ASSERT, F_ASSERT, C_ASSERT)

struct abi_entry {
	const char *group;	/* the struct, or "" for constants */
	const char *what;
	unsigned long long got, want;
};

#define S_ENTRY(s, size) { #s, "sizeof", sizeof(struct s), (size) },
#define F_ENTRY(s, f, off, size)                                               \
	{ #s, "offsetof " #f, offsetof(struct s, f), (off) },                  \
	{ #s, "sizeof " #f, sizeof(((struct s *)0)->f), (size) },
#define C_ENTRY(c, v) { "", #c, (unsigned long long)(c), (v##ULL) },

static const struct abi_entry table[] = { ABI_TABLE(S_ENTRY, F_ENTRY, C_ENTRY) };

int main(void)
{
	const size_t n = sizeof(table) / sizeof(table[0]);
	unsigned int test = 0, failed = 0;
	size_t i = 0, j;

	while (i < n) {
		unsigned int bad = 0, members = 0;

		for (j = i; j < n && !strcmp(table[j].group, table[i].group); j++) {
			members += !strncmp(table[j].what, "offsetof", 8) || !*table[i].group;
			if (table[j].got != table[j].want) {
				printf("# %s%s%s: %llu, the table says %llu\n", table[j].group,
				       *table[j].group ? " " : "", table[j].what, table[j].got,
				       table[j].want);
				bad++;
			}
		}
		if (*table[i].group)
			printf("%s %u struct %s: size and %u members\n", bad ? "not ok" : "ok", ++test,
			       table[i].group, members);
		else
			printf("%s %u %u ioctl numbers and constants\n", bad ? "not ok" : "ok", ++test,
			       members);
		failed += bad != 0;
		i = j;
	}
	printf("1..%u\n", test);
	return failed ? 1 : 0;
}
