/* SPDX-License-Identifier: MIT */
/*
 * libtplan: the library applications link to build and run triggered
 * plans on /dev/tplan.
 *
 * Every function that can fail returns 0 (or a non-negative value) on
 * success and a negative errno on failure; nothing sets errno as its
 * result.  After a failure, tplan_ctx_error() gives a readable detail.
 */
#ifndef LIBTPLAN_H
#define LIBTPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "tplan.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LIBTPLAN_VERSION_MAJOR 0
#define LIBTPLAN_VERSION_MINOR 1
#define LIBTPLAN_VERSION_PATCH 0

/* One open of /dev/tplan: one rank once it joins a group. */
struct tplan_ctx;

/* The library's version, as "MAJOR.MINOR.PATCH". */
const char *tplan_version(void);
int tplan_version_major(void);
int tplan_version_minor(void);

/*
 * Open the device (path NULL means TPLAN_DEVICE_PATH) and check that the
 * module speaks this library's ABI.
 * Errors: -ENOENT (module not loaded), -EACCES, -ENOMEM,
 * -EPROTO (the module's ABI version differs from TPLAN_ABI_VERSION).
 */
int tplan_ctx_open(struct tplan_ctx **ctxp, const char *path);

/* Close the context and everything it owns.  NULL is accepted. */
void tplan_ctx_close(struct tplan_ctx *ctx);

/* The file descriptor behind the context (for poll/epoll or raw ioctls). */
int tplan_ctx_fd(const struct tplan_ctx *ctx);

/* The module's capabilities (TPLAN_IOC_INFO); filled from the kernel. */
int tplan_query_info(struct tplan_ctx *ctx, struct tplan_info *info);

/*
 * The detail of the last failure on this context ("" if none): which call,
 * and where the kernel said why, which chunk or rule.
 */
const char *tplan_ctx_error(const struct tplan_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* LIBTPLAN_H */
