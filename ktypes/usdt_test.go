package ktypes

import (
	"reflect"
	"testing"
)

func TestParseUSDTArgs(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want USDTArg
	}{
		{"-4@%edi", USDTArg{Size: 4, Signed: true, Kind: USDTReg, Reg: "di", RegOffset: 112}},
		{"8@%r13", USDTArg{Size: 8, Kind: USDTReg, Reg: "r13", RegOffset: 16}},
		{"-4@%r15d", USDTArg{Size: 4, Signed: true, Kind: USDTReg, Reg: "r15", RegOffset: 0}},
		{"1@%al", USDTArg{Size: 1, Kind: USDTReg, Reg: "ax", RegOffset: 80}},
		{"%rax", USDTArg{Size: 8, Kind: USDTReg, Reg: "ax", RegOffset: 80}},
		{"-4@$5", USDTArg{Size: 4, Signed: true, Kind: USDTConst, Value: 5}},
		{"-8@$-42", USDTArg{Size: 8, Signed: true, Kind: USDTConst, Value: -42}},
		{"8@-16(%rbp)", USDTArg{Size: 8, Kind: USDTMem, Reg: "bp", RegOffset: 32, Offset: -16}},
		{"4@(%rsp)", USDTArg{Size: 4, Kind: USDTMem, Reg: "sp", RegOffset: 152}},
		{"8@(%rax,%rdx,8)", USDTArg{Size: 8, Kind: USDTMem, Reg: "ax", RegOffset: 80, Index: "dx", IndexOffset: 96, Scale: 8}},
		{"2@0x10(%r8,%r9)", USDTArg{Size: 2, Kind: USDTMem, Reg: "r8", RegOffset: 72, Offset: 16, Index: "r9", IndexOffset: 64, Scale: 1}},
		{"-8@usdt_global(%rip)", USDTArg{Size: 8, Signed: true, Kind: USDTMem, Reg: "ip", RegOffset: 128, Symbol: "usdt_global"}},
		{"8@tab+8(%rip)", USDTArg{Size: 8, Kind: USDTMem, Reg: "ip", RegOffset: 128, Symbol: "tab", Offset: 8}},
	} {
		got, err := ParseUSDTArgs(tc.spec)
		if err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		tc.want.Spec = tc.spec
		if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.spec, got, tc.want)
		}
	}
	for _, bad := range []string{"3@%rax", "x@%rax", "8@%xyz", "8@$zz", "8@(%rax", "8@(%rax,%rbx,3)", "8@()"} {
		if _, err := ParseUSDTArgs(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
