package output

import (
	"strconv"

	"github.com/gotrace/gotrace/lang/types"
)

// text026 is how bpftrace 0.26 prints a bool (true/false), a pointer (hex)
// and an enum value with a name (the name), where 0.17 prints integers;
// ok is false when v prints as an integer.
func (p *Printer) text026(v Value) (string, bool) {
	switch v.Kind() {
	case types.Bool:
		if !p.Compat.BoolWords() {
			return "", false
		}
		if v.Bits != 0 {
			return "true", true
		}
		return "false", true
	case types.Pointer, types.Ctx:
		if !p.Compat.PointerHex() {
			return "", false
		}
		return "0x" + strconv.FormatUint(v.Bits, 16), true
	case types.Enum:
		if !p.Compat.EnumNames() {
			return "", false
		}
		if name, ok := v.Type.Enumerators[v.Int()]; ok {
			return name, true
		}
	}
	return "", false
}

// jsonQuoted026 lists the kinds whose text bpftrace 0.17 writes bare in
// JSON (making the line invalid JSON) and 0.26 quotes: strftime (fixed
// in 0.22), cgroup_path (0.20), strerror and macaddr.
func jsonQuoted026(k types.Kind) bool {
	switch k {
	case types.Timestamp, types.CgroupPath, types.Strerror, types.MacAddr:
		return true
	}
	return false
}
