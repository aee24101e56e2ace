// SPDX-License-Identifier: MIT
/*
 * The device header's host build (tplan_device.h) as library calls, for
 * producers and consumers that cannot compile a C header: a Python CPU
 * producer marks chunks through these, so it gets the header's very code
 * and C11 ordering rather than a copy of it.  One thread is a team of one.
 */
#include "libtplan.h"
#include "tplan_device.h"

int tplan_handle_mark_ready(const struct tplan_handle *handle, uint32_t chunk)
{
	struct tplan_cta cta = { NULL, NULL, 0 };
	struct tplan_view v;

	tplan_view_init(&v, handle);
	return tplan_mark_ready(&v, &cta, chunk);
}

int tplan_handle_arrived(const struct tplan_handle *handle, uint32_t src, uint32_t chunk)
{
	struct tplan_cta cta = { NULL, NULL, 0 };
	struct tplan_view v;

	tplan_view_init(&v, handle);
	return tplan_arrived(&v, &cta, src, chunk);
}

int tplan_handle_wait(const struct tplan_handle *handle, uint32_t src, uint32_t chunk,
		      uint64_t max_polls)
{
	struct tplan_cta cta = { NULL, NULL, 0 };
	struct tplan_view v;

	tplan_view_init(&v, handle);
	return tplan_wait(&v, &cta, src, chunk, max_polls);
}

int tplan_handle_release(const struct tplan_handle *handle)
{
	struct tplan_cta cta = { NULL, NULL, 0 };
	struct tplan_view v;

	tplan_view_init(&v, handle);
	return tplan_release(&v, &cta);
}
