#!/usr/bin/perl
# sql_names.pl FILE...: the SQL that C code builds in string literals, with
# every function call whose name is not schema-qualified.  Prints
# "file: name(" per such call; exits 1 when there is one.
#
# The extension runs this SQL as its owner (src/queue.c) or in a background
# worker as the bootstrap superuser (src/worker_*.c), or as callers who may be
# the owner: a bare name would be resolved through a search_path that some
# other role may control (docs/ARCHITECTURE.md, "Name resolution and
# rights").  SQL keywords that look like calls (IN (...), VALUES (...),
# coalesce, extract, ...) are not calls of a function found by name: the
# grammar turns them into expressions or into pg_catalog.* calls.
use strict;
use warnings;

my %keyword = map { $_ => 1 } qw(
  in values coalesce greatest least nullif extract exists any all some filter over
  from where on as and or not select with returning array row cast using
  into table join lateral case when then else end is distinct overlay position
  substring trim normalize treat xmlelement xmlforest xmlparse collation
  partition order by group having limit offset window numeric decimal
  varchar char character interval timestamp time float bit);
my $bad = 0;
for my $file (@ARGV) {
  open(my $fh, '<', $file) or die "$file: $!";
  local $/;
  my $src = <$fh>;
  close $fh;
  $src =~ s{/\*.*?\*/}{ }gs;                # comments
  $src =~ s{//[^\n]*}{ }g;
  # adjacent literals form one string; macros between them (INT64_FORMAT) count as text
  while ($src =~ /((?:"(?:[^"\\\n]|\\.)*"\s*(?:[A-Z0-9_]+_FORMAT\s*)?)+)/gs) {
    my $lit = $1;
    my $text = '';
    while ($lit =~ /"((?:[^"\\\n]|\\.)*)"/g) { $text .= $1; }
    next unless $text =~ /^\s*(SELECT|UPDATE|INSERT|DELETE|WITH|LOCK|TRUNCATE|COPY)\b/;
    (my $sql = $text) =~ s/''//g;
    $sql =~ s/'[^']*'/''/g;                 # SQL string constants
    while ($sql =~ /(^|[^.\w%])([A-Za-z_][A-Za-z0-9_]*)\s*\(/g) {
      my $name = lc $2;
      next if $keyword{$name};
      print "$file: $name( in: $text\n";
      $bad = 1;
    }
  }
}
exit $bad;
