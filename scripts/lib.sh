# Shared by scripts/check.sh and scripts/demo.sh: result lines, TAP parsing,
# module builds per kernel.  Source it; it uses $RESULTS and $LOGS.

# result OK NAME [DETAIL]: one line "ok - NAME" / "not ok - NAME" to stdout
# and $RESULTS.
result() {
	local line
	if [ "$1" = 0 ]; then line="ok - $2"; else line="not ok - $2"; fi
	echo "$line" | tee -a "$RESULTS"
	[ -z "${3:-}" ] || echo "$3" | sed 's/^/#   /'
}

# item NAME CMD...: run CMD with its output in a log; one result line.
item() {
	local name=$1 log
	shift
	log="$LOGS/$(echo "$name" | tr -c 'A-Za-z0-9._-' '_').log"
	if "$@" >"$log" 2>&1; then
		result 0 "$name"
	else
		result 1 "$name" "$(tail -n 25 "$log")"
	fi
}

# tap PREFIX CMD...: run a TAP-speaking program; one result line per test
# point, plus one for its exit status (4 = kselftest SKIP).
tap() {
	local prefix=$1 log rc
	shift
	log="$LOGS/$(echo "$prefix" | tr -c 'A-Za-z0-9._-' '_').log"
	"$@" >"$log" 2>&1
	rc=$?
	awk -v p="$prefix" -v rc="$rc" '
	/^(not )?ok [0-9]+/ {
		line = $0; isnot = (line ~ /^not ok/)
		sub(/^(not )?ok [0-9]+ *(- )?/, "", line)
		skip = ""
		if (line ~ /# SKIP/) { skip = " # SKIP" substr(line, index(line, "# SKIP") + 6); sub(/ *# SKIP.*/, "", line) }
		n++; if (isnot) bad++
		printf "%s - %s: %s%s\n", isnot ? "not ok" : "ok", p, line, skip
		next
	}
	END {
		if (rc == 4 && n == 0) printf "ok - %s # SKIP exit status 4\n", p
		else if (rc != 0 && rc != 4 && bad == 0) printf "not ok - %s exit status %d\n", p, rc
		else if (n == 0) printf "not ok - %s ran no test\n", p
	}' "$log" | tee -a "$RESULTS"
	if [ "$rc" != 0 ] && [ "$rc" != 4 ]; then
		grep -E '^# |^#  ' "$log" | grep -vE '^# (PASSED|RUN|OK|Totals|FAILED:.*0 /)' | tail -n 20
	fi
}

# kernel_tree KVER: the tree modules for KVER build against: Debian's
# headers, or the debug kernel's tree in the cache
# (scripts/vm/build-debug-kernel.sh).
kernel_tree() {
	local cached="${TPLAN_CACHE:-/var/cache/tplan}/kernels/$1/build"
	if [ ! -d "/lib/modules/$1/build" ] && [ -d "$cached" ]; then
		echo "$cached"
	else
		echo "/lib/modules/$1/build"
	fi
}

# build_module KVER OUTDIR: tplan.ko for that kernel's headers, W=1; any
# warning fails the build.
build_module() {
	local kver=$1 out=$2
	rm -rf "$out"
	mkdir -p "$out"
	cp -r Kbuild kmod uapi "$out/"
	make -C "$(kernel_tree "$kver")" M="$(cd "$out" && pwd)" W=1 modules >"$out/build.log" 2>&1 ||
		{ cat "$out/build.log"; return 1; }
	if grep -E 'warning:|error:' "$out/build.log"; then
		return 1
	fi
	[ -s "$out/tplan.ko" ]
}

# build_standin KVER OUTDIR: the tests' KFD stand-in (selftests/kfd_standin)
# for that kernel's tree, W=1, warning-free, as OUTDIR/kfd_standin.ko; its
# scratch tree holds the packet interpreter it shares with tplan.ko.  The
# kernel must have dma-buf and HMM (every kernel make check uses has).
build_standin() {
	local kver=$1 out=$2 cfg
	rm -rf "$out"
	for cfg in CONFIG_DMA_SHARED_BUFFER CONFIG_HMM_MIRROR; do
		grep -qs "^$cfg=y" "$(kernel_tree "$kver")/.config" ||
			{ echo "$(kernel_tree "$kver")/.config lacks $cfg=y: the stand-in needs dma-buf and HMM"; return 1; }
	done
	mkdir -p "$out/standin" "$out/kmod"
	cp selftests/kfd_standin/Kbuild "$out/"
	cp selftests/kfd_standin/*.[ch] "$out/standin/"
	cp kmod/sdma_exec.[ch] "$out/kmod/"
	cp -r uapi "$out/"
	make -C "$(kernel_tree "$kver")" M="$(cd "$out" && pwd)" W=1 modules >"$out/build.log" 2>&1 ||
		{ cat "$out/build.log"; return 1; }
	if grep -E 'warning:|error:' "$out/build.log"; then
		return 1
	fi
	[ -s "$out/kfd_standin.ko" ]
}

# summary: the closing line; exit status 1 on any failure.
summary() {
	local pass fail skip
	pass=$(grep -c '^ok - ' "$RESULTS" | tr -d ' ')
	skip=$(grep -c '^ok - .*# SKIP' "$RESULTS" | tr -d ' ')
	fail=$(grep -c '^not ok - ' "$RESULTS" | tr -d ' ')
	pass=$((pass - skip))
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]
}

# How the software engine emulates hardware in the test runs (the module's
# soft_quirks: off, lag, ahead, preempt, full, all, mix).
TPLAN_SOFT_QUIRKS=${TPLAN_SOFT_QUIRKS:-mix}

# fuzz_plan SECONDS: VM plan lines for the ioctl fuzzer and kill storm
# (selftests/tplan_fuzz*.c), SECONDS per run: the module reloaded with a
# small ring (FUZZ_RING_SIZE, default 64 KiB) so that budget edges are hit,
# once with raw packet injection allowed and once without, the engine's
# quirks as TPLAN_SOFT_QUIRKS says.  FUZZ_SEED replays a seed, FUZZ_ARGS
# passes more options (tplan_fuzz.c says which).
fuzz_plan() {
	local secs=$1 ring=${FUZZ_RING_SIZE:-65536} inject
	for inject in 1 0; do
		echo "mod ring_size=$ring allow_inject=$inject soft_quirks=$TPLAN_SOFT_QUIRKS"
		echo "bin tplan_fuzz -t $secs${FUZZ_SEED:+ -s $FUZZ_SEED}${FUZZ_ARGS:+ $FUZZ_ARGS}"
	done
}
