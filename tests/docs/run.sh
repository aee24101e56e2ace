#!/bin/bash
# The reference pages (docs/man) against the headers, as TAP:
#   - every exported symbol (libtplan.map) and every public function of
#     tplan_device.h has a page of its own name (a page or a .so link);
#   - every prototype in a page's SYNOPSIS is the header's, word for word,
#     and every function of the public headers is in some SYNOPSIS;
#   - every full page has NAME, SYNOPSIS, DESCRIPTION, RETURN VALUE, ERRORS
#     and SEE ALSO; every link points at a page that declares it;
#   - every public type is named in a page; every ioctl of uapi/tplan.h has
#     a subsection of tplan(7) with its errors;
#   - every page renders with groff -ww without a warning, every page is
#     reachable from tplan(7), and the README links tplan(7).
#   tests/docs/run.sh [BUILD]
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
out=$BUILD/docs
mkdir -p "$out"
api="perl tests/docs/api.pl"
man=docs/man
. tests/tap.sh

# Device-header functions that are implementation steps, not API.
DEVICE_INTERNAL="tplan_view_base tplan_view_has tplan_view_row tplan_view_marks tplan_view_gate
	tplan_cta_leader tplan_cta_poll tplan_cta_sync tplan_poll_pause tplan_release_word_max"

is_link() { grep -q '^\.so ' "$1"; }

# The public functions: the map's, then the device header's.
$api map libtplan/libtplan.map | cut -f1 | sort -u >"$out/lib_fns.txt"
$api protos device/tplan_device.h | cut -f1 | grep -vxF -f <(echo "$DEVICE_INTERNAL" | tr -s ' \t' '\n' | sed '/^$/d') |
	sort -u >"$out/dev_fns.txt"
cat "$out/lib_fns.txt" "$out/dev_fns.txt" >"$out/public_fns.txt"

missing=""
for f in $(cat "$out/public_fns.txt"); do
	[ -f "$man/$f.3" ] || missing="$missing $f"
done
t "$([ -z "$missing" ]; echo $?)" "every public function ($(wc -l <"$out/public_fns.txt")) has a page of its name" \
	"no docs/man/NAME.3 for:$missing"

# SYNOPSIS against the headers.
$api protos libtplan/libtplan.h device/tplan_device.h uapi/tplan_sdma.h | sort -u >"$out/header_protos.txt"
bad=""
: >"$out/documented.txt"
for p in "$man"/*.[37]; do
	is_link "$p" && continue
	while IFS=$'\t' read -r name proto; do
		echo "$name" >>"$out/documented.txt"
		want=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' "$out/header_protos.txt")
		if [ -z "$want" ]; then
			bad="$bad"$'\n'"$(basename "$p"): $name is in no public header"
		elif [ "$want" != "$proto" ]; then
			bad="$bad"$'\n'"$(basename "$p"): $proto"$'\n'"  header: $want"
		fi
	done < <($api synopsis "$p")
done
t "$([ -z "$bad" ]; echo $?)" "every SYNOPSIS prototype is the header's" "$bad"
sort -u -o "$out/documented.txt" "$out/documented.txt"
cut -f1 "$out/header_protos.txt" | grep -vxF -f <(echo "$DEVICE_INTERNAL" | tr -s ' \t' '\n' | sed '/^$/d') |
	sort -u >"$out/want_documented.txt"
missing=$(comm -23 "$out/want_documented.txt" "$out/documented.txt" | tr '\n' ' ')
t "$([ -z "$missing" ]; echo $?)" "every function of libtplan.h, tplan_device.h and tplan_sdma.h is in a SYNOPSIS" \
	"in no SYNOPSIS: $missing"

# Sections, and links.
bad=""
for p in "$man"/*.3 "$man"/*.7; do
	b=$(basename "$p")
	if is_link "$p"; then
		target=$(sed -n 's/^\.so man[37]\/\(.*\)/\1/p' "$p")
		if [ ! -f "$man/$target" ] || is_link "$man/$target"; then
			bad="$bad"$'\n'"$b: .so to a missing page or to a link: $target"
		elif ! $api synopsis "$man/$target" | cut -f1 | grep -qx "${b%.3}"; then
			bad="$bad"$'\n'"$b: $target does not declare ${b%.3}"
		fi
		continue
	fi
	case "$b" in
	*.3) sections="NAME SYNOPSIS DESCRIPTION RETURN_VALUE ERRORS SEE_ALSO" ;;
	*) sections="NAME DESCRIPTION SEE_ALSO" ;;
	esac
	for s in $sections; do
		grep -q "^\.SH \"\?${s//_/ }\"\?\$" "$p" || bad="$bad"$'\n'"$b: no ${s//_/ } section"
	done
	# NAME names every function the page declares.
	[ "${b##*.}" = 3 ] || continue
	name_line=$(sed -n '/^\.SH NAME/,/^\.SH /p' "$p")
	for f in $($api synopsis "$p" | cut -f1); do
		grep -qw "$f" <<<"$name_line" || bad="$bad"$'\n'"$b: NAME does not list $f"
	done
done
t "$([ -z "$bad" ]; echo $?)" "pages have NAME, SYNOPSIS, DESCRIPTION, RETURN VALUE, ERRORS, SEE ALSO; links resolve" "$bad"

# Types.
missing=""
cat "$man"/*.[37] | sed 's/\\f[BIRP]//g' >"$out/all_pages.txt"
for ty in $($api types libtplan/libtplan.h device/tplan_device.h uapi/tplan.h uapi/tplan_chain.h \
	uapi/tplan_sdma.h | sed 's/^\(struct\|enum\|typedef\) //') tplan_ctx tplan_schedule tplan_plan; do
	grep -qw "$ty" "$out/all_pages.txt" || missing="$missing $ty"
done
t "$([ -z "$missing" ]; echo $?)" "every public struct, enum and typedef is named in a page" \
	"named in no page:$missing"

# Structs a SYNOPSIS spells out (".B struct NAME {" .. ".B };") have the
# header's members, in order.
$api fields libtplan/libtplan.h device/tplan_device.h >"$out/lib_fields.txt"
bad=""
for p in "$man"/*.3; do
	is_link "$p" && continue
	for s in $(sed -n 's/^\.B struct \([a-z_0-9]*\) {.*/\1/p' "$p"); do
		have=$(sed -n "/^\\.B struct $s {/,/^\\.B };/p" "$p" | sed '1d;$d' |
			sed 's/^\.B "\(.*\)"$/\1/; s/\[[^]]*\]//g; s/;.*//; s/\*//g' | awk '{ print $NF }' | tr '\n' ' ')
		want=$(awk -F'\t' -v s="struct $s" '$1 == s { print $2 }' "$out/lib_fields.txt" | tr '\n' ' ')
		[ "$have" = "$want" ] || bad="$bad"$'\n'"$(basename "$p"): struct $s: $have"$'\n'"  header: $want"
	done
done
t "$([ -z "$bad" ]; echo $?)" "structs spelled out in a SYNOPSIS have the header's members" "$bad"

# ioctls: a subsection each in tplan(7), with its errors.
bad=""
for ioc in $($api ioctls uapi/tplan.h); do
	sec=$(awk -v s=".SS $ioc" '$0 == s { on = 1; next } on && /^\.S[HS] / { exit } on' "$man/tplan.7")
	if [ -z "$sec" ]; then
		bad="$bad $ioc(no .SS)"
	elif ! grep -q 'Errors' <<<"$sec"; then
		bad="$bad $ioc(no errors)"
	fi
done
t "$([ -z "$bad" ]; echo $?)" "tplan(7) documents every ioctl of uapi/tplan.h with its errors" "$bad"

# ... the same errors as the header's "Errors:" lists (besides the shared
# ones), each way: selftests/tplan_errno_table.pl reads the header, as the
# fuzzer's errno check does.
errnos=$(echo '#include <errno.h>' | ${CC:-cc} -dM -E -x c - | sed -n 's/^#define \(E[A-Z0-9]*\) .*/\1/p' | sort -u)
shared="EFAULT EINVAL E2BIG ENOTTY"
bad=""
while read -r ioc want; do
	sec=$(awk -v s=".SS $ioc" '$0 == s { on = 1; next } on && /^\.S[HS] / { exit } on' "$man/tplan.7" |
		sed -n '/Errors/,$p')
	like=$(echo "$sec" | sed -n 's/^Errors: as the \([a-z]*\),.*/\1/p')
	if [ -n "$like" ]; then
		sec="$sec"$'\n'"$(awk -v s=".SS TPLAN_IOC_GROUP_$(echo "$like" | tr a-z A-Z)" \
			'$0 == s { on = 1; next } on && /^\.S[HS] / { exit } on' "$man/tplan.7" | sed -n '/Errors/,$p')"
	fi
	have=$(echo "$sec" | sed 's/\\f[BIRP]//g' | grep -o '\bE[A-Z0-9]*\b' | grep -xF -f <(echo "$errnos") |
		grep -vxF -f <(echo "$shared" | tr ' ' '\n') | sort -u | tr '\n' ' ')
	want=$(echo "$want" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
	[ "$have" = "$want" ] || bad="$bad"$'\n'"$ioc: tplan(7) $have"$'\n'"  uapi/tplan.h $want"
done < <(perl selftests/tplan_errno_table.pl --list uapi/tplan.h)
t "$([ -z "$bad" ]; echo $?)" "every ioctl's errors in tplan(7) are those of uapi/tplan.h" "$bad"

# Rendering.
bad=""
for p in "$man"/*.[37]; do
	is_link "$p" && continue
	w=$(groff -man -ww -z -Tutf8 "$p" 2>&1)
	[ -z "$w" ] || bad="$bad"$'\n'"$(basename "$p"): $w"
	w=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$p" 2>&1 >/dev/null)
	[ -z "$w" ] || bad="$bad"$'\n'"$(basename "$p") (man): $w"
done
t "$([ -z "$bad" ]; echo $?)" "every page renders without a warning (groff -ww, man --warnings)" "$bad"

# Reachability: tplan(7) points to every full page; links are reached through
# their page's NAME.  The README points to tplan(7).
missing=""
for p in "$man"/*.3 "$man"/*.7; do
	is_link "$p" && continue
	b=$(basename "$p")
	[ "$b" = tplan.7 ] && continue
	grep -q "^\.BR ${b%.*} (${b##*.})" "$man/tplan.7" || missing="$missing $b"
	grep -q "docs/man/$b" README.md || missing="$missing README:$b"
done
grep -q 'docs/man/tplan.7' README.md || missing="$missing README:tplan.7"
t "$([ -z "$missing" ]; echo $?)" "tplan(7) and the README link every page" "not linked:$missing"

tap_end
