#!/usr/bin/perl
# What the public headers declare, for the checks that keep the reference
# pages and the ABI table complete.  A small C scanner: top-level function
# declarations and definitions, struct/union/enum definitions and their
# members, ioctl numbers.  Good enough for the project's own headers.
#
#   api.pl protos HEADER...   "name<TAB>prototype", normalized
#   api.pl types HEADER...    "struct NAME" / "enum NAME" / "typedef NAME"
#   api.pl fields HEADER...   "struct NAME<TAB>member" for every member
#   api.pl ioctls HEADER...   the TPLAN_IOC_* names
#   api.pl consts HEADER...   every numeric #define and enum constant
#   api.pl map MAPFILE        "symbol<TAB>version" of a version script
#   api.pl synopsis PAGE...   "name<TAB>prototype" from man pages' SYNOPSIS
use strict;
use warnings;

sub slurp {
	my ($f) = @_;
	open(my $fh, '<', $f) or die "api.pl: $f: $!\n";
	local $/;
	my $s = <$fh>;
	close $fh;
	return $s;
}

# One spelling per prototype: the words and punctuation, single spaces,
# "type *name", no storage-class or inline macros.
sub norm {
	my ($p) = @_;
	$p =~ s/\b(?:static|inline|__inline__|__inline|extern|TPLAN_\w+_FN)\b//g;
	$p =~ s/\s+/ /g;
	$p =~ s/\s*\*\s*/ */g;
	$p =~ s/\*\s+(?=\*)/*/g;
	$p =~ s/\s*([(),;\[\]])\s*/$1/g;
	$p =~ s/,/, /g;
	$p =~ s/^\s+|\s+$//g;
	$p =~ s/;$//;
	return $p;
}

sub strip {
	my ($s) = @_;
	$s =~ s{/\*.*?\*/}{ }gs;
	$s =~ s{//[^\n]*}{}g;
	$s =~ s/\\\n/ /g;
	$s =~ s/^\s*#[^\n]*//mg;
	return $s;
}

# Walks the top level; calls back for prototypes and type bodies.
sub scan {
	my ($src, $on_proto, $on_type) = @_;
	my $s = strip($src);
	my ($acc, $i, $n) = ('', 0, length $s);
	while ($i < $n) {
		my $c = substr($s, $i, 1);
		if ($c eq '{') {
			if ($acc =~ /extern\s*"C"\s*$/) {	# transparent
				$acc = '';
				$i++;
				next;
			}
			my ($depth, $j) = (1, $i + 1);
			while ($j < $n && $depth) {
				my $d = substr($s, $j, 1);
				$depth++ if $d eq '{';
				$depth-- if $d eq '}';
				$j++;
			}
			my $body = substr($s, $i + 1, $j - $i - 2);
			if ($acc =~ /\)\s*$/) {
				$on_proto->($acc);
				$acc = '';
			} elsif ($acc =~ /\b(struct|union|enum)\s*(\w*)\s*$/) {
				$on_type->($1, $2, $body);
				$acc .= ' BODY ';
			} else {
				$acc .= ' BODY ';
			}
			$i = $j;
			next;
		}
		if ($c eq '}') {	# end of extern "C"
			$acc = '';
			$i++;
			next;
		}
		if ($c eq ';') {
			$on_type->('typedef', $1, '') if $acc =~ /^\s*typedef\b.*?(\w+)\s*\)?\s*(?:\([^()]*\))?\s*$/s
				&& $acc !~ /BODY/;
			$on_type->('typedef', $1, '') if $acc =~ /^\s*typedef\b.*BODY\s*(\w+)\s*$/s;
			$on_proto->($acc) if $acc =~ /\(/ && $acc !~ /^\s*typedef\b/;
			$acc = '';
			$i++;
			next;
		}
		$acc .= $c;
		$i++;
	}
}

sub members {
	my ($body) = @_;
	my @m;
	$body =~ s/\b(?:union|struct)\s*\{[^{}]*\}\s*(\w+)\s*;/__nested $1;/g;
	for my $decl (split /;/, $body) {
		next unless $decl =~ /\S/;
		$decl =~ s/\[[^\]]*\]//g;
		push @m, $1 if $decl =~ /(\w+)\s*$/;
	}
	return @m;
}

my ($mode, @files) = @ARGV;
die "usage: api.pl protos|types|fields|ioctls|consts|map|synopsis FILE...\n" unless $mode && @files;
my (%seen, @out, %fields, @order);
for my $f (@files) {
	my $src = slurp($f);
	if ($mode eq 'protos') {
		scan($src, sub {
			my $p = norm($_[0]);
			return unless $p =~ /(\w+)\(/;
			my $name = $1;
			push @out, "$name\t$p" unless $seen{$name}++;
		}, sub { });
	} elsif ($mode eq 'types' || $mode eq 'fields') {
		scan($src, sub { }, sub {
			my ($kind, $name, $body) = @_;
			return unless length $name;
			my $t = $kind eq 'typedef' ? "typedef $name" : "$kind $name";
			if ($mode eq 'types') {
				push @out, $t unless $seen{$t}++;
			} elsif ($kind eq 'struct') {
				# A struct defined in both branches of an #if (the
				# device header's HIP and host builds): the fuller one.
				my @m = members($body);
				my $old = $fields{$t};
				push @order, $t unless $old;
				$fields{$t} = \@m if !$old || @m > @$old;
			}
		});
	} elsif ($mode eq 'consts') {
		# Object-like macros with a value, minus include guards and
		# strings; then enum members.
		while ($src =~ /^#define[ \t]+(TPLAN_\w+)[ \t]+([^\n]*)$/mg) {
			my ($name, $v) = ($1, $2);
			$v =~ s{/\*.*}{};
			next if $v =~ /["']/ || $v !~ /\S/;
			push @out, $name unless $seen{$name}++;
		}
		scan($src, sub { }, sub {
			my ($kind, $name, $body) = @_;
			return unless $kind eq 'enum';
			for my $e (split /,/, $body) {
				push @out, $1 if $e =~ /^\s*(\w+)/ && !$seen{$1}++;
			}
		});
	} elsif ($mode eq 'map') {
		# Each version node's global symbols, with the node's name.
		my $s = $src;
		$s =~ s/#[^\n]*//g;
		while ($s =~ /([\w.]+)\s*\{(.*?)\}\s*[\w.\s]*;/sg) {
			my ($node, $body) = ($1, $2);
			my ($glob) = $body =~ /global:(.*?)(?:local:|$)/s;
			next unless defined $glob;
			for my $sym (split /;/, $glob) {
				$sym =~ s/^\s+|\s+$//g;
				push @out, "$sym\t$node" if length $sym;
			}
		}
	} elsif ($mode eq 'ioctls') {
		while ($src =~ /^#define\s+(TPLAN_IOC_\w+)\s+_IO/mg) {
			push @out, $1 unless $seen{$1}++;
		}
	} elsif ($mode eq 'synopsis') {
		# The SYNOPSIS of a page: .nf text up to the next .SH; request
		# lines and the #include line are not prototypes.
		my ($syn) = $src =~ /^\.SH SYNOPSIS\n(.*?)^\.SH /ms;
		next unless defined $syn;
		$syn =~ s/^\.[^\n]*\n//mg;
		$syn =~ s/\\-/-/g;
		$syn =~ s/\\e/\\/g;
		$syn =~ s/\\f[BIRP]//g;
		$syn =~ s/^#include[^\n]*\n//mg;
		for my $decl (split /;/, $syn) {
			next if $decl =~ /^\s*(?:struct|union|enum|typedef)\b/s;
			my $p = norm($decl);
			push @out, "$1\t$p" if $p =~ /(\w+)\(/;
		}
	} else {
		die "api.pl: unknown mode $mode\n";
	}
}
for my $t (@order) {
	push @out, "$t\t$_" for @{$fields{$t}};
}
print "$_\n" for @out;
