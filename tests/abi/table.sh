#!/bin/bash
# Print the ABI table of tests/abi/abi_test.c as the current uapi headers
# define it.  For a deliberate ABI change only: paste the output over the
# table, and bump TPLAN_ABI_VERSION if old binaries would break.
# Sentinels (*_LAST, *_COUNT) grow with every addition and are left out.
#   tests/abi/table.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}/abi
mkdir -p "$build"
hdrs="uapi/tplan.h uapi/tplan_chain.h"
{
	echo '#include <stdio.h>'
	echo '#include <stddef.h>'
	echo '#include "tplan.h"'
	echo 'int main(void) {'
	perl tests/docs/api.pl types $hdrs | sed -n 's/^struct \(.*\)/\1/p' | while read -r s; do
		echo "printf(\"\\tS($s, %zu) \\\\\n\", sizeof(struct $s));"
		perl tests/docs/api.pl fields $hdrs | awk -v s="struct $s" -F'\t' '$1 == s { print $2 }' |
		while read -r f; do
			echo "printf(\"\\tF($s, $f, %zu, %zu) \\\\\n\", offsetof(struct $s, $f), sizeof(((struct $s *)0)->$f));"
		done
	done
	perl tests/docs/api.pl consts $hdrs | grep -vE "_(LAST|COUNT)$" | while read -r c; do
		echo "printf(\"\\tC($c, %#llx) \\\\\n\", (unsigned long long)($c));"
	done
	echo 'return 0; }'
} > "$build/table_gen.c"
cc -std=gnu11 -Wall -Werror -Iuapi -o "$build/table_gen" "$build/table_gen.c"
"$build/table_gen"
