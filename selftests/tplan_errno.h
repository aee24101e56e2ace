/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What uapi/tplan.h lets each ioctl fail with, for the selftests: the
 * table selftests/tplan_errno_table.pl generates from the header at build
 * time (the shared contract and each ioctl's "Errors:" list).
 */
#ifndef TPLAN_ERRNO_H
#define TPLAN_ERRNO_H

#include <stdio.h>
#include <string.h>

#include "tplan_errno_table.h"

/* Does uapi/tplan.h list err for ioctl cmd? */
static inline int tplan_errno_listed(unsigned long cmd, int err)
{
	size_t i;
	int k;

	for (i = 0; i < sizeof(tplan_errno_docs) / sizeof(tplan_errno_docs[0]); i++) {
		if (tplan_errno_docs[i].cmd != cmd)
			continue;
		for (k = 0; tplan_errno_docs[i].codes[k]; k++)
			if (tplan_errno_docs[i].codes[k] == err)
				return 1;
	}
	return 0;
}

/* "TPLAN_IOC_X lists: 14 22 ..." for a failure message. */
static inline const char *tplan_errno_list(unsigned long cmd, char *buf, size_t len)
{
	size_t i, at = 0;
	int k;

	buf[0] = 0;
	for (i = 0; i < sizeof(tplan_errno_docs) / sizeof(tplan_errno_docs[0]); i++) {
		if (tplan_errno_docs[i].cmd != cmd)
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s lists:", tplan_errno_docs[i].name);
		for (k = 0; tplan_errno_docs[i].codes[k] && at < len; k++)
			at += (size_t)snprintf(buf + at, len - at, " %d",
					       tplan_errno_docs[i].codes[k]);
	}
	return buf;
}

/*
 * In a rank function: call returned 0 or a -errno that uapi/tplan.h lists
 * for ioctl cmd.
 */
#define RANK_LISTED(cmd, call)							\
	do {									\
		long long _r = (long long)(call);				\
		char _l[256];							\
		if (_r < 0 && !tplan_errno_listed((cmd), (int)-_r))		\
			RANK_FAIL("%s: %s (%lld), which uapi/tplan.h does not list (%s)", \
				  #call, strerror((int)-_r), -_r,		\
				  tplan_errno_list((cmd), _l, sizeof(_l)));	\
	} while (0)

#endif /* TPLAN_ERRNO_H */
