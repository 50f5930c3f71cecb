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
}
