#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
# The errno contract of every ioctl, as uapi/tplan.h documents it, as a C
# table for the in-VM fuzzer (selftests/tplan_fuzz*.c):
#
#   tplan_errno_table.pl uapi/tplan.h > tplan_errno_table.h
#   tplan_errno_table.pl --list uapi/tplan.h    one line per ioctl: its name
#                                                and its own codes (for the
#                                                docs test against tplan(7))
#
# An ioctl may fail with the codes of the shared contract at the top of the
# header ("Errno contract shared by all ioctls") and with those its own
# kernel-doc block names after "Errors:" ("as the barrier" takes in the
# barrier's).  Generated at build time, never kept by hand, so that a fix
# of the header reaches the fuzzer with the next build.  Only names that
# <errno.h> defines count as codes (the C compiler lists them), so prose
# such as "EMPTY" is not mistaken for one.
use strict;
use warnings;

my $list = @ARGV && $ARGV[0] eq '--list' ? shift : 0;
my $hdr = shift or die "usage: $0 [--list] uapi/tplan.h\n";
open(my $fh, '<', $hdr) or die "$0: $hdr: $!\n";
my $src = do { local $/; <$fh> };
close $fh;

my $cc = $ENV{CC} || 'cc';
my %is_errno;
for (`echo '#include <errno.h>' | $cc -dM -E -x c -`) {
	$is_errno{$1} = 1 if /^#define (E[A-Z0-9]+)\s/;
}
die "$0: no errno names from '$cc -dM -E'\n" unless $is_errno{EINVAL};

sub codes {
	my ($text) = @_;
	my (@out, %seen);
	for my $w ($text =~ /\b(E[A-Z0-9]+)\b/g) {
		push @out, $w if $is_errno{$w} && !$seen{$w}++;
	}
	return @out;
}

# The shared contract: the lines " *   ECODE  meaning" under its heading.
my @shared;
if ($src =~ /Errno contract shared by all ioctls:\s*\n((?:\s*\*\s+E[A-Z0-9]+\b[^\n]*\n)+)/) {
	@shared = codes($1);
}
die "$0: $hdr: no \"Errno contract shared by all ioctls\" list\n" unless @shared;

# Every ioctl the header defines, in its order.
my @ioctls = $src =~ /^#define\s+(TPLAN_IOC_\w+)\s+_IO/mg;
die "$0: $hdr: no TPLAN_IOC_* defined\n" unless @ioctls;

# kernel-doc blocks "struct X - TPLAN_IOC_Y ...": the codes after "Errors:".
my (%own, %like, %documented);
while ($src =~ m{/\*\*(.*?)\*/}gs) {
	my $doc = $1;
	next unless $doc =~ /^\s*\*\s*struct\s+\w+\s+-\s+(TPLAN_IOC_\w+)/m;
	my $ioc = $1;
	$documented{$ioc} = 1;
	next unless $doc =~ /\bErrors:(.*)/s;
	my $errs = $1;
	$errs =~ s/^\s*\*\s?//mg;
	$own{$ioc} = [codes($errs)];
	# "Errors: as the barrier, plus ...": another ioctl's list.
	if ($errs =~ /^\s*as (?:the |for )?(\w+)/) {
		my $name = uc $1;
		my @match = grep { /_\Q$name\E$/ } @ioctls;
		die "$0: $hdr: $ioc: \"as $1\" names no single ioctl\n" unless @match == 1;
		$like{$ioc} = $match[0];
	}
}

sub all_codes {
	my ($ioc, $depth) = @_;
	die "$0: $hdr: \"as ...\" references loop at $ioc\n" if $depth > 8;
	my @c = @{ $own{$ioc} || [] };
	push @c, all_codes($like{$ioc}, $depth + 1) if $like{$ioc};
	return @c;
}

if ($list) {
	my %shared = map { $_ => 1 } @shared;
	for my $ioc (@ioctls) {
		my %seen;
		my @c = sort grep { !$shared{$_} && !$seen{$_}++ } all_codes($ioc, 0);
		print join(' ', $ioc, @c), "\n";
	}
	exit 0;
}

print "/* Generated from $hdr by selftests/tplan_errno_table.pl: do not edit. */\n";
print "#ifndef TPLAN_ERRNO_TABLE_H\n#define TPLAN_ERRNO_TABLE_H\n\n";
print "#include <errno.h>\n\n";
print "/*\n * What uapi/tplan.h lets each ioctl fail with: the shared contract and\n";
print " * the ioctl's own \"Errors:\" list.  documented is 0 for an ioctl that has\n";
print " * no kernel-doc block naming it (then only the shared codes are listed).\n */\n";
print "struct tplan_errno_doc {\n\tunsigned long cmd;\n\tconst char *name;\n";
print "\tint documented;\n\tint codes[40];\t/* 0-terminated */\n};\n\n";
print "static const int tplan_errno_shared[] = { ", join(', ', @shared, 0), " };\n\n";
print "static const struct tplan_errno_doc tplan_errno_docs[] = {\n";
for my $ioc (@ioctls) {
	my (%seen, @c);
	@c = grep { !$seen{$_}++ } (@shared, all_codes($ioc, 0));
	die "$0: $ioc: more codes than the table holds\n" if @c > 39;
	printf "\t{ %s, \"%s\", %d, { %s } },\n", $ioc, $ioc, $documented{$ioc} ? 1 : 0,
		join(', ', @c, 0);
}
print "};\n\n#endif /* TPLAN_ERRNO_TABLE_H */\n";
