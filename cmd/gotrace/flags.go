package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// config is the parsed command line.
type config struct {
	program     string // -e
	file        string // script path, or "-" for stdin
	params      []string
	list        bool
	listPattern string
	pid         int
	hasPid      bool
	cmd         string // -c
	output      string // -o
	format      string // -f: text or json
	buffering   string // -B: line, full or none
	quiet       bool
	verbose     bool
	debug       int // -d, -dd
	dryRun      bool
	unsafe      bool
	helperCheck int // -k, -kk
	version     bool
	help        bool
	includeDirs []string
	includes    []string
	noWarnings  bool
	metrics     string
	explain     bool // `gotrace explain ...`
	compat      compat.Version
	compatSet   bool // --compat given (it wins over GOTRACE_COMPAT)
	info        bool // --info: what the system offers, then exit
}

// usageError is a command-line mistake: its message is printed, then the
// usage text, and gotrace exits 1.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

const usage = `USAGE:
    gotrace [options] filename [args...]
    gotrace [options] - <stdin input>
    gotrace [options] -e 'program' [args...]
    gotrace explain [options] filename|-e 'program'

OPTIONS:
    -B MODE        output buffering mode ('line', 'full', 'none')
    -f FORMAT      output format ('text', 'json')
    -o file        redirect output to file
    -e 'program'   execute this program
    -h, --help     show this help message
    -I DIR         add the directory to the include search path
    --include FILE add an #include file before the script
    -l [search]    list probes (wildcards allowed)
    -p PID         limit uprobes and USDT probes to process PID, find libraries in
                   its mappings, and exit when it exits; other probes still see
                   every process (filter with /pid == PID/)
    -c 'CMD'       run CMD, trace it, and exit when it exits
    --unsafe       allow unsafe builtin functions (system, signal, override)
    -q             keep messages quiet
    -k             emit a warning when a bpf helper returns an error
    -V, --version  print the version
    --info         print what this system offers tracing (kernel helpers, maps, probe types)
    --no-warnings  disable all warning messages
    --metrics ADDR serve the script's maps as Prometheus metrics on ADDR
    --compat VER   follow bpftrace VER where releases differ: 0.26 (default) or 0.17

TROUBLESHOOTING OPTIONS:
    -v             verbose messages (with -l: probe arguments; at exit: hits and cost per probe)
    -d             (dry run) print the AST, the typed program and the BPF instructions
    -dd            (dry run) as -d, more verbose
    --dry-run      compile and load into the verifier, attach nothing

ENVIRONMENT (each also accepted with the BPFTRACE_ prefix):
    GOTRACE_STRLEN             [default: 64] bytes per str()
    GOTRACE_MAP_KEYS_MAX       [default: 4096] max keys in a map
    GOTRACE_MAX_PROBES         [default: 512] max number of probes
    GOTRACE_PERF_RB_PAGES      [default: 64] pages per CPU for the event ring buffer
    GOTRACE_NO_CPP_DEMANGLE    [default: 0] disable C++ symbol demangling
    GOTRACE_STACK_MAP_ENTRIES  [default: 4096] stacks each stack map holds
    GOTRACE_SYSCALL_TRACEPOINTS [default: auto] raw|perf: how syscalls:* tracepoints attach
    GOTRACE_STACK_MODE         [default: bpftrace] kstack/ustack print mode (bpftrace, perf, raw); ignored with --compat 0.17
    GOTRACE_COMPAT             [default: 0.26] as --compat (GOTRACE_ spelling only)

EXAMPLES:
gotrace -l '*sleep*'
    list probes containing "sleep"
gotrace -e 'tracepoint:syscalls:sys_enter_openat { printf("%s %s\n", comm, str(args->filename)); }'
    trace files opened, by process name
gotrace -e 'tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }'
    count syscalls by process name
`

// parseArgs parses the command line as bpftrace does: options first (short
// options may be clustered, like -lv or -dd), then the script file (unless
// -e was given), then positional parameters. "--" ends the options.
func parseArgs(args []string) (*config, error) {
	c := &config{format: "text", buffering: ""}
	if len(args) > 0 && args[0] == "explain" {
		c.explain = true
		args = args[1:]
	}
	needArg := func(i *int, opt string) (string, error) {
		if *i+1 >= len(args) {
			return "", &usageError{fmt.Sprintf("option requires an argument -- '%s'", strings.TrimLeft(opt, "-"))}
		}
		*i++
		return args[*i], nil
	}
	// Options may come after the script and its parameters, as getopt
	// permutes them (`gotrace script.bt -c CMD`); "--" ends the options.
	var rest []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			getVal := func() (string, error) {
				if hasVal {
					return val, nil
				}
				return needArg(&i, name)
			}
			var err error
			switch name {
			case "help":
				c.help = true
			case "version":
				c.version = true
			case "unsafe":
				c.unsafe = true
			case "dry-run":
				c.dryRun = true
			case "no-warnings":
				c.noWarnings = true
			case "include":
				var v string
				v, err = getVal()
				c.includes = append(c.includes, v)
			case "metrics":
				c.metrics, err = getVal()
			case "compat":
				var v string
				if v, err = getVal(); err == nil {
					c.compat, err = compat.Parse(v)
					c.compatSet = true
				}
			case "info":
				c.info = true
			case "usdt-file-activation":
				// Accepted for bpftrace compatibility; semaphores are always
				// activated for the traced paths.
			default:
				return nil, &usageError{fmt.Sprintf("unrecognized option '--%s'", name)}
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		// A cluster of short options; one taking a value ends the cluster
		// (its value is the cluster's remainder or the next argument).
		cluster := a[1:]
		for j := 0; j < len(cluster); j++ {
			opt := cluster[j]
			value := func() (string, error) {
				if j+1 < len(cluster) {
					v := cluster[j+1:]
					j = len(cluster)
					return v, nil
				}
				return needArg(&i, string(opt))
			}
			var v string
			var err error
			switch opt {
			case 'h':
				c.help = true
			case 'V':
				c.version = true
			case 'q':
				c.quiet = true
			case 'v':
				c.verbose = true
			case 'd':
				c.debug++
			case 'k':
				c.helperCheck++
			case 'l':
				c.list = true
			case 'e':
				v, err = value()
				c.program = v
			case 'o':
				v, err = value()
				c.output = v
			case 'f':
				v, err = value()
				c.format = v
			case 'B':
				v, err = value()
				c.buffering = v
			case 'p':
				v, err = value()
				if err == nil && v != "" { // an empty -p is no pid, as in bpftrace
					pid, perr := parsePID(v)
					if perr != nil {
						return nil, perr
					}
					c.pid, c.hasPid = pid, true
				}
			case 'c':
				v, err = value()
				c.cmd = v
			case 'I':
				v, err = value()
				c.includeDirs = append(c.includeDirs, v)
			default:
				return nil, &usageError{fmt.Sprintf("invalid option -- '%c'", opt)}
			}
			if err != nil {
				return nil, err
			}
		}
	}
	rest = append(rest, args[i:]...)
	switch {
	case c.list:
		if c.program == "" && len(rest) > 0 {
			c.listPattern = rest[0]
			rest = rest[1:]
		}
	case c.program == "" && len(rest) > 0:
		c.file = rest[0]
		rest = rest[1:]
	}
	if len(rest) > 0 {
		c.params = rest
	}
	switch c.format {
	case "text", "json":
	default:
		return nil, fmt.Errorf("Invalid output format \"%s\"\nValid formats: 'text', 'json'", c.format)
	}
	switch c.buffering {
	case "", "line", "full", "none":
	default:
		return nil, fmt.Errorf("USAGE: -B must be either 'line', 'full', or 'none'.")
	}
	if c.cmd != "" && c.hasPid {
		return nil, fmt.Errorf("-p and -c are mutually exclusive")
	}
	return c, nil
}

// pidMax is the kernel's largest possible pid (PID_MAX_LIMIT on 64-bit),
// the range bpftrace checks -p against.
const pidMax = 4 * 1024 * 1024

// parsePID reads -p's value as bpftrace does (std::stol: leading white
// space and a sign allowed, the whole string a decimal number), then checks
// it against the range of pids.
func parsePID(v string) (int, error) {
	s := strings.TrimLeft(v, " \t\n\v\f\r")
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	if len(digits) == len(s)-1 || len(digits) == len(s) {
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return 0, fmt.Errorf("pid '%s' is not a valid decimal number", v)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("pid '%s' outside of integer range", v)
		}
		return 0, fmt.Errorf("pid '%s' is not a valid decimal number", v)
	}
	if n < 1 || n > pidMax {
		return 0, fmt.Errorf("pid '%s' out of valid pid range [1,%d]", v, pidMax)
	}
	return int(n), nil
}

// compatFromEnv applies GOTRACE_COMPAT when --compat was not given.
func compatFromEnv(c *config, lookup func(string) (string, bool)) error {
	if c.compatSet {
		return nil
	}
	v, ok := lookup("GOTRACE_COMPAT")
	if !ok {
		return nil
	}
	cv, err := compat.Parse(v)
	if err != nil {
		return fmt.Errorf("env var GOTRACE_COMPAT: %v", err)
	}
	c.compat = cv
	return nil
}

// env returns the value of GOTRACE_name, or else BPFTRACE_name.
func env(name string) (string, bool) {
	if v, ok := os.LookupEnv("GOTRACE_" + name); ok {
		return v, true
	}
	return os.LookupEnv("BPFTRACE_" + name)
}

// envInt reads a numeric GOTRACE_/BPFTRACE_ setting, with def when unset.
func envInt(name string, def int) (int, error) {
	v, ok := env(name)
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 31)
	if err != nil {
		return 0, fmt.Errorf("env var GOTRACE_%s (or BPFTRACE_%s) must be a non-negative integer, got '%s'", name, name, v)
	}
	return int(n), nil
}

// stackModeFromEnv reads GOTRACE_STACK_MODE (or BPFTRACE_STACK_MODE):
// kstack/ustack's print mode when a script names none. bpftrace 0.17
// ignores the variable, so 0.17 mode does too.
func stackModeFromEnv(c *config) (types.StackMode, error) {
	v, ok := env("STACK_MODE")
	if !ok || v == "" || !c.compat.StackModeFromEnv() {
		return types.StackBpftrace, nil
	}
	if m, ok := stdlib.StackModes[v]; ok {
		return m, nil
	}
	return 0, fmt.Errorf("env var GOTRACE_STACK_MODE (or BPFTRACE_STACK_MODE) must be 'bpftrace', 'perf' or 'raw', got '%s'", v)
}
