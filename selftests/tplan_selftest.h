/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the tplan selftests: open the device or SKIP, and the
 * size sweep every ioctl gets.
 */
#ifndef TPLAN_SELFTEST_H
#define TPLAN_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "tplan.h"

/* Open /dev/tplan, or -errno. */
static inline int tplan_test_open(void)
{
	int fd = open(TPLAN_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* In a FIXTURE_SETUP: SKIP the test when the module is not loaded. */
#define TPLAN_OPEN_OR_SKIP(fd)						\
	do {								\
		(fd) = tplan_test_open();				\
		if ((fd) == -ENOENT || (fd) == -ENODEV)			\
			SKIP(return, "%s absent: tplan.ko not loaded",	\
			     TPLAN_DEVICE_PATH);			\
		ASSERT_LE(0, (fd));					\
	} while (0)

/* ioctl() returning 0 or -errno. */
static inline int tplan_test_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * The size contract of one ioctl, checked on a buffer that holds a valid
 * argument in its first full_size bytes ("valid" means the call succeeds
 * with size == full_size):
 *   every size below min_size            -> EINVAL
 *   full_size plus a zero tail            -> accepted
 *   full_size plus a non-zero tail byte   -> E2BIG, at every tail position
 * Returns 0 or a line number of the first broken rule, for ASSERT_EQ.
 */
static inline int tplan_size_sweep(int fd, unsigned long cmd, const void *valid,
				   uint32_t min_size, uint32_t full_size)
{
	enum { TAIL = 64 };
	unsigned char *buf = calloc(1, full_size + TAIL);
	uint32_t size;
	int ret = 0;

	if (!buf)
		return __LINE__;
	for (size = 0; size < min_size && !ret; size++) {
		memcpy(buf, valid, full_size);
		memcpy(buf, &size, sizeof(size));
		if (tplan_test_ioctl(fd, cmd, buf) != -EINVAL)
			ret = __LINE__;
	}
	for (size = full_size; size <= full_size + TAIL && !ret; size += 8) {
		memset(buf, 0, full_size + TAIL);
		memcpy(buf, valid, full_size);
		memcpy(buf, &size, sizeof(size));
		if (tplan_test_ioctl(fd, cmd, buf) != 0)
			ret = __LINE__;
	}
	for (size = full_size + 1; size <= full_size + TAIL && !ret; size++) {
		memset(buf, 0, full_size + TAIL);
		memcpy(buf, valid, full_size);
		memcpy(buf, &size, sizeof(size));
		buf[size - 1] = 0x5a;	/* the last byte of the tail */
		if (tplan_test_ioctl(fd, cmd, buf) != -E2BIG)
			ret = __LINE__;
	}
	free(buf);
	return ret;
}

#endif /* TPLAN_SELFTEST_H */
