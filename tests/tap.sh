# SPDX-License-Identifier: GPL-2.0
# TAP for the shell tests under tests/: source it, call t for each point,
# tap_end last.
#
#   t OK DESCRIPTION [DETAIL...]   OK is an exit status: 0 passes; the
#                                  details print as comments on a failure
#   tap_end                        the plan line; exit 1 if any failed
n=0
failed=0

t() {
	local ok=$1 desc=$2
	shift 2
	n=$((n + 1))
	if [ "$ok" = 0 ]; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		failed=$((failed + 1))
		[ $# = 0 ] || printf '%s\n' "$@" | sed '/^$/d; s/^/# /'
	fi
}

tap_end() {
	echo "1..$n"
	[ "$failed" = 0 ]
}
