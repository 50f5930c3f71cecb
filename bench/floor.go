package main

// The floor (issue 20): for the per-event scripts, a hand-written eBPF
// program doing the same work the cheapest way known — per-CPU array maps
// where a script's map has no key, word-wise comm compares, one ring-buffer
// reserve/submit — attached to the same tracepoint or uprobe. It runs as a
// third "tool": the bench binary re-executed with floorEnv set, which loads
// and attaches the program, announces the attach like the tracers do, and
// exits on SIGINT. The harness measures it exactly like the tracers (BPF
// run-time stats of the programs found through the process's fds, the
// same workload run), so gotrace/floor is the cost gotrace adds over the
// least the kernel lets a program do for that script.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
)

// Environment of a floor process: which script, the workload's comm and
// path (for the filter and the uprobe).
const (
	floorEnv     = "GOTRACE_BENCH_FLOOR"
	floorCommEnv = "GOTRACE_BENCH_FLOOR_COMM"
	floorPathEnv = "GOTRACE_BENCH_FLOOR_PATH"
)

// floorScripts are the scripts that have a floor program.
var floorScripts = map[string]bool{"count": true, "hist": true, "comm-filter": true, "printf": true, "uprobe": true}

// floorProgram is one hand-written program and how it attaches.
type floorProgram struct {
	typ    ebpf.ProgramType
	insns  asm.Instructions
	attach func(*ebpf.Program) (link.Link, error)
	maps   []*ebpf.Map
	ring   *ebpf.Map // printf: the ring buffer of "E <tid>" events
	total  *ebpf.Map // per-CPU counter map printed at exit (key 0), if any
}

func (f *floorProgram) close() {
	for _, m := range f.maps {
		m.Close()
	}
}

// commWords is comm as the kernel's bpf_get_current_comm leaves it (16
// bytes, NUL-padded) in two little-endian words.
func commWords(comm string) (lo, hi int64, err error) {
	if len(comm) > 15 {
		return 0, 0, fmt.Errorf("comm %q longer than 15 bytes", comm)
	}
	var b [16]byte
	copy(b[:], comm)
	return int64(binary.LittleEndian.Uint64(b[:8])), int64(binary.LittleEndian.Uint64(b[8:])), nil
}

// commFilter returns instructions that jump to label out unless the
// current comm is comm: one helper call, two 8-byte loads and compares.
func commFilter(comm, out string) (asm.Instructions, error) {
	lo, hi, err := commWords(comm)
	if err != nil {
		return nil, err
	}
	return asm.Instructions{
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, -16),
		asm.Mov.Imm(asm.R2, 16),
		asm.FnGetCurrentComm.Call(),
		asm.LoadMem(asm.R1, asm.RFP, -16, asm.DWord),
		asm.LoadImm(asm.R2, lo, asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R2, out),
		asm.LoadMem(asm.R1, asm.RFP, -8, asm.DWord),
		asm.LoadImm(asm.R2, hi, asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R2, out),
	}, nil
}

// incPerCPUArray increments slot (the u32 at fp-off) of a per-CPU array:
// the lookup is inlined by the verifier, the add needs no atomic.
func incPerCPUArray(m *ebpf.Map, off int16, out string) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(off)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, out),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
	}
}

// stdw is *(u64 *)(dst + off) = imm, which asm.StoreImm does not build.
func stdw(dst asm.Register, off int16, imm int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: dst, Offset: off, Constant: int64(imm)}
}

var exit0 = asm.Instructions{asm.Mov.Imm(asm.R0, 0).WithSymbol("out"), asm.Return()}

func perCPUArray(name string, n uint32) (*ebpf.Map, error) {
	return ebpf.NewMap(&ebpf.MapSpec{Name: name, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: n})
}

func tracepoint(group, name string) func(*ebpf.Program) (link.Link, error) {
	return func(p *ebpf.Program) (link.Link, error) { return link.Tracepoint(group, name, p, nil) }
}

// buildFloor returns the floor program of script name.
func buildFloor(name, comm, path string) (*floorProgram, error) {
	f := &floorProgram{typ: ebpf.TracePoint}
	fail := func(err error) (*floorProgram, error) { f.close(); return nil, err }
	switch name {
	case "count":
		// @[pid] = count(): per-CPU hash keyed by the 4-byte pid; lookup,
		// add in place, insert on the first event of a pid.
		m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "floor_count", Type: ebpf.PerCPUHash, KeySize: 4, ValueSize: 8, MaxEntries: 4096})
		if err != nil {
			return fail(err)
		}
		f.maps = append(f.maps, m)
		f.insns = asm.Instructions{
			asm.FnGetCurrentPidTgid.Call(),
			asm.RSh.Imm(asm.R0, 32),
			asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "insert"),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.Add.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
			asm.Ja.Label("out"),
			stdw(asm.RFP, -16, 1).WithSymbol("insert"),
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, -16),
			asm.Mov.Imm(asm.R4, 0),
			asm.FnMapUpdateElem.Call(),
		}
		f.insns = append(f.insns, exit0...)
		f.attach = tracepoint("syscalls", "sys_enter_getpid")
	case "hist":
		// @ = hist(args->ret): power-of-2 bucket by a 6-step binary
		// search, a per-CPU array slot per bucket (bpftrace's layout:
		// 0 negative, 1 zero, 2+k for [2^k, 2^(k+1))).
		m, err := perCPUArray("floor_hist", 66)
		if err != nil {
			return fail(err)
		}
		f.maps, f.total = append(f.maps, m), nil
		f.insns = asm.Instructions{
			asm.LoadMem(asm.R6, asm.R1, 16, asm.DWord), // ret
			asm.Mov.Imm(asm.R7, 0),
			asm.JSLT.Imm(asm.R6, 0, "bucket"),
			asm.Mov.Imm(asm.R7, 1),
			asm.JEq.Imm(asm.R6, 0, "bucket"),
			asm.Mov.Imm(asm.R7, 2),
		}
		steps := []int32{32, 16, 8, 4, 2, 1}
		for i, s := range steps {
			// Each step's "no bit this high" jump goes to the next step's first instruction.
			skip := "bucket"
			if i+1 < len(steps) {
				skip = fmt.Sprintf("s%d", steps[i+1])
			}
			f.insns = append(f.insns,
				asm.Mov.Reg(asm.R1, asm.R6).WithSymbol(fmt.Sprintf("s%d", s)),
				asm.RSh.Imm(asm.R1, s),
				asm.JEq.Imm(asm.R1, 0, skip),
				asm.Mov.Reg(asm.R6, asm.R1),
				asm.Add.Imm(asm.R7, s),
			)
		}
		f.insns = append(f.insns, asm.StoreMem(asm.RFP, -4, asm.R7, asm.Word).WithSymbol("bucket"))
		f.insns = append(f.insns, incPerCPUArray(m, -4, "out")...)
		f.insns = append(f.insns, exit0...)
		f.attach = tracepoint("syscalls", "sys_exit_read")
	case "comm-filter", "printf":
		filter, err := commFilter(comm, "out")
		if err != nil {
			return fail(err)
		}
		f.insns = filter
		f.attach = tracepoint("syscalls", "sys_enter_getpid")
		if name == "comm-filter" {
			// @ = count(): slot 0 of a per-CPU array.
			m, err := perCPUArray("floor_cnt", 1)
			if err != nil {
				return fail(err)
			}
			f.maps, f.total = append(f.maps, m), m
			f.insns = append(f.insns, asm.StoreImm(asm.RFP, -20, 0, asm.Word))
			f.insns = append(f.insns, incPerCPUArray(m, -20, "out")...)
		} else {
			// printf("E %d\n", tid): reserve 8 bytes, store the tid, submit.
			rb, err := ebpf.NewMap(&ebpf.MapSpec{Name: "floor_ring", Type: ebpf.RingBuf, MaxEntries: 1 << 22})
			if err != nil {
				return fail(err)
			}
			f.maps, f.ring = append(f.maps, rb), rb
			f.insns = append(f.insns,
				asm.FnGetCurrentPidTgid.Call(),
				asm.Mov.Reg(asm.R6, asm.R0),
				asm.LoadMapPtr(asm.R1, rb.FD()),
				asm.Mov.Imm(asm.R2, 8),
				asm.Mov.Imm(asm.R3, 0),
				asm.FnRingbufReserve.Call(),
				asm.JEq.Imm(asm.R0, 0, "out"),
				asm.StoreMem(asm.R0, 0, asm.R6, asm.Word), // tid: the low half
				asm.Mov.Reg(asm.R1, asm.R0),
				asm.Mov.Imm(asm.R2, 0),
				asm.FnRingbufSubmit.Call(),
			)
		}
		f.insns = append(f.insns, exit0...)
	case "uprobe":
		m, err := perCPUArray("floor_cnt", 1)
		if err != nil {
			return fail(err)
		}
		f.maps, f.total, f.typ = append(f.maps, m), m, ebpf.Kprobe
		f.insns = asm.Instructions{asm.StoreImm(asm.RFP, -4, 0, asm.Word)}
		f.insns = append(f.insns, incPerCPUArray(m, -4, "out")...)
		f.insns = append(f.insns, exit0...)
		f.attach = func(p *ebpf.Program) (link.Link, error) {
			ex, err := link.OpenExecutable(path)
			if err != nil {
				return nil, err
			}
			return ex.Uprobe("target", p, nil)
		}
	default:
		return nil, fmt.Errorf("no floor program for %q", name)
	}
	return f, nil
}

// runFloor is the floor process: load, attach, announce, serve until SIGINT.
func runFloor(name string) error {
	f, err := buildFloor(name, os.Getenv(floorCommEnv), os.Getenv(floorPathEnv))
	if err != nil {
		return err
	}
	defer f.close()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "floor", Type: f.typ, License: "GPL", Instructions: f.insns})
	if err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	defer prog.Close()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	l, err := f.attach(prog)
	if err != nil {
		return fmt.Errorf("attach %s: %w", name, err)
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	done := make(chan struct{})
	if f.ring != nil {
		rd, err := ringbuf.NewReader(f.ring)
		if err != nil {
			l.Close()
			return err
		}
		go func() {
			defer close(done)
			var rec ringbuf.Record
			for {
				if err := rd.ReadInto(&rec); err != nil {
					out.Flush()
					if !errors.Is(err, os.ErrClosed) {
						fmt.Fprintln(os.Stderr, "floor: ring:", err)
					}
					return
				}
				fmt.Fprintf(out, "E %d\n", binary.LittleEndian.Uint32(rec.RawSample))
				if rd.AvailableBytes() == 0 {
					out.Flush()
				}
			}
		}()
		defer func() { rd.Close(); <-done }()
	}
	fmt.Println(notifyAttached)
	<-sig
	l.Close()
	if f.total != nil {
		var per []uint64
		if err := f.total.Lookup(uint32(0), &per); err == nil {
			var n uint64
			for _, v := range per {
				n += v
			}
			fmt.Fprintf(out, "@: %d\n", n)
		}
	}
	return out.Flush()
}

// floorTool is the floor as a tool: this binary, re-executed.
func floorTool() *Tool {
	t := &Tool{Name: "floor", Floor: true}
	t.Path, t.Err = os.Executable()
	return t
}

// floorCmdEnv is the environment a floor run of sc gets.
func floorCmdEnv(sc *Script) []string {
	env := []string{floorEnv + "=" + sc.Name}
	if w := sc.Workload; w != nil {
		env = append(env, floorCommEnv+"="+w.Comm(), floorPathEnv+"="+w.Path)
	}
	return env
}
