// Command mkfixture writes the layout package's test fixtures from the
// running kernel's BTF:
//
//	mkfixture -btf ../../testdata/vmlinux-subset.btf
//	mkfixture -header ../../testdata/kernel_structs.h -structs-btf ../../testdata/kernel_structs.btf struct1 struct2 ...
//
// The BTF fixture holds a few real types, with pointers to types outside
// the set turned into forward declarations (task_struct is cut down to
// chosen members at their real offsets), so offline tests need no kernel.
// The header is C text for the named structs and what they embed by value,
// printed from BTF (pointers as "struct x *" or "void *"; explicit padding
// where the kernel's source had alignment attributes BTF does not record);
// -structs-btf writes those structs' BTF, which the header must lay out to
// (TestGoldenKernelStructs), from the same kernel.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/cilium/ebpf/btf"

	"github.com/gotrace/gotrace/ktypes/internal/btfdump"
)

func main() {
	btfOut := flag.String("btf", "", "write a BTF fixture here")
	hdrOut := flag.String("header", "", "write C declarations of the named structs here")
	structsOut := flag.String("structs-btf", "", "write the named structs' BTF here")
	flag.Parse()
	spec, err := btf.LoadSpec("/sys/kernel/btf/vmlinux")
	if err != nil {
		log.Fatal(err)
	}
	if *btfOut != "" {
		if err := writeFixture(spec, *btfOut); err != nil {
			log.Fatal(err)
		}
	}
	if *hdrOut != "" {
		h, err := btfdump.Header(spec, flag.Args())
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(*hdrOut, []byte(h), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if *structsOut != "" {
		raw, err := btfdump.Structs(spec, flag.Args())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", *structsOut, len(raw))
		if err := os.WriteFile(*structsOut, raw, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// --- BTF fixture ---

var keepStructs = []string{"list_head", "sock_common", "qstr", "path", "callback_head", "rb_node"}
var taskMembers = []string{"__state", "flags", "prio", "pid", "tgid", "real_parent", "parent", "comm", "mm", "cred"}

func one[T btf.Type](spec *btf.Spec, name string) T {
	var t T
	if err := spec.TypeByName(name, &t); err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return t
}

func writeFixture(spec *btf.Spec, out string) error {
	tr := &btfdump.Trimmer{Keep: map[string]btf.Type{}, Memo: map[btf.Type]btf.Type{}}
	// task_struct, cut down: the chosen members at their real offsets.
	task := one[*btf.Struct](spec, "task_struct")
	small := &btf.Struct{Name: "task_struct", Size: task.Size}
	tr.Keep["struct task_struct"] = small
	var roots []btf.Type
	for _, n := range keepStructs {
		s := one[*btf.Struct](spec, n)
		c := &btf.Struct{Name: s.Name, Size: s.Size}
		tr.Keep["struct "+n] = c
		defer func(s *btf.Struct) {}(s)
	}
	for _, n := range keepStructs {
		s := one[*btf.Struct](spec, n)
		c := tr.Keep["struct "+n].(*btf.Struct)
		tr.Memo[s] = c
		for _, m := range s.Members {
			m.Type = tr.Trim(m.Type)
			c.Members = append(c.Members, m)
		}
		roots = append(roots, c)
	}
	want := map[string]bool{}
	for _, n := range taskMembers {
		want[n] = true
	}
	for _, m := range task.Members {
		if want[m.Name] {
			m.Type = tr.Trim(m.Type)
			small.Members = append(small.Members, m)
		}
	}
	roots = append(roots, small)
	for _, n := range []string{"pid_t", "u32", "__u64", "umode_t"} {
		roots = append(roots, tr.Trim(one[*btf.Typedef](spec, n)))
	}
	for _, n := range []string{"pid_type", "sock_type"} {
		if e, err := findEnum(spec, n); err == nil {
			roots = append(roots, e)
		}
	}
	for _, n := range []string{"vfs_read", "do_sys_openat2"} {
		roots = append(roots, tr.Trim(one[*btf.Func](spec, n)))
	}
	roots = append(roots, tr.Trim(one[*btf.Typedef](spec, "btf_trace_sched_switch")))
	b, err := btf.NewBuilder(roots, nil)
	if err != nil {
		return err
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", out, len(raw))
	return os.WriteFile(out, raw, 0o644)
}

func findEnum(spec *btf.Spec, name string) (*btf.Enum, error) {
	var e *btf.Enum
	err := spec.TypeByName(name, &e)
	return e, err
}
