/* SPDX-License-Identifier: MIT */
/* What the files of libtplan share and applications do not see. */
#ifndef LIBTPLAN_PRIV_H
#define LIBTPLAN_PRIV_H

#include "libtplan.h"


struct tplan_ctx {
	int fd;
	struct tplan_info info;
	char error[256];
};

/* Record a readable detail for tplan_ctx_error(); returns err. */
int tplan_set_error(struct tplan_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ioctl() that returns -errno and records which call failed. */
int tplan_ioctl(struct tplan_ctx *ctx, unsigned long request, void *arg, const char *what);

#endif /* LIBTPLAN_PRIV_H */
