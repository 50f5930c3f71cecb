#!/bin/sh
# Regenerates the golden files from bpftrace 0.17 (run as root):
#   cd runtime/output/testdata && sh gen.sh
# Each NAME.out is bpftrace's stdout for the script in NAME.bt with the flags
# in the case list; output_test.go builds the same maps and values by hand.
set -e
ulimit -l unlimited 2>/dev/null || true
run() { name=$1; shift; printf '%s\n' "$*" > "$name.cmd"; bpftrace "$@" > "$name.out" 2>/dev/null; }
MAPS='BEGIN { @hist = hist(2); @h2=hist(2000); @l = lhist(5,0,100,10); @s=stats(3); @a=avg(5); @c=count(); @m["a",1]=2; @m["b",2]=1; @t=(1,"x"); @mm=min(3); @sm = sum(-5); exit(); }'
run maps_text -q -e "$MAPS"
run maps_json -q -f json -e "$MAPS"
run hist_text -q -e 'BEGIN { @=hist(-1); @=hist(2); @=hist(3); @=hist(7); @=hist(20); exit(); }'
LH='BEGIN { @l=lhist(3000, 0, 5000, 1024); @l=lhist(-1,0,5000,1024); @l=lhist(6000,0,5000,1024); @l2=lhist(3145728, 0, 4194304, 1048576); exit(); }'
run lhist_text -q -e "$LH"
run lhist_json -q -f json -e "$LH"
KEYS='BEGIN { @s["b"]="x"; @s["a"]="y"; @s["c"]="a"; @t[2,"b"]="q"; @t[1,"c"]="q"; @t[1,"a"]="q"; @t[10,"a"]="q"; @n[-1]="a"; @n[5]="b"; @n[-7]="c"; @a[1]=3; @a[2]=1; @a[3]=2; exit(); }'
run keys_text -q -e "$KEYS"
run keys_json -q -f json -e "$KEYS"
TOP='BEGIN { @c[1]=10; @c[2]=25; @c[3]=7; print(@c, 2, 3); @a[1]=avg(10); @a[2]=avg(20); print(@a, 1, 2); @s[1]=stats(10); @s[2]=stats(20); print(@s, 1, 2); @h[1]=hist(3); @h[1]=hist(3); @h[2]=hist(100); print(@h, 1, 2); clear(@c); clear(@a); clear(@s); clear(@h); exit(); }'
run top_text -q -e "$TOP"
run top_json -q -f json -e "$TOP"
VALS='BEGIN { print((1,"ab")); print("str"); print(5); print(-5); print((int8)-1); print(ntop(2, 0x0100007f)); print(pton("1:2::ff")); print(ntop(pton("1:2::ff"))); print(strerror(2)); print(buf("ab\x00\xff", 4)); exit(); }'
run values_text -q -e "$VALS"
run values_json -q -f json -e "$VALS"
run zero_json -q -f json -e 'BEGIN { @hist = hist(2); @c[1] = count(); zero(@hist); zero(@c); exit(); }'
run zero_text -q -e 'BEGIN { @hist = hist(2); @c[1] = count(); zero(@hist); zero(@c); exit(); }'
run printf_text -q -e 'BEGIN { printf("%10.3s|%.2d|%5.3d|%-10s|\n", "abcdef", 5, 7, "hi"); printf("%lx %llx %lu %ld %hx %hhx %zd %jd %p\n", -1, -1, -1, -1, -1, -1, -1, -1, 4096); printf("%5s|%-5d|%05x|%.3s|%8.3d|%-08d|\n", "abcdefgh", -3, 255, "abcdef", -5, 7); printf("%c|%hhd|%hd|%lu|%llx\n", 0x141, 200, 70000, -2, 255); printf("%d|%u|%d|%x|%ld|%p|%p\n", 0x100000005, -1, -1, -1, 0x100000005, 0, 255); printf("%5c|%-3c|%r|\n", 65, 66, buf("ab\x01c", 4)); $x = 0x12345678abcdef; printf("%hhx %hx %x %jx\n", $x, $x, $x, $x); printf("%d %d %d %u %x\n", (int8)-1, (uint8)255, (int32)-5, (int32)-5, (int32)-5); exit(); }'
run printf_json -q -f json -e 'BEGIN { printf("test \r \n \t \\ \" bar"); printf("a\x01b\xffc\x7f"); exit(); }'
run attach_text -e 'BEGIN { exit(); }'
run attach_json -f json -e 'BEGIN { exit(); } END { }'
