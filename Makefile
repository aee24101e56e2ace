# SPDX-License-Identifier: GPL-2.0
# tplan: a thin Makefile.  The module builds the kernel way (Kbuild is read
# by kbuild, this file by people); everything else is a plain program.
#
#   make                 module (for KDIR) and library
#   make check           host tests, fuzzing, then the selftests in a VM on
#                        Debian's 6.1 and 6.12 kernels and a debug kernel
#                        (KASAN, lockdep, kmemleak); installs what it needs
#   make demo            the all-gather demo in the VM on the software engine
#   make stress          the in-VM ioctl fuzzer and kill storm, STRESS_SECONDS
#                        (default 300) per run, on every kernel (STRESS_KVERS)
#   make install         library, headers, pkg-config file, docs (DESTDIR, PREFIX)
#   make dkms-src        module sources into /usr/src/tplan-VERSION for dkms
#   make sparse / checkpatch / uapi-check
#   make hw-check        on an MI200/MI300 node: the test-node protocol
#                        (docs/test-node.md); elsewhere it says what it needs

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
BUILD ?= build
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DOCDIR ?= $(PREFIX)/share/doc/tplan
MANDIR ?= $(PREFIX)/share/man
DKMS_SRC ?= /usr/src/tplan-$(VERSION)
KSRC_TAR ?= /usr/src/linux-source-6.1.tar.xz

VERSION := 0.5.0
SOVERSION := 0

CC ?= cc
CFLAGS ?= -O2 -g
WARNFLAGS := -Wall -Wextra -Werror
TPLAN_CPPFLAGS := -Iuapi -Ilibtplan -Idevice
KSFT_INC := $(BUILD)/ksft
# The harness's ASSERT_* macros compare mixed signedness by design.
KSFT_CFLAGS := -std=gnu11 $(CFLAGS) $(WARNFLAGS) -Wno-sign-compare -Wno-unused-parameter -I$(KSFT_INC)

.PHONY: all module lib selftests host-tests check demo stress install clean \
	sparse checkpatch uapi-check ksft

all: module lib

# ---- kernel module -------------------------------------------------------
module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# In a copy of the sources, so "clean" never reaches other builds under $(BUILD).
sparse:
	@rm -rf $(BUILD)/sparse && mkdir -p $(BUILD)/sparse && cp -r Kbuild kmod uapi $(BUILD)/sparse/
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(BUILD)/sparse C=1 W=1 modules 2>&1 | tee $(BUILD)/sparse.log
	@! grep -E 'warning:|error:' $(BUILD)/sparse.log

CHECKPATCH := $(BUILD)/ksrc/scripts/checkpatch.pl
$(CHECKPATCH):
	@mkdir -p $(BUILD)/ksrc
	tar -xJf $(KSRC_TAR) -C $(BUILD)/ksrc --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
checkpatch: $(CHECKPATCH)
	$(CHECKPATCH) --no-tree --terse --show-types --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG \
		-f $(wildcard kmod/*.c kmod/*.h uapi/*.h)

# ---- uapi: standalone C90 and C++ ----------------------------------------
uapi-check:
	@for h in uapi/*.h; do \
		echo "#include \"$$h\"" | $(CC) -x c -std=c90 -pedantic $(WARNFLAGS) -I. -fsyntax-only - || exit 1; \
		echo "#include \"$$h\"" | $(CXX) -x c++ $(WARNFLAGS) -I. -fsyntax-only - || exit 1; \
	done; echo "uapi headers: C90 and C++ clean"

# ---- kselftest harness, from Debian's linux-source-6.1 -----------------
$(KSFT_INC)/kselftest_harness.h:
	@mkdir -p $(KSFT_INC)
	tar -xJf $(KSRC_TAR) -C $(KSFT_INC) --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	@touch $@
ksft: $(KSFT_INC)/kselftest_harness.h

# ---- libtplan ------------------------------------------------------------
LIB_SRCS := $(wildcard libtplan/*.c)
LIB_HDRS := $(wildcard libtplan/*.h uapi/*.h)
LIB_PIC_OBJS := $(LIB_SRCS:%.c=$(BUILD)/lib/pic/%.o)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/lib/static/%.o)
LIB_SO := $(BUILD)/lib/libtplan.so.$(VERSION)
LIB_A := $(BUILD)/lib/libtplan.a
LIB_CFLAGS := -std=gnu11 $(CFLAGS) $(WARNFLAGS) -fvisibility=default $(TPLAN_CPPFLAGS)

$(BUILD)/lib/pic/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -fPIC -c $< -o $@
$(BUILD)/lib/static/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@
$(LIB_SO): $(LIB_PIC_OBJS) libtplan/libtplan.map
	$(CC) -shared -Wl,-soname,libtplan.so.$(SOVERSION) \
		-Wl,--version-script=libtplan/libtplan.map -Wl,-z,defs -o $@ $(LIB_PIC_OBJS) -lpthread
	ln -sf libtplan.so.$(VERSION) $(BUILD)/lib/libtplan.so.$(SOVERSION)
	ln -sf libtplan.so.$(SOVERSION) $(BUILD)/lib/libtplan.so
$(LIB_A): $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^
# Rewritten whenever PREFIX or LIBDIR change, so "make install PREFIX=..." after
# a plain "make" installs the right paths; libdir and includedir are written
# relative to ${prefix} when they lie under it.
PC_LIBDIR := $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR := $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))
$(BUILD)/lib/tplan.pc: libtplan/tplan.pc.in FORCE
	@mkdir -p $(dir $@)
	@sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(PC_LIBDIR)|; s|@INCLUDEDIR@|$(PC_INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' $< > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
FORCE:
.PHONY: FORCE
lib: $(LIB_SO) $(LIB_A) $(BUILD)/lib/tplan.pc

# ---- selftests (static: the VM has no libc) ------------------------------
SELFTEST_SRCS := $(wildcard selftests/*_test.c)
SELFTEST_BINS := $(SELFTEST_SRCS:selftests/%.c=$(BUILD)/selftests/%)
SELFTEST_SCRIPTS := $(wildcard selftests/*.sh)
# Tests whose bug, once hit, leaves the module unusable for every later test
# (a task dead with a global lock held): listed in plan-last, which
# scripts/check.sh runs after everything else.
SELFTEST_LAST := tplan_join_race_test
# Tests of /dev/kfd: after the plan loads the tests' KFD stand-in
# (selftests/kfd_standin, built per kernel by scripts/lib.sh's
# build_standin); they skip where it is not built.
SELFTEST_KFD := tplan_kfd_standin_test tplan_kfd_queue_test tplan_kfd_engine_test \
	tplan_kfd_join_test
# ... and then, on the KFD engine over the stand-in (TPLAN_ENGINE=kfd: the
# library joins there), the put, plan and all-gather selftests and the
# demo's all-gather (tplan_all_gather_example.sh), named TEST@TPLAN_ENGINE=kfd;
# the debug kernel skips these replays (scripts/vm/init.sh).
SELFTEST_ON_KFD := tplan_put_test tplan_plan_data_test tplan_plan_contract_test \
	tplan_all_gather_programs_test tplan_libplan_test
# A producer's tile order comes from the examples' GEMM tiling (gemm_tiles.h),
# the engine's threads are found as the benchmarks find them (engine_threads.h);
# the errno contract from uapi/tplan.h (tplan_errno.h, generated at build time).
$(BUILD)/selftests/%: selftests/%.c $(wildcard selftests/*.h) examples/gemm_tiles.h \
		bench/engine_threads.h $(LIB_A) \
		$(KSFT_INC)/kselftest_harness.h $(LIB_HDRS) $(BUILD)/gen/tplan_errno_table.h
	@mkdir -p $(dir $@)
	$(CC) $(KSFT_CFLAGS) $(TPLAN_CPPFLAGS) -Iexamples -Ibench -I$(BUILD)/gen \
		-static -pthread $< -o $@ $(LIB_A)
selftests: $(SELFTEST_BINS) $(BUILD)/selftests/tplan_fuzz $(BUILD)/examples/all_gather
	@cp $(SELFTEST_SCRIPTS) $(BUILD)/selftests/
	@cp $(BUILD)/examples/all_gather $(BUILD)/selftests/
	@{ for s in $(notdir $(SELFTEST_SCRIPTS)); do echo "sh $$s"; done; \
	   for b in $(filter-out $(SELFTEST_LAST) $(SELFTEST_KFD),$(notdir $(SELFTEST_BINS))); do \
		echo "bin $$b"; done; \
	   echo "kmod kfd_standin"; \
	   for b in $(SELFTEST_KFD); do echo "bin $$b"; done; \
	   echo "env TPLAN_ENGINE kfd"; \
	   for b in $(SELFTEST_ON_KFD); do echo "bin $$b"; done; \
	   echo "sh tplan_all_gather_example.sh"; \
	   echo "env TPLAN_ENGINE"; \
	 } > $(BUILD)/selftests/plan
	@for b in $(SELFTEST_LAST); do echo "bin $$b"; done > $(BUILD)/selftests/plan-last

# ---- the in-VM ioctl fuzzer and kill storm ----------------------------------
# Its errno table comes from uapi/tplan.h at build time.  Every ioctl, mmap
# and close of the device, the library's too, goes through its call gate.
FUZZ_SRCS := $(wildcard selftests/tplan_fuzz*.c)
$(BUILD)/gen/tplan_errno_table.h: uapi/tplan.h selftests/tplan_errno_table.pl
	@mkdir -p $(dir $@)
	CC="$(CC)" perl selftests/tplan_errno_table.pl uapi/tplan.h > $@.tmp && mv $@.tmp $@
$(BUILD)/selftests/tplan_fuzz: $(FUZZ_SRCS) selftests/tplan_fuzz.h $(BUILD)/gen/tplan_errno_table.h \
		$(LIB_A) $(LIB_HDRS) device/tplan_device.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) $(WARNFLAGS) $(TPLAN_CPPFLAGS) -I$(BUILD)/gen -static -pthread \
		-Wl,--wrap=ioctl,--wrap=mmap,--wrap=close $(FUZZ_SRCS) -o $@ $(LIB_A)

# ---- host tests, fuzzing, benchmarks (fragments own their rules) ---------
HOST_TEST_BINS :=
-include tests/host/host.mk
-include tests/fuzz/fuzz.mk
-include bench/bench.mk
-include device/device.mk
-include examples/hip.mk
-include tests/hw/hw.mk
host-tests: $(HOST_TEST_BINS)

# ---- the two jobs --------------------------------------------------------
check:
	scripts/check.sh

demo:
	scripts/demo.sh

stress:
	scripts/stress.sh

# ---- install -------------------------------------------------------------
install: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/tplan $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libtplan.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtplan.so.$(SOVERSION)
	ln -sf libtplan.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libtplan.so
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(BUILD)/lib/tplan.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 0644 libtplan/libtplan.h uapi/*.h $(wildcard device/*.h) $(DESTDIR)$(INCLUDEDIR)/tplan/
	install -m 0644 README.md $(wildcard docs/*.md) $(DESTDIR)$(DOCDIR)/
	install -m 0644 $(wildcard docs/man/*.3) $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 $(wildcard docs/man/*.7) $(DESTDIR)$(MANDIR)/man7/

# The module's sources where DKMS expects them; then dkms add/build/install
# tplan/$(VERSION) (dkms.conf).
dkms-src:
	install -d $(DESTDIR)$(DKMS_SRC)/kmod $(DESTDIR)$(DKMS_SRC)/uapi
	install -m 0644 Kbuild dkms.conf $(DESTDIR)$(DKMS_SRC)/
	install -m 0644 $(wildcard kmod/*.c kmod/*.h) $(DESTDIR)$(DKMS_SRC)/kmod/
	install -m 0644 $(wildcard uapi/*.h) $(DESTDIR)$(DKMS_SRC)/uapi/
.PHONY: dkms-src

clean:
	-$(MAKE) -s -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(BUILD)

# For scripts/check.sh: the host test programs to run.
print-host-tests:
	@echo $(HOST_TEST_BINS)
.PHONY: print-host-tests

# ---- examples (static, so they also run in the VM) ----------------------
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)
$(BUILD)/examples/%: examples/%.c $(wildcard examples/*.h) $(LIB_A) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) $(WARNFLAGS) $(TPLAN_CPPFLAGS) -Iexamples -static -pthread $< -o $@ $(LIB_A)
examples: $(EXAMPLE_BINS)
.PHONY: examples
