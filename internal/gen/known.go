package gen

// KnownBugs are bpftrace 0.17 behaviours that differ from gotrace where
// gotrace is right (or where bpftrace's answer depends on what its LLVM
// optimiser happens to prove), each with the evidence: the script and what
// bpftrace 0.17.0 prints here. The side-by-side property allows them by
// keeping clear of them: the generator writes the guard named with each
// into the fixed text of the construct, which shrinking never removes, so
// a difference the property reports is never one of these.
var KnownBugs = []struct {
	Name, Evidence, Guard string
}{
	{
		Name: "division or modulo by a zero LLVM can prove",
		Evidence: `BEGIN { $z = 0; printf("%ld\n", 10 % $z); }  prints 0 (LLVM folds the undefined urem),
while BEGIN { @z = 0; printf("%ld\n", 10 % @z); } prints 10 (BPF's x % 0 = x at run time)`,
		Guard: "divisors are (y | 1), never 0",
	},
	{
		Name: "shift by 64 or more, or negative",
		Evidence: `BEGIN { printf("%ld\n", 1 << 64); } prints 0 (folded), while a shift by @s = 64 at
run time gives 1 (the CPU masks the count)`,
		Guard: "shift counts are (y & 63)",
	},
	{
		Name: "unary - and ~ on integers narrower than 64 bits are zero-extended",
		Evidence: `BEGIN { $y = (int32)5; printf("%ld %d\n", -$y, -$y < 0); } prints "4294967291 1": the
value prints zero-extended although it compares as the negative int32 it is; ~(int8)0 prints 255`,
		Guard: "- and ~ apply to operands cast to 64 bits",
	},
	{
		Name: "hist() puts every value of 2^32 or more in the [2G, 4G) bucket",
		Evidence: `BEGIN { @h = hist(8589934592); exit(); } prints "[2G, 4G)  1 |@@@...|"; 8589934592
is 8G (gotrace: [8G, 16G))`,
		Guard: "hist's argument is (x) & 0xffffffff",
	},
	{
		Name: "equal values print in hash-table order, random per run",
		Evidence: `BEGIN { @s["ab"] = 1; @s["XY0123456789abc"] = 1; @s["c"] = 1; @s["d"] = 1; exit(); } printed
its four lines in five different orders in six runs (e.g. d, XY..., c, ab, then ab, XY..., d, c):
a count/sum/min/max/integer map is std::sort-ed by value over bpf_get_next_key's order, and the
kernel seeds every hash map's hash at random (avg/stats/hist maps are gathered in a std::map
first, so their equal values are in key-byte order, which gotrace follows)`,
		Guard: "the comparison takes a run of equal-valued lines of one such map as a set (sameOutput)",
	},
	{
		Name: "max() stores nothing below 0 into a new entry",
		Evidence: `BEGIN { @a[1] = max(-5); @a[2] = max(3); exit(); } prints only "@a[2]: 3", and
BEGIN { @a = max((uint64)-1); exit(); } prints no @a: the update runs only when the value is
>= the entry's, signed, and a missing entry reads as 0 (gotrace: @a[1]: -5, @a: -1)`,
		Guard: "max's argument is (x) & 0x7fffffffffffffff",
	},
	{
		Name: "min() keeps 0xffffffff - value: 32-bit values only",
		Evidence: `BEGIN { @a = min(5000000000); @b = min(4294967295); @c = min(10); @c = min(5000000000); exit(); }
prints no @a, "@b: 0" and "@c: 10" (its own comment: "a hack really until the code generation
for the min() function is sorted out"; gotrace: 5000000000, 4294967295, 10)`,
		Guard: "min's argument is (int64)(int32)(x)",
	},
	{
		Name: "delete() of an avg() or stats() entry leaves half of it",
		Evidence: `BEGIN { @a[1] = avg(5); delete(@a[1]); exit(); } prints "@a[1]: 0" (the count
word is deleted, the total stays; gotrace: nothing)`,
		Guard: "the generator deletes only from maps of plain values",
	},
	{
		Name: "a string map key from a variable or a ternary is clobbered or keeps stale bytes",
		Evidence: `BEGIN { $v = "abcdefghijklmnopq"; @m[$v] = 1; printf("[%s]\n", $v); exit(); } prints
"[abcdefghijklefghq]" (the variable is overwritten once used as the key); BEGIN { $v = "abcdefghi";
@m[$v] = 1; @m[$v] = 1; exit(); } makes two entries, "@m[]: 1" and "@m[abcdefghi]: 1"; and
BEGIN { unroll(2) { @m[(1 ? "" : "0.tXriw17K6Ya{c86wClm6J")] = count(); printf("p60 %s\n", "d?"); } exit(); }
two entries "@m[]: 1" whose bytes after the NUL differ (generator seeds 600873 and 600938;
gotrace: one entry each)`,
		Guard: "string map keys are literals",
	},
}
