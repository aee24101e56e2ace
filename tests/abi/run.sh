#!/bin/bash
# The ABI guard, as TAP.  Fails on any change a user of the ABI would
# notice without a deliberate update here:
#   - each uapi header compiles alone as C90/C99/C11 and C++98/11/17 with
#     -pedantic -Werror, and libtplan.h as C99 and C++;
#   - abi_test.c (the frozen table of sizes, offsets, ioctl numbers and
#     constants) builds and passes as C and as C++;
#   - the table names every struct, member and constant the uapi headers
#     define (so a new one cannot slip past it);
#   - libtplan.so exports exactly the version map's globals, each with its
#     node's version, and every function libtplan.h declares; its SONAME is
#     libtplan.so.SOVERSION.
#   tests/abi/run.sh [BUILD]     (needs "make lib" first)
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
out=$BUILD/abi
mkdir -p "$out"
CC=${CC:-cc}
CXX=${CXX:-c++}
api="perl tests/docs/api.pl"
uapi_hdrs="uapi/tplan.h uapi/tplan_chain.h"
. tests/tap.sh

for h in uapi/*.h; do
	errs=""
	for std in c90 c99 c11; do
		echo "#include \"$h\"" | $CC -x c -std=$std -pedantic -Wall -Wextra -Werror -I. \
			-fsyntax-only - >"$out/hdr.log" 2>&1 || errs="$errs $std"
	done
	for std in c++98 c++11 c++17; do
		echo "#include \"$h\"" | $CXX -x c++ -std=$std -pedantic -Wall -Wextra -Werror -I. \
			-fsyntax-only - >>"$out/hdr.log" 2>&1 || errs="$errs $std"
	done
	t "$([ -z "$errs" ]; echo $?)" "$h compiles alone as C90, C99, C11, C++98, C++11, C++17" \
		"fails as:$errs" "$(head -n 5 "$out/hdr.log")"
done
errs=""
echo '#include "libtplan.h"' | $CC -x c -std=c99 -pedantic -Wall -Wextra -Werror -Iuapi -Ilibtplan \
	-fsyntax-only - >"$out/hdr.log" 2>&1 || errs="$errs c99"
echo '#include "libtplan.h"' | $CXX -x c++ -std=c++98 -pedantic -Wall -Wextra -Werror -Iuapi \
	-Ilibtplan -fsyntax-only - >>"$out/hdr.log" 2>&1 || errs="$errs c++98"
t "$([ -z "$errs" ]; echo $?)" "libtplan.h compiles alone as C99 and C++98" "fails as:$errs" \
	"$(head -n 5 "$out/hdr.log")"

# The frozen table, as C and as C++.
for lang in c c++; do
	bin=$out/abi_test_${lang/++/xx}
	if [ "$lang" = c ]; then
		$CC -std=gnu11 -Wall -Wextra -Werror -pedantic -Iuapi tests/abi/abi_test.c -o "$bin" \
			>"$out/build.log" 2>&1
	else
		$CXX -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -Iuapi tests/abi/abi_test.c \
			-o "$bin" >"$out/build.log" 2>&1
	fi
	rc=$?
	t $rc "abi_test builds as $lang (static assertions of every size, offset and constant)" \
		"$(grep -E 'error' "$out/build.log" | head -n 20)"
	[ $rc = 0 ] || continue
	"$bin" >"$out/run.log" 2>&1
	rc=$?
	bad=$(grep -E '^not ok|^# ' "$out/run.log")
	t "$rc" "abi_test as $lang: $(grep -c '^ok' "$out/run.log") structs and constant sets match the table" \
		"$bad"
done

# Everything the headers define is in the table.
sed -n 's/^[[:space:]]*\([SFC]\)(\([^,)]*\)\(, \([^,)]*\)\)\?.*/\1 \2 \4/p' tests/abi/abi_test.c |
	awk '$1 == "S" { print "struct " $2 } $1 == "F" { print "struct " $2 "\t" $3 } $1 == "C" { print $2 }' |
	sort -u >"$out/table.txt"
{
	$api types $uapi_hdrs | grep '^struct '
	$api fields $uapi_hdrs
	$api consts $uapi_hdrs | grep -vE '_(LAST|COUNT)$'
} | sort -u >"$out/headers.txt"
missing=$(comm -13 "$out/table.txt" "$out/headers.txt")
t "$([ -z "$missing" ]; echo $?)" "the table covers every uapi struct, member, ioctl and constant" \
	"not in tests/abi/abi_test.c (tests/abi/table.sh prints the table):" "$missing"

# The library's exported symbols against the version map and the header.
# This version's, not whatever an older build left beside it.
so=$BUILD/lib/libtplan.so.$(sed -n 's/^VERSION := //p' Makefile)
if [ ! -e "$so" ]; then
	t 1 "libtplan.so is built" "no $so: run make lib"
else
	$api map libtplan/libtplan.map | sort >"$out/map.txt"
	cut -f1 "$out/map.txt" | sort -u >"$out/map_syms.txt"
	nm -D --defined-only "$so" | awk '$2 != "A" { print $NF }' | sed 's/@.*//' | sort -u >"$out/exported.txt"
	t "$(cmp -s "$out/map_syms.txt" "$out/exported.txt"; echo $?)" \
		"$(basename "$so") exports exactly the version map's globals ($(wc -l <"$out/map_syms.txt"))" \
		"in the map, not exported: $(comm -23 "$out/map_syms.txt" "$out/exported.txt" | tr '\n' ' ')" \
		"exported, not in the map: $(comm -13 "$out/map_syms.txt" "$out/exported.txt" | tr '\n' ' ')"
	# readelf: "Num: Value Size Type Bind Vis Ndx Name@@VERSION"
	readelf --dyn-syms -W "$so" | awk '$7 != "UND" && $8 ~ /@/ { split($8, a, "@+"); print a[1] "\t" a[2] }' |
		sort >"$out/versions.txt"
	t "$(cmp -s "$out/map.txt" "$out/versions.txt"; echo $?)" \
		"every exported symbol carries its map node's version" \
		"$(diff "$out/map.txt" "$out/versions.txt" | grep '^[<>]' | head -n 20)"
	$api protos libtplan/libtplan.h | cut -f1 | sort -u >"$out/declared.txt"
	t "$(cmp -s "$out/declared.txt" "$out/map_syms.txt"; echo $?)" \
		"the functions libtplan.h declares are the map's globals" \
		"declared, not in the map: $(comm -23 "$out/declared.txt" "$out/map_syms.txt" | tr '\n' ' ')" \
		"in the map, not declared: $(comm -13 "$out/declared.txt" "$out/map_syms.txt" | tr '\n' ' ')"
	soversion=$(sed -n 's/^SOVERSION := //p' Makefile)
	soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	t "$([ "$soname" = "libtplan.so.$soversion" ]; echo $?)" "SONAME is libtplan.so.$soversion" \
		"SONAME: $soname"
fi

tap_end
