package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"github.com/gotrace/gotrace/lang"
)

// iter:NAME[:PIN] probes are BPF iterators (Linux 5.8): a TRACING program
// of attach type TRACE_ITER bound to the kernel's bpf_iter_NAME target.
// Attaching makes an iterator link; reading an iterator opened from it
// runs the program once per object (task, task and open file, task and
// memory mapping ...) until the iterator's end, so an iter probe fires
// exactly once per object and the run ends after the last (as bpftrace
// does). printf writes to the iterator's seq file (bpf_seq_printf, see
// stdlib's genSeqPrintf), which is read to its end and printed as
// printf's output (a JSON printf record with -f json).
// iter:NAME:PIN pins the link under /sys/fs/bpf instead (`cat` of the pin
// runs it) and does not run it.

type iterProvider struct{}

func init() { register(lang.ProbeIter, iterProvider{}) }

// BPFFS is where iter:NAME:PIN pins a relative PIN.
const BPFFS = "/sys/fs/bpf"

func (iterProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	if ap.Func == "" || strings.ContainsAny(ap.Func, "*?[") {
		return nil, fmt.Errorf("%s: iter probes name one iterator (iter:task, iter:task_file, iter:task_vma ...), without wildcards", apName(ap))
	}
	if err := haveIter(ap.Func); err != nil {
		return nil, fmt.Errorf("%s: %w", apName(ap), err)
	}
	return []*Probe{{AP: ap, Name: "iter:" + ap.Func, Func: ap.Func, Target: ap.Target}}, nil
}

// haveIter checks the kernel's BTF names the iterator target
// bpf_iter_NAME (the kernel's registered iterators: task, task_file,
// task_vma, bpf_map, tcp ...).
func haveIter(name string) error {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return fmt.Errorf("iter probes need the kernel's BTF: %w", err)
	}
	var fn *btf.Func
	if err := spec.TypeByName("bpf_iter_"+name, &fn); err != nil {
		return fmt.Errorf("the kernel has no iterator %q (no bpf_iter_%s in its BTF; BPF iterators need Linux 5.8, task_vma 5.12)", name, name)
	}
	return nil
}

func (iterProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	var out []io.Closer
	for _, p := range probes {
		l, err := link.AttachIter(link.IterOptions{Program: prog})
		if err != nil {
			return out, fmt.Errorf("attach iterator %s: %w", p.Func, err)
		}
		it := &iterLink{Iter: l, name: p.Name}
		out = append(out, it)
		if p.Target != "" {
			path := p.Target
			if !filepath.IsAbs(path) {
				path = filepath.Join(BPFFS, path)
			}
			if err := l.Pin(path); err != nil {
				return out, fmt.Errorf("pin iterator %s at %s: %w", p.Func, path, err)
			}
			it.pinned = path
		}
	}
	return out, nil
}

// iterLink is an attached iterator; pinned is its pin, if any.
type iterLink struct {
	*link.Iter
	name   string
	pinned string
}

func (it *iterLink) Close() error {
	// A pinned iterator stays (the pin holds the link).
	return it.Iter.Close()
}

// iters are the attached iterators, in attach order.
func (l *Loaded) iters() []*iterLink {
	if l.att == nil {
		return nil
	}
	var out []*iterLink
	for _, c := range l.att.closers {
		if it, ok := c.(*iterLink); ok {
			out = append(out, it)
		}
	}
	return out
}

// RunIters runs every attached, unpinned iterator to its end, handing
// what it wrote to its seq file (printf's output) to out; a pinned one is
// announced instead.
func (l *Loaded) RunIters(out func(string) error) error {
	for _, it := range l.iters() {
		if it.pinned != "" {
			if err := out(fmt.Sprintf("Program pinned to %s\n", it.pinned)); err != nil {
				return err
			}
			continue
		}
		rd, err := it.Open()
		if err != nil {
			return fmt.Errorf("run %s: %w", it.name, err)
		}
		b, err := io.ReadAll(rd)
		rd.Close()
		if err != nil && !errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("run %s: read the iterator: %w", it.name, err)
		}
		if len(b) > 0 {
			if err := out(string(b)); err != nil {
				return err
			}
		}
	}
	return nil
}

// onlyIters reports whether every attached probe of pl is an iterator
// (BEGIN/END aside): once they ran to their end nothing can fire.
func (pl *plan) onlyIters() bool {
	if len(pl.groups) == 0 {
		return false
	}
	for _, g := range pl.groups {
		if g.ap.Provider != lang.ProbeIter {
			return false
		}
	}
	return true
}
