package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// execResolver matches syscalls:sys_enter_exec* to execve and a second
// event whose record lacks envp (as openat2 lacks mode in a real kernel).
type execResolver struct{ fakeResolver }

func (execResolver) Tracepoint(cat, event string) (*types.Type, error) {
	if cat+":"+event == "syscalls:sys_enter_execx" {
		r := &types.Type{Kind: types.Record, Name: "struct _tracepoint_syscalls_sys_enter_execx", Size: 32, Align: 8}
		for i, n := range []string{"__syscall_nr", "fd", "argv"} {
			r.Fields = append(r.Fields, types.Field{Name: n, Type: types.U64, Offset: 8 * (i + 1)})
		}
		return r, nil
	}
	return fakeResolver{}.Tracepoint(cat, event)
}

func (execResolver) TracepointMatches(cat, event string) ([][2]string, error) {
	if cat == "syscalls" && event == "sys_enter_exec*" {
		return [][2]string{{"syscalls", "sys_enter_execve"}, {"syscalls", "sys_enter_execx"}}, nil
	}
	return nil, fmt.Errorf("no match for %s:%s", cat, event)
}

// A wildcard tracepoint's args field must be in every match; bpftrace
// reports each match that lacks it.
func TestWildcardArgsEveryMatch(t *testing.T) {
	check := func(body string) error {
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: "tracepoint:syscalls:sys_enter_exec* { " + body + " }"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Check(prog, Options{Resolver: execResolver{}})
		return err
	}
	if err := check("print(args->argv)"); err != nil {
		t.Errorf("argv is in both matches: %v", err)
	}
	err := check("print(args->envp)")
	d, ok := err.(*lang.Diagnostics)
	if !ok || len(d.Items) != 1 || !strings.Contains(d.Items[0].Msg, "struct _tracepoint_syscalls_sys_enter_execx' does not contain a field named 'envp'") {
		t.Errorf("envp missing from execx: got %v", err)
	}
	err = check("print(args->fd)")
	if d, ok := err.(*lang.Diagnostics); !ok || len(d.Items) != 1 || !strings.Contains(d.Items[0].Msg, "sys_enter_execve' does not contain a field named 'fd'") {
		t.Errorf("fd missing from execve (the first match): got %v", err)
	}
}
