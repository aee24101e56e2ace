// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/tplan itself: opening it, the INFO ioctl, and the argument contract
 * every ioctl shares (unknown commands, size sweep, reserved fields).
 */
#include <stdio.h>
#include <sys/stat.h>

#include "tplan_selftest.h"
#include "libtplan.h"

static unsigned long read_param(const char *name)
{
	char path[128];
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/tplan/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return ~0UL;
	if (fscanf(f, "%lu", &v) != 1)
		v = ~0UL;
	fclose(f);
	return v;
}

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(dev, node_is_mode_0660)
{
	struct stat st;

	ASSERT_EQ(0, stat(TPLAN_DEVICE_PATH, &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	ASSERT_EQ(0660, st.st_mode & 07777);
}

TEST_F(dev, two_opens_are_independent)
{
	int fd2 = tplan_test_open();

	ASSERT_LE(0, fd2);
	ASSERT_NE(self->fd, fd2);
	ASSERT_EQ(0, close(fd2));
}

TEST_F(dev, info_is_sane)
{
	struct tplan_info info = { .size = sizeof(info) };

	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, &info));
	ASSERT_EQ(sizeof(info), info.size);
	ASSERT_EQ(TPLAN_ABI_VERSION, info.abi_version);
	ASSERT_TRUE(info.engines & TPLAN_ENGINE_SOFT);
	ASSERT_EQ(0, info.engines & ~TPLAN_ENGINE_ALL);
	ASSERT_EQ(0, info.ring_size & (info.ring_size - 1));
	ASSERT_LE(4096, info.ring_size);
	ASSERT_LE(1, info.prep_limit_pct);
	ASSERT_GE(50, info.prep_limit_pct);
	ASSERT_EQ(16, info.max_world_size);
	ASSERT_EQ(1U << 30, info.max_copy_bytes_sdma440);
	ASSERT_LE(1U << 12, info.max_copy_bytes_sdma442);
	ASSERT_GE(1U << 30, info.max_copy_bytes_sdma442);
	/* The answer is the module's parameters, not constants. */
	ASSERT_EQ(read_param("ring_size"), info.ring_size);
	ASSERT_EQ(read_param("prep_limit"), info.prep_limit_pct);
	ASSERT_EQ(read_param("max_copy_sdma442"), info.max_copy_bytes_sdma442);
}

TEST_F(dev, library_reports_the_same_info)
{
	struct tplan_info a = { .size = sizeof(a) }, b;
	struct tplan_ctx *ctx;

	ASSERT_EQ(0, tplan_ctx_open(&ctx, NULL));
	ASSERT_EQ(0, tplan_query_info(ctx, &b));
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, &a));
	/* The library reports the engines present: KFD only where /dev/kfd opens. */
	if (access("/dev/kfd", R_OK | W_OK))
		a.engines &= ~TPLAN_ENGINE_KFD;
	ASSERT_EQ(0, memcmp(&a, &b, sizeof(a)));
	ASSERT_STREQ("", tplan_ctx_error(ctx));
	tplan_ctx_close(ctx);
}

TEST_F(dev, unknown_ioctl_is_enotty)
{
	struct tplan_info info = { .size = sizeof(info) };

	/* Below the command base, past the last command, another type. */
	ASSERT_EQ(-ENOTTY, tplan_test_ioctl(self->fd, _IO(TPLAN_TYPE, TPLAN_CMD_BASE - 1), &info));
	ASSERT_EQ(-ENOTTY, tplan_test_ioctl(self->fd, _IO(TPLAN_TYPE, TPLAN_CMD_LAST), &info));
	ASSERT_EQ(-ENOTTY, tplan_test_ioctl(self->fd, _IO(TPLAN_TYPE, 0xff), &info));
	ASSERT_EQ(-ENOTTY, tplan_test_ioctl(self->fd, _IO('T', TPLAN_CMD_INFO), &info));
	/* A known number with other direction/size bits is another command. */
	ASSERT_EQ(-ENOTTY, tplan_test_ioctl(self->fd,
					    _IOWR(TPLAN_TYPE, TPLAN_CMD_INFO, struct tplan_info),
					    &info));
}

TEST_F(dev, info_size_sweep)
{
	struct tplan_info info = { .size = sizeof(info) };

	ASSERT_EQ(0, tplan_size_sweep(self->fd, TPLAN_IOC_INFO, &info,
				      sizeof(info), sizeof(info)));
}

TEST_F(dev, info_larger_struct_gets_answer)
{
	struct {
		struct tplan_info info;
		uint64_t tail[4];
	} big;

	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, &big));
	ASSERT_EQ(TPLAN_ABI_VERSION, big.info.abi_version);
	/* The kernel writes back only what it knows. */
	ASSERT_EQ(0, big.tail[0] | big.tail[1] | big.tail[2] | big.tail[3]);
}

TEST_F(dev, info_reserved_fields_must_be_zero)
{
	struct tplan_info info = { .size = sizeof(info), .flags = 1 };

	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, &info));
	info.flags = 0x80000000u;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, &info));
	info.flags = 0;
	info.__reserved = 1;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, &info));
}

/*
 * No struct will ever be a page long: a size beyond one is refused with
 * E2BIG before its tail is read, even when the tail is all zero.
 */
TEST_F(dev, size_over_a_page_is_e2big)
{
	size_t len = 3 * 4096;
	unsigned char *buf = calloc(1, len);
	struct tplan_info *info = (struct tplan_info *)buf;
	uint32_t size;

	ASSERT_NE(NULL, buf);
	for (size = 4097; size <= len; size += 4093) {
		memset(buf, 0, len);
		info->size = size;
		ASSERT_EQ(-E2BIG, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, buf)) TH_LOG("size %u", size);
	}
	/* A page exactly, zero tail: still accepted (old callers zero-extend). */
	memset(buf, 0, len);
	info->size = 4096;
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, buf));
	free(buf);
}

TEST_F(dev, bad_pointer_is_efault)
{
	ASSERT_EQ(-EFAULT, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, NULL));
	ASSERT_EQ(-EFAULT, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, (void *)16));
}

TEST_HARNESS_MAIN
