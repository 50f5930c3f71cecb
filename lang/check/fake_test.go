package check

import (
	"fmt"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang/types"
)

// fakeResolver is a small, fixed type source for tests: a few tracepoints,
// kernel structs and enums, shaped like the real ones.
type fakeResolver struct{ ktypes.Unresolved }

func rec(name string, fields ...types.Field) *types.Type {
	t := &types.Type{Kind: types.Record, Name: name, Fields: fields}
	size, align := 0, 1
	for _, f := range fields {
		if e := f.Offset + f.Type.Size; e > size {
			size = e
		}
		if a := f.Type.Alignment(); a > align {
			align = a
		}
	}
	t.Size = (size + align - 1) / align * align
	return t
}

func fld(name string, t *types.Type, off int) types.Field {
	return types.Field{Name: name, Type: t, Offset: off}
}

var (
	charPtrUser = types.PointerTo(types.S8, types.AddrUser)
	taskStruct  = func() *types.Type {
		t := &types.Type{Kind: types.Record, Name: "struct task_struct"}
		t.Fields = []types.Field{
			fld("state", types.S64, 16),
			fld("pid", types.S32, 1000),
			fld("tgid", types.S32, 1004),
			fld("real_parent", types.PointerTo(t, types.AddrKernel), 1008),
			fld("comm", types.ArrayOf(types.S8, 16), 1200),
			{Name: "flags_bit", Type: types.U32, Offset: 1216, BitOff: 3, BitWidth: 2},
			fld("", rec("", fld("anon_member", types.U64, 0)), 1224),
		}
		t.Size = 4096
		t.Align = 8
		return t
	}()
	fakeTracepoints = map[string]*types.Type{
		"syscalls:sys_enter_openat": rec("struct _tracepoint_syscalls_sys_enter_openat",
			fld("__syscall_nr", types.S32, 8), fld("dfd", types.S64, 16),
			fld("filename", charPtrUser, 24), fld("flags", types.S64, 32), fld("mode", types.U64, 40)),
		"syscalls:sys_enter_read": rec("struct _tracepoint_syscalls_sys_enter_read",
			fld("__syscall_nr", types.S32, 8), fld("fd", types.U64, 16),
			fld("buf", types.PointerTo(types.S8, types.AddrUser), 24), fld("count", types.U64, 32)),
		"syscalls:sys_exit_read": rec("struct _tracepoint_syscalls_sys_exit_read",
			fld("__syscall_nr", types.S32, 8), fld("ret", types.S64, 16)),
		"syscalls:sys_enter_nanosleep": rec("struct _tracepoint_syscalls_sys_enter_nanosleep",
			fld("__syscall_nr", types.S32, 8),
			fld("rqtp", types.PointerTo(rec("struct __kernel_timespec", fld("tv_sec", types.S64, 0), fld("tv_nsec", types.S64, 8)), types.AddrUser), 16),
			fld("rmtp", types.PointerTo(rec("struct __kernel_timespec", fld("tv_sec", types.S64, 0), fld("tv_nsec", types.S64, 8)), types.AddrUser), 24)),
		"syscalls:sys_exit_nanosleep": rec("struct _tracepoint_syscalls_sys_exit_nanosleep",
			fld("__syscall_nr", types.S32, 8), fld("ret", types.S64, 16)),
		"syscalls:sys_enter_execve": rec("struct _tracepoint_syscalls_sys_enter_execve",
			fld("__syscall_nr", types.S32, 8), fld("filename", charPtrUser, 16),
			fld("argv", types.PointerTo(charPtrUser, types.AddrUser), 24),
			fld("envp", types.PointerTo(charPtrUser, types.AddrUser), 32)),
		"raw_syscalls:sys_enter": rec("struct _tracepoint_raw_syscalls_sys_enter",
			fld("id", types.S64, 8), fld("args", types.ArrayOf(types.U64, 6), 16)),
		"sched:sched_switch": rec("struct _tracepoint_sched_sched_switch",
			fld("prev_comm", types.ArrayOf(types.S8, 16), 8), fld("prev_pid", types.S32, 24),
			fld("next_comm", types.ArrayOf(types.S8, 16), 40), fld("next_pid", types.S32, 56)),
		"irq:irq_handler_entry": rec("struct _tracepoint_irq_irq_handler_entry",
			fld("irq", types.S32, 8), fld("name", types.ArrayOf(types.S8, 64), 12)),
	}
	fakeTypes = map[string]*types.Type{
		"struct task_struct": taskStruct,
		"struct Foo":         rec("struct Foo", fld("m", types.S32, 0), fld("n", types.S32, 4)),
		"struct A":           rec("struct A", fld("x", types.ArrayOf(types.S32, 4), 0)),
		"struct B":           rec("struct B", fld("y", types.ArrayOf(types.ArrayOf(types.S32, 2), 2), 0)),
		"struct x":           rec("struct x", fld("x", types.U64, 0)),
		"struct sock":        rec("struct sock", fld("__sk_common", rec("struct sock_common", fld("skc_daddr", types.U32, 0), fld("skc_dport", types.U16, 12)), 0)),
	}
)

func (fakeResolver) Tracepoint(cat, event string) (*types.Type, error) {
	if t, ok := fakeTracepoints[cat+":"+event]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("tracepoint %s:%s: no format file in the test fixture", cat, event)
}

func (fakeResolver) TracepointMatches(cat, event string) ([][2]string, error) {
	var out [][2]string
	for k := range fakeTracepoints {
		var c, e string
		fmt.Sscanf(k, "%s", &c)
		for i := range k {
			if k[i] == ':' {
				c, e = k[:i], k[i+1:]
			}
		}
		if wildMatch(cat, c) && wildMatch(event, e) {
			out = append(out, [2]string{c, e})
		}
	}
	return out, nil
}

func wildMatch(pat, s string) bool {
	if pat == "" {
		return s == ""
	}
	if pat[0] == '*' {
		for i := 0; i <= len(s); i++ {
			if wildMatch(pat[1:], s[i:]) {
				return true
			}
		}
		return false
	}
	return s != "" && (pat[0] == '?' || pat[0] == s[0]) && wildMatch(pat[1:], s[1:])
}

func (fakeResolver) Type(name string) (*types.Type, error) {
	if t, ok := fakeTypes[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%s: not in the test fixture's BTF", name)
}

func (fakeResolver) Func(name string) (*types.Type, *types.Type, error) {
	switch name {
	case "vfs_read":
		return rec("struct _kfunc_vfs_read", fld("file", types.PointerTo(types.U64, types.AddrKernel), 0),
			fld("buf", charPtrUser, 8), fld("count", types.U64, 16), fld("pos", types.PointerTo(types.S64, types.AddrKernel), 24)), types.S64, nil
	}
	return nil, nil, fmt.Errorf("function %s: not in the test fixture's BTF", name)
}

func (fakeResolver) RawTracepoint(name string) (*types.Type, error) {
	return nil, fmt.Errorf("raw tracepoint %s: not in the test fixture's BTF", name)
}

func (fakeResolver) Enum(name string) (int64, *types.Type, bool) {
	switch name {
	case "FOO":
		return 333, types.S64, true
	case "ONE":
		return 1, types.S64, true
	case "TWO":
		return 2, types.S64, true
	}
	return 0, nil, false
}
