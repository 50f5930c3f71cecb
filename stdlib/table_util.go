package stdlib

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// bpftrace 0.26's small helpers: strlen, has_cpid, write_user, assert.

// maxStrlenUnroll bounds the string strlen() scans (one compare a byte).
const maxStrlenUnroll = 8192

func utilRows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "strlen", Gen: genStrlen, Kind: Func, Sig: "strlen(string s)", MinArgs: 1, MaxArgs: 1,
			Doc: "the length of a string (or char array) up to its NUL",
			Check: func(c Checker, call *Call) *types.Type {
				t := call.Args[0].Type()
				ok := t != nil && (t.Kind == types.String ||
					t.Kind == types.Array && t.Elem != nil && t.Elem.Kind == types.Int && t.Elem.Size == 1)
				if !ok {
					c.Errorf(call.Expr, "strlen() expects a string or a char array (%s provided)", TypeName(t))
					return types.InvalidType
				}
				if t.Size > maxStrlenUnroll {
					c.Errorf(call.Expr, "strlen() of a string longer than %d bytes is not supported", maxStrlenUnroll)
					return types.InvalidType
				}
				return types.U64
			}},
		&Builtin{Name: "has_cpid", Gen: genHasCpid, Kind: Var, Sig: "has_cpid", Doc: "whether gotrace runs a child command (-c), whose pid is cpid",
			Check: func(Checker, *Call) *types.Type { return types.BoolType }},
		&Builtin{Name: "write_user", Gen: genWriteUser, Kind: Func, Sig: "write_user(void *dst, src, int n)", MinArgs: 3, MaxArgs: 3, Unsafe: true,
			Helpers: []string{"bpf_probe_write_user"},
			Doc:     "write n bytes of src (a string, buffer or integer) to user memory at dst (needs --unsafe)",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); t == nil || (t.Kind != types.Pointer && !t.IsInteger()) {
					c.Errorf(call.Expr, "write_user() expects a pointer as its first argument (%s provided)", TypeName(t))
					return types.InvalidType
				}
				n, ok := c.ConstInt(call.Args[2])
				if !ok || n < 1 {
					c.Errorf(call.Expr, "write_user() expects a positive integer literal as its length")
					return types.InvalidType
				}
				if t := call.Args[1].Type(); t != nil && !t.IsInteger() && int64(t.Size) < n {
					c.Errorf(call.Expr, "write_user(): %d bytes asked, %s has %d", n, TypeName(t), t.Size)
					return types.InvalidType
				}
				return types.S64
			}},
	}
}

// genStrlen counts the bytes before the NUL, one compare per byte of the
// string's size (a constant string is counted at compile time).
func genStrlen(g Gen, c *Call) error {
	if s, ok := lang.ConstStrOf(c.Args[0]); ok {
		g.Emit(asm.Mov.Imm(asm.R0, int32(len(s))))
		g.SetResult(asm.R0)
		return nil
	}
	size := c.Args[0].Type().Size
	if err := g.EvalAddr(c.Args[0], asm.R1); err != nil {
		return err
	}
	done := g.Label("strlen")
	g.Emit(asm.Mov.Imm(asm.R0, 0))
	for i := 0; i < size; i++ {
		g.Emit(asm.LoadMem(asm.R2, asm.R1, int16(i), asm.Byte), asm.JEq.Imm(asm.R2, 0, done), asm.Mov.Imm(asm.R0, int32(i+1)))
	}
	g.Place(done)
	g.Emit(asm.Mov.Reg(asm.R0, asm.R0))
	g.SetResult(asm.R0)
	return nil
}

// genWriteUser: bpf_probe_write_user(dst, &src, n); an integer src is
// written from a stack copy.
func genWriteUser(g Gen, c *Call) error {
	n, ok := intConst(c.Args[2])
	if !ok {
		return fmt.Errorf("write_user(): the length must be a constant")
	}
	dst, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	src := c.Args[1]
	if t := src.Type(); t != nil && t.IsInteger() {
		v, err := g.EvalInt(src)
		if err != nil {
			return err
		}
		tmp, err := g.StackTemp(8)
		if err != nil {
			return err
		}
		g.Emit(asm.StoreMem(asm.R10, tmp, v, asm.DWord), asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, int32(tmp)))
		g.Free(v)
		if n > 8 {
			n = 8
		}
	} else if err := g.EvalAddr(src, asm.R2); err != nil {
		return err
	}
	g.Emit(asm.Mov.Reg(asm.R1, dst), asm.Mov.Imm(asm.R3, int32(n)), asm.FnProbeWriteUser.Call())
	g.Free(dst)
	g.SetResult(asm.R0)
	return nil
}

func assertRows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "assert", Gen: genAssert, Kind: Func, Sig: "assert(bool cond, string msg)", MinArgs: 2, MaxArgs: 2,
			Helpers: []string{"bpf_ringbuf_output"},
			Doc:     "when cond is false: \"assert failed: msg\" as an error at the call (as errorf), then exit(1)",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); t == nil || !t.IsInteger() && t.Kind != types.Pointer {
					c.Errorf(call.Expr, "assert() expects a condition (%s provided)", TypeName(t))
					return types.InvalidType
				}
				if _, ok := call.Args[1].(*lang.StrLit); !ok {
					c.Errorf(call.Expr, "assert() expects a string literal as its message")
					return types.InvalidType
				}
				return types.NoneType
			}},
	}
}

func genHasCpid(g Gen, c *Call) error {
	if err := genCpid(g, c); err != nil {
		return err
	}
	yes, done := g.Label("hascpid"), g.Label("cpiddone")
	g.Emit(asm.JNE.Imm(asm.R0, 0, yes), asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(done))
	g.Place(yes)
	g.Emit(asm.Mov.Imm(asm.R0, 1))
	g.Place(done)
	g.Emit(asm.Mov.Reg(asm.R0, asm.R0))
	g.SetResult(asm.R0)
	return nil
}

func genAssert(g Gen, c *Call) error {
	cond, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	ok := g.Label("assertok")
	g.Emit(asm.JNE.Imm(cond, 0, ok))
	g.Free(cond)
	msg := c.Args[1].(*lang.StrLit).Value
	// bpftrace's stdlib assert says "assert failed: MSG" (its stdlib test
	// assert_macro).
	if _, err := g.Event(EvErrorf, "assert failed: "+strings.ReplaceAll(msg, "%", "%%"), "", nil); err != nil {
		return err
	}
	code := &lang.IntLit{Value: 1, Text: "1"}
	code.SetType(types.S64)
	code.SetFolded(&lang.Const{Int: 1, IsInt: true})
	if _, err := g.Event(EvExit, "", "", []lang.Expr{code}); err != nil {
		return err
	}
	g.Return()
	g.Place(ok)
	return nil
}
