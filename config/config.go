// Package config holds the settings a script's `config = { ... }` block
// (bpftrace 0.20) sets, and resolves them in one place against the
// BPFTRACE_* environment variables and the command line, with bpftrace's
// precedence: a default, overridden by the script's config block,
// overridden by the environment, overridden by a command-line flag.
//
// The environment is read by cmd/gotrace only and passed in (Env).
package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Kind is how a setting's value is written.
type Kind int

const (
	Int    Kind = iota // a non-negative integer
	Bool               // 0/1, true/false
	String             // any text
	Enum               // one of Key.Values
)

// Key is one setting bpftrace 0.26.1 knows.
type Key struct {
	Name    string
	Kind    Kind
	Values  []string // Enum's values
	Default string
	// Env is the environment variable that sets it, when not
	// BPFTRACE_<NAME>; Invert: the variable sets the opposite boolean
	// (BPFTRACE_NO_CPP_DEMANGLE).
	Env    string
	Invert bool
	// Max bounds an Int (0: none): what gotrace can hold (cmd/gotrace's
	// limits of the same variables).
	Max uint64
	// Used says what gotrace does with it; "" for a key it accepts and
	// ignores (README lists them).
	Used string
}

var unstable = []string{"error", "warn", "enable"}

// Keys are the settings of bpftrace 0.26.1, by name.
var Keys = map[string]*Key{}

func init() {
	for _, k := range []*Key{
		{Name: "cache_user_symbols", Kind: Enum, Values: []string{"per_program", "per_pid", "none"}, Default: "per_program"},
		{Name: "cpp_demangle", Kind: Bool, Default: "1", Env: "BPFTRACE_NO_CPP_DEMANGLE", Invert: true, Used: "C++ symbol demangling"},
		{Name: "lazy_symbolication", Kind: Bool, Default: "0"},
		{Name: "license", Kind: String, Default: "GPL", Used: "the programs' license (a non-GPL-compatible one is refused)"},
		{Name: "log_size", Kind: Int, Default: "1000000"},
		{Name: "max_bpf_progs", Kind: Int, Default: "1024"},
		{Name: "max_cat_bytes", Kind: Int, Default: "10240", Env: "BPFTRACE_CAT_BYTES_MAX"},
		{Name: "max_map_keys", Kind: Int, Default: "4096", Max: 1 << 24, Used: "the size of maps without a declaration"},
		{Name: "max_probes", Kind: Int, Default: "1024"},
		{Name: "max_strlen", Kind: Int, Default: "64", Env: "BPFTRACE_STRLEN", Max: 1 << 14, Used: "the bytes str() reads"},
		{Name: "max_type_res_iterations", Kind: Int, Default: "0"},
		{Name: "missing_probes", Kind: Enum, Values: []string{"ignore", "warn", "error"}, Default: "error"},
		{Name: "on_stack_limit", Kind: String, Default: "0"},
		{Name: "perf_rb_pages", Kind: Int, Default: "64"},
		{Name: "print_maps_on_exit", Kind: Bool, Default: "1", Used: "whether the maps print at exit"},
		{Name: "show_debug_info", Kind: Bool, Default: "1"},
		{Name: "stack_mode", Kind: Enum, Values: []string{"bpftrace", "perf", "raw", "build_id"}, Default: "bpftrace"},
		{Name: "str_trunc_trailer", Kind: String, Default: "..", Used: "what follows a string str() cut"},
		{Name: "symbol_source", Kind: Enum, Values: []string{"dwarf", "symbol_table"}, Default: "dwarf"},
		{Name: "use_blazesym", Kind: Bool, Default: "1"},
		{Name: "unstable_addr", Kind: Enum, Values: unstable, Default: "warn"},
		{Name: "unstable_dw_ustack", Kind: Enum, Values: unstable, Default: "warn"},
		{Name: "unstable_import", Kind: Enum, Values: unstable, Default: "warn"},
		{Name: "unstable_macro", Kind: Enum, Values: unstable, Default: "warn"},
		{Name: "unstable_map_decl", Kind: Enum, Values: unstable, Default: "warn"},
		{Name: "unstable_tseries", Kind: Enum, Values: unstable, Default: "warn"},
		{Name: "unstable_typeinfo", Kind: Enum, Values: unstable, Default: "warn"},
	} {
		Keys[k.Name] = k
	}
}

// EnvName is the environment variable of key k.
func (k *Key) EnvName() string {
	if k.Env != "" {
		return k.Env
	}
	return "BPFTRACE_" + strings.ToUpper(k.Name)
}

// Source is where a setting's value came from.
type Source int

const (
	Default Source = iota
	Script
	Env
	Flag
)

// Item is one `key = value` of a script's config block.
type Item struct {
	Key, Value string
	Span       any // the caller's place, handed back in errors
	// KeySpan is the key's own place (nil: Span), where an error about
	// the key (unknown, or only an environment variable) is put, as
	// bpftrace 0.26 puts it.
	KeySpan any
}

// envOnly are the settings bpftrace 0.26 takes only from the environment
// (BPFTRACE_DEBUG_OUTPUT); a config block naming one is an error.
var envOnly = map[string]bool{"debug_output": true}

// Error is a bad config item (Span is the Item's) or variable (Span nil).
type Error struct {
	Span any
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Settings are the resolved settings.
type Settings struct {
	vals map[string]string
	src  map[string]Source
}

// Resolve applies the script's items, then env (variable name to value),
// then flags (key name to value) over the defaults.
func Resolve(items []Item, env map[string]string, flags map[string]string) (*Settings, []*Error) {
	s := &Settings{vals: map[string]string{}, src: map[string]Source{}}
	for n, k := range Keys {
		s.vals[n] = k.Default
	}
	var errs []*Error
	for _, it := range items {
		keySpan := it.KeySpan
		if keySpan == nil {
			keySpan = it.Span
		}
		if envOnly[it.Key] {
			errs = append(errs, &Error{Span: keySpan, Msg: fmt.Sprintf("%s can only be set as an environment variable", it.Key)})
			continue
		}
		k := lookup(it.Key)
		if k == nil {
			errs = append(errs, &Error{Span: keySpan, Msg: fmt.Sprintf("Unrecognized config variable: %s", it.Key)})
			continue
		}
		v, err := k.parse(it.Value)
		if err != nil {
			errs = append(errs, &Error{Span: it.Span, Msg: err.Error()})
			continue
		}
		s.vals[k.Name], s.src[k.Name] = v, Script
	}
	names := make([]string, 0, len(env))
	for n := range env {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, k := range Keys {
			if k.EnvName() != n && "BPFTRACE_"+strings.ToUpper(k.Name) != n {
				continue
			}
			raw := env[n]
			if k.Invert {
				raw = map[bool]string{true: "0", false: "1"}[raw == "1" || raw == "true"]
			}
			v, err := k.parse(raw)
			if err != nil {
				errs = append(errs, &Error{Msg: fmt.Sprintf("env var %s: %v", n, err)})
				continue
			}
			s.vals[k.Name], s.src[k.Name] = v, Env
		}
	}
	for n, raw := range flags {
		if k := Keys[n]; k != nil {
			if v, err := k.parse(raw); err == nil {
				s.vals[n], s.src[n] = v, Flag
			} else {
				errs = append(errs, &Error{Msg: err.Error()})
			}
		}
	}
	return s, errs
}

// lookup finds a key by its name or as its BPFTRACE_ variable is spelled
// (a config block may say `BPFTRACE_STACK_MODE = raw`).
func lookup(name string) *Key {
	if k := Keys[name]; k != nil {
		return k
	}
	for _, k := range Keys {
		if name == k.EnvName() || name == "BPFTRACE_"+strings.ToUpper(k.Name) {
			return k
		}
	}
	return nil
}

// parse checks a value as k takes it and returns it normalised.
func (k *Key) parse(v string) (string, error) {
	switch k.Kind {
	case Int:
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return "", fmt.Errorf("Invalid value for %s: needs to be a non-negative integer", k.Name)
		}
		if k.Max > 0 && n > k.Max {
			return "", fmt.Errorf("Invalid value for %s: %d is more than gotrace's limit, %d", k.Name, n, k.Max)
		}
	case Bool:
		switch v {
		case "1", "true":
			return "1", nil
		case "0", "false":
			return "0", nil
		}
		return "", fmt.Errorf("Invalid value for %s: needs to be either true/false or 1/0", k.Name)
	case Enum:
		for _, x := range k.Values {
			// bpftrace takes the values in any case (PER_PROGRAM).
			if strings.EqualFold(v, x) {
				v = x
				return v, nil
			}
		}
		return "", fmt.Errorf("Invalid value for %s: valid values are %s", k.Name, strings.Join(k.Values, ", "))
	}
	return v, nil
}

// Get is a setting's value as text.
func (s *Settings) Get(name string) string { return s.vals[name] }

// Source is where a setting's value came from.
func (s *Settings) Source(name string) Source { return s.src[name] }

// Int is an Int setting's value.
func (s *Settings) Int(name string) int {
	n, _ := strconv.ParseUint(s.vals[name], 0, 64)
	return int(n)
}

// Bool is a Bool setting's value.
func (s *Settings) Bool(name string) bool { return s.vals[name] == "1" }

// EnvNames are the environment variables the settings read, for the
// caller to collect.
func EnvNames() []string {
	var out []string
	for _, k := range Keys {
		out = append(out, k.EnvName())
		if n := "BPFTRACE_" + strings.ToUpper(k.Name); n != k.EnvName() {
			out = append(out, n) // bpftrace 0.26's name (BPFTRACE_MAX_STRLEN)
		}
	}
	sort.Strings(out)
	return out
}

// GPLCompatible reports whether license is one the kernel takes as GPL
// compatible (its license_is_gpl_compatible): the helpers bpftrace's
// programs call are GPL-only.
func GPLCompatible(license string) bool {
	switch license {
	case "GPL", "GPL v2", "GPL and additional rights", "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL":
		return true
	}
	return false
}
