// SPDX-License-Identifier: MIT
/*
 * An application built out of tree against the installed library, headers
 * and pkg-config file only (tests/install/run.sh), as TAP.  Checks that
 * what was installed is one consistent set: the library's version is the
 * pkg-config version and the header's, and on a machine with the module it
 * speaks the module's ABI and moves data between two forked ranks.
 * Exits 4 (skip) for the device part when /dev/tplan is absent.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libtplan.h>
#include <tplan_device.h>

#ifndef EXPECT_VERSION
#error "build with -DEXPECT_VERSION=\"$(pkg-config --modversion tplan)\""
#endif

#define BYTES 65536

static unsigned int test;
static int failed;

static void tap(int ok, const char *what)
{
	printf("%s %u %s\n", ok ? "ok" : "not ok", ++test, what);
	failed |= !ok;
}

/* Rank 0 puts BYTES to rank 1, which checks them after a barrier. */
static int rank_main(uint64_t key, unsigned int rank)
{
	struct tplan_join_params join = {
		.key = key, .world_size = 2, .rank = rank, .heap_size = 1 << 20,
	};
	struct tplan_ctx *ctx;
	unsigned char *buf;
	uint64_t off;
	int ret, i;

	ret = tplan_ctx_open(&ctx, NULL);
	if (ret)
		return 1;
	ret = tplan_ctx_join(ctx, &join);
	if (!ret)
		ret = tplan_heap_alloc(ctx, BYTES, 0, &off);
	if (ret)
		goto out;
	buf = (unsigned char *)tplan_heap_ptr(ctx, rank) + off;
	for (i = 0; i < BYTES; i++)
		buf[i] = rank == 0 ? (unsigned char)(i * 7 + 1) : 0;
	ret = tplan_barrier(ctx, 0);
	if (!ret && rank == 0) {
		ret = tplan_put(ctx, 1, off, off, BYTES);
		if (!ret)
			ret = tplan_quiet(ctx, 1, 0);
	}
	if (!ret)
		ret = tplan_barrier(ctx, 0);
	for (i = 0; !ret && rank == 1 && i < BYTES; i++)
		if (buf[i] != (unsigned char)(i * 7 + 1))
			ret = -EBADMSG;
out:
	if (ret)
		fprintf(stderr, "# rank %u: %s (%s)\n", rank, strerror(-ret), tplan_ctx_error(ctx));
	tplan_ctx_close(ctx);
	return ret ? 1 : 0;
}

int main(void)
{
	char hdr_version[32];
	struct tplan_info info;
	uint64_t key = (uint64_t)getpid() << 20 | 0x1a5;
	struct tplan_ctx *ctx;
	int ret, st, ok = 1;
	unsigned int r;
	pid_t pid[2];

	snprintf(hdr_version, sizeof(hdr_version), "%d.%d.%d", LIBTPLAN_VERSION_MAJOR,
		 LIBTPLAN_VERSION_MINOR, LIBTPLAN_VERSION_PATCH);
	tap(!strcmp(tplan_version(), EXPECT_VERSION) && !strcmp(hdr_version, EXPECT_VERSION) &&
	    tplan_version_major() == LIBTPLAN_VERSION_MAJOR &&
	    tplan_version_minor() == LIBTPLAN_VERSION_MINOR,
	    "library, header and pkg-config agree on the version " EXPECT_VERSION);

	ret = tplan_ctx_open(&ctx, NULL);
	if (ret == -ENOENT) {
		printf("ok %u the module's ABI # SKIP %s is absent\n", ++test, TPLAN_DEVICE_PATH);
		printf("ok %u two ranks: put, quiet, data arrived # SKIP no device\n", ++test);
		printf("1..%u\n", test);
		return failed ? 1 : 4;
	}
	if (!ret) {
		info.size = sizeof(info);
		ret = tplan_query_info(ctx, &info);
		tplan_ctx_close(ctx);
	}
	tap(!ret && info.abi_version == TPLAN_ABI_VERSION, "the module speaks the installed header's ABI");

	fflush(stdout);
	for (r = 0; r < 2; r++) {
		pid[r] = fork();
		if (pid[r] == 0)
			_exit(rank_main(key, r));
	}
	for (r = 0; r < 2; r++)
		ok &= pid[r] > 0 && waitpid(pid[r], &st, 0) == pid[r] && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0;
	tap(ok, "two ranks: put, quiet, data arrived");
	printf("1..%u\n", test);
	return failed;
}
