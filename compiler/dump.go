package compiler

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/asm"
)

// Dump prints the programs' instructions interleaved with the script lines
// they came from, then the maps and the event formats: what `gotrace -d`
// and `gotrace explain` show.
func (s *Spec) Dump() string {
	var b strings.Builder
	for _, p := range s.Programs {
		var aps []string
		for _, ap := range p.Attach {
			aps = append(aps, ap.Raw)
		}
		fmt.Fprintf(&b, "program %s %s", p.Name, p.Type)
		if p.AttachType != 0 {
			fmt.Fprintf(&b, " attach=%s to=%s", p.AttachType, p.AttachTo)
		}
		if p.RawSyscall != "" {
			fmt.Fprintf(&b, " on raw tracepoint %s", p.RawSyscall)
		}
		fmt.Fprintf(&b, " (%s): %d instructions\n", strings.Join(aps, ", "), len(p.Insns))
		dumpInsns(&b, p.Insns)
	}
	if len(s.Maps) > 0 {
		b.WriteString("maps:\n")
		for _, m := range s.Maps {
			fmt.Fprintf(&b, "  %-12s %s key=%d value=%d max=%d", m.Name, m.Type, m.KeySize, m.ValueSize, m.MaxEntries)
			if m.User != nil {
				fmt.Fprintf(&b, " %s", m.User.Name)
				if m.User.Key != nil {
					fmt.Fprintf(&b, "[%s]", m.User.Key)
				}
				fmt.Fprintf(&b, " %s", m.User.Value)
			}
			b.WriteString("\n")
		}
	}
	if len(s.Events) > 0 {
		b.WriteString("events:\n")
		for _, e := range s.Events {
			fmt.Fprintf(&b, "  %d %s", e.ID, e.Kind)
			if e.Format != "" {
				fmt.Fprintf(&b, " %q", e.Format)
			}
			if e.Map != "" {
				fmt.Fprintf(&b, " %s", e.Map)
			}
			if e.Args != nil && len(e.Args.Fields) > 0 {
				fmt.Fprintf(&b, " %s", e.Args)
			}
			b.WriteString("\n")
		}
	}
	if len(s.Probes) > 0 {
		fmt.Fprintf(&b, "probes: %s\n", strings.Join(s.Probes, ", "))
	}
	return b.String()
}

func dumpInsns(b *strings.Builder, insns asm.Instructions) {
	var last fmt.Stringer
	iter := insns.Iterate()
	for iter.Next() {
		ins := iter.Ins
		if src := ins.Source(); src != nil && src != last {
			fmt.Fprintf(b, "  ; %s\n", strings.TrimSpace(src.String()))
			last = src
		}
		if sym := ins.Symbol(); sym != "" {
			fmt.Fprintf(b, "%s:\n", sym)
		}
		fmt.Fprintf(b, "  %4d: %v\n", iter.Offset, *ins)
	}
}
