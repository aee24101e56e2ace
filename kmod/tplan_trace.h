/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of tplan (events/tplan/ in tracefs): what the engines do,
 * packet by packet, the doorbells the module rings and the progress it
 * reads back (rptr, gate and done sequences), and the soft engine's
 * emulated preemptions, for debugging hangs and measuring latency.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tplan

#if !defined(_TPLAN_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TPLAN_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(tplan_submit,
	TP_PROTO(u32 group, u32 src, u32 dst, u64 wptr, u32 bytes),
	TP_ARGS(group, src, dst, wptr, bytes),
	TP_STRUCT__entry(
		__field(u32, group)
		__field(u32, src)
		__field(u32, dst)
		__field(u64, wptr)
		__field(u32, bytes)
	),
	TP_fast_assign(
		__entry->group = group;
		__entry->src = src;
		__entry->dst = dst;
		__entry->wptr = wptr;
		__entry->bytes = bytes;
	),
	TP_printk("group=%u queue=%u->%u wptr=%llu bytes=%u",
		  __entry->group, __entry->src, __entry->dst, __entry->wptr, __entry->bytes)
);

TRACE_EVENT(tplan_poll_satisfied,
	TP_PROTO(u32 group, u32 src, u32 dst, u64 addr, u32 ref),
	TP_ARGS(group, src, dst, addr, ref),
	TP_STRUCT__entry(
		__field(u32, group)
		__field(u32, src)
		__field(u32, dst)
		__field(u64, addr)
		__field(u32, ref)
	),
	TP_fast_assign(
		__entry->group = group;
		__entry->src = src;
		__entry->dst = dst;
		__entry->addr = addr;
		__entry->ref = ref;
	),
	TP_printk("group=%u queue=%u->%u gate=0x%llx ref=%u",
		  __entry->group, __entry->src, __entry->dst, __entry->addr, __entry->ref)
);

TRACE_EVENT(tplan_copy_done,
	TP_PROTO(u32 group, u32 src, u32 dst, u64 dst_addr, u64 bytes),
	TP_ARGS(group, src, dst, dst_addr, bytes),
	TP_STRUCT__entry(
		__field(u32, group)
		__field(u32, src)
		__field(u32, dst)
		__field(u64, dst_addr)
		__field(u64, bytes)
	),
	TP_fast_assign(
		__entry->group = group;
		__entry->src = src;
		__entry->dst = dst;
		__entry->dst_addr = dst_addr;
		__entry->bytes = bytes;
	),
	TP_printk("group=%u queue=%u->%u dst=0x%llx bytes=%llu",
		  __entry->group, __entry->src, __entry->dst, __entry->dst_addr, __entry->bytes)
);

TRACE_EVENT(tplan_fault,
	TP_PROTO(u32 group, u32 src, u32 dst, u64 offset, u32 dword, u32 reason),
	TP_ARGS(group, src, dst, offset, dword, reason),
	TP_STRUCT__entry(
		__field(u32, group)
		__field(u32, src)
		__field(u32, dst)
		__field(u64, offset)
		__field(u32, dword)
		__field(u32, reason)
	),
	TP_fast_assign(
		__entry->group = group;
		__entry->src = src;
		__entry->dst = dst;
		__entry->offset = offset;
		__entry->dword = dword;
		__entry->reason = reason;
	),
	TP_printk("group=%u queue=%u->%u offset=%llu dword=0x%08x reason=%u",
		  __entry->group, __entry->src, __entry->dst, __entry->offset,
		  __entry->dword, __entry->reason)
);

TRACE_EVENT(tplan_doorbell,
	TP_PROTO(u32 group, u32 src, u32 dst, u64 wptr, u64 done_seq),
	TP_ARGS(group, src, dst, wptr, done_seq),
	TP_STRUCT__entry(
		__field(u32, group)
		__field(u32, src)
		__field(u32, dst)
		__field(u64, wptr)
		__field(u64, done_seq)
	),
	TP_fast_assign(
		__entry->group = group;
		__entry->src = src;
		__entry->dst = dst;
		__entry->wptr = wptr;
		__entry->done_seq = done_seq;
	),
	TP_printk("group=%u queue=%u->%u wptr=%llu done_seq=%llu",
		  __entry->group, __entry->src, __entry->dst, __entry->wptr, __entry->done_seq)
);

TRACE_EVENT(tplan_progress,
	TP_PROTO(u32 group, u32 src, u32 dst, u64 rptr, u32 gate_seq, u32 done_seq),
	TP_ARGS(group, src, dst, rptr, gate_seq, done_seq),
	TP_STRUCT__entry(
		__field(u32, group)
		__field(u32, src)
		__field(u32, dst)
		__field(u64, rptr)
		__field(u32, gate_seq)
		__field(u32, done_seq)
	),
	TP_fast_assign(
		__entry->group = group;
		__entry->src = src;
		__entry->dst = dst;
		__entry->rptr = rptr;
		__entry->gate_seq = gate_seq;
		__entry->done_seq = done_seq;
	),
	TP_printk("group=%u queue=%u->%u rptr=%llu gate_seq=%u done_seq=%u",
		  __entry->group, __entry->src, __entry->dst, __entry->rptr,
		  __entry->gate_seq, __entry->done_seq)
);

TRACE_EVENT(tplan_soft_preempt,
	TP_PROTO(u32 group, u32 src, u32 dst, bool unmapped, u64 wptr),
	TP_ARGS(group, src, dst, unmapped, wptr),
	TP_STRUCT__entry(
		__field(u32, group)
		__field(u32, src)
		__field(u32, dst)
		__field(bool, unmapped)
		__field(u64, wptr)
	),
	TP_fast_assign(
		__entry->group = group;
		__entry->src = src;
		__entry->dst = dst;
		__entry->unmapped = unmapped;
		__entry->wptr = wptr;
	),
	TP_printk("group=%u queue=%u->%u %s wptr=%llu",
		  __entry->group, __entry->src, __entry->dst,
		  __entry->unmapped ? "unmapped" : "restored", __entry->wptr)
);

#endif /* _TPLAN_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tplan_trace
#include <trace/define_trace.h>
