package types

// WordUse says where KindWord's word goes: bpftrace names a value's type
// one way in the messages about an operand (a condition, a ternary, an
// index) and another in builtins' "(%s provided)" argument messages.
type WordUse int

const (
	// AsOperand: "integer", "string", else the kind's name ("pointer",
	// "ctx", "tuple", "ksym", "invalid" ...).
	AsOperand WordUse = iota
	// AsArg: as AsOperand, but pointers and ctx are "integer" (bpftrace
	// 0.17 calls pointers integers there), an invalid type "none", and
	// the values that print as text (symbols, stacks, timestamps ...)
	// "string".
	AsArg
)

// KindWord is bpftrace's one-word name of t's type in messages
// ("integer", "string", "tuple" ...); a nil type is "none".
func KindWord(t *Type, use WordUse) string {
	if t == nil {
		return "none"
	}
	switch t.Kind {
	case Int, Bool, Enum:
		return "integer"
	case String:
		return "string"
	}
	if use == AsArg {
		switch {
		case t.Kind == Pointer || t.Kind == Ctx:
			return "integer"
		case t.Kind == Invalid || t.Kind == None:
			return "none"
		case t.PrintsAsText():
			return "string"
		}
	}
	return t.Kind.String()
}

// PrintsAsText reports whether values of t print as text (printf's %s):
// strings, symbols, stacks, user names, addresses, timestamps ...
func (t *Type) PrintsAsText() bool {
	switch t.Kind {
	case String, Ksym, Usym, Probe, Username, Stack,
		Inet, Timestamp, MacAddr, CgroupPath, Strerror:
		return true
	}
	return false
}
