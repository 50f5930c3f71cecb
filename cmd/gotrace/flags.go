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
	flamegraph  string // --flamegraph FILE.svg
	explain     bool   // `gotrace explain ...`
	compat      compat.Version
	compatSet   bool   // --compat given (it wins over GOTRACE_COMPAT)
	pidStr      string // -p/--pid as given: validated by checkPid once --compat is known

	// bpftrace 0.26's options.
	mode        string   // --mode (--test, --bench, --fmt): "" or one of modes
	probeFilter string   // --probe-filter REGEX
	traceable   string   // --traceable-functions FILE
	debuginfo   []string // --debuginfo DIR[:DIR]
	noFeature   []string // --no-feature FEATURE[,FEATURE]
	namedParams []string // program options after "--": "name" or "name=value"
	debugStages []string // -d STAGE / --debug STAGE (0.26), beside 0.17's bare -d
	info        bool     // --info: what the system offers, then exit
}

// modes are the values of bpftrace 0.26's --mode.
var modes = []string{"codegen", "compiler-bench", "bench", "test", "format"}

// features are the values of bpftrace 0.26's --no-feature.
var features = []string{"kprobe_multi", "kprobe_session", "uprobe_multi"}

// maxPID is the kernel's PID_MAX_LIMIT on 64-bit machines; bpftrace checks
// -p against it.
const maxPID = 4194304

// usageError is a command-line mistake: its message is printed, then the
// usage text, and gotrace exits 1.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

const usage = `USAGE:
    gotrace [options] filename [args...]
    gotrace [options] - <stdin input>
    gotrace [options] -e 'program' [args...]
    gotrace explain [options] filename|-e 'program'
    use -- after filename/-e 'program' for named program options (getopt)
    gotrace --help builtins     every builtin variable and function

OPTIONS:
    -e 'program'   execute this program (the last -e wins)
    -l, --list [search|filename]
                   list probes (wildcards allowed) or the probes of a program
    -v, --verbose  verbose messages (with -l: probe arguments; at exit: hits and cost per probe)
    -h, --help     show this help message (--help builtins: the builtin reference)
    -V, --version  print the version
    --info         print what this system offers tracing (kernel helpers, maps, probe types)

    -p, --pid PID  limit uprobes and USDT probes to process PID, find libraries in
                   its mappings, and exit when it exits; other probes still see
                   every process (filter with /pid == PID/)
    -c, --cmd CMD  run CMD, trace it, and exit when it exits
    --usdt-file-activation
                   activate USDT semaphores by file path (always done)

    -o, --output FILE
                   redirect output to FILE
    -f FORMAT      output format ('text', 'json', 'folded': maps as folded stacks,
                   "root;...;leaf count", for flame graph tools)
    --flamegraph FILE.svg
                   at exit, also draw the stack-keyed maps (kstack, ustack) as an
                   interactive SVG flame graph in FILE.svg
    -B MODE        output buffering mode ('line', 'full', 'none')
    -q, --quiet    keep messages quiet
    -k, --warnings emit a warning when a bpf helper returns an error
    --no-warnings  disable all warning messages (and warnf())

    -I DIR         add the directory to the include search path
    --include FILE add an #include file before the script
    --debuginfo DIR[:DIR]
                   more directories holding stripped binaries' debug info
    --traceable-functions FILE
                   the kernel functions kprobes may attach to, one a line

    --unsafe       allow unsafe builtin functions (system, signal, override, write_user)
    --no-feature FEATURE[,FEATURE]
                   do not use detected features ('kprobe_multi', 'uprobe_multi', 'kprobe_session')
    --metrics [HOST:]PORT serve the script's maps as Prometheus metrics (no host: 127.0.0.1;
                   anyone who can connect reads every map)
    --compat VER   follow bpftrace VER where releases differ: 0.26 (default) or 0.17

DEVELOPER OPTIONS:
    --mode MODE    'bench': run the bench:NAME probes and print their times;
                   'format': print the script formatted (to -o FILE if given)
                   ('codegen', 'compiler-bench', 'test': not in gotrace yet)
    --bench, --test, --fmt
                   --mode bench, --mode test, --mode format
    --probe-filter REGEX
                   only run the probes whose name matches REGEX

TROUBLESHOOTING OPTIONS:
    -d, --debug [STAGE]
                   (dry run) print the AST, the typed program and the BPF instructions
                   (STAGE: 'all', 'ast', 'types', 'codegen', 'codegen-opt', 'libbpf', 'verifier')
    -dd            (dry run) as -d, more verbose
    --dry-run      compile and load into the verifier, attach nothing

ENVIRONMENT (each as BPFTRACE_NAME or GOTRACE_NAME; bpftrace 0.17's names also accepted):
    BPFTRACE_MAX_STRLEN        [default: 64] bytes per str() (0.17: BPFTRACE_STRLEN)
    BPFTRACE_MAX_MAP_KEYS      [default: 4096] max keys in a map (0.17: BPFTRACE_MAP_KEYS_MAX)
    BPFTRACE_MAX_PROBES        [default: 512] max number of probes
    BPFTRACE_MAX_CAT_BYTES     [default: 10240] bytes cat() prints (0.17: BPFTRACE_CAT_BYTES_MAX)
    BPFTRACE_PERF_RB_PAGES     [default: 64] pages per CPU for the event ring buffer (one ring for all CPUs, at least 4 MiB unless set)
    BPFTRACE_NO_CPP_DEMANGLE   [default: 0] disable C++ symbol demangling
    GOTRACE_STACK_MAP_ENTRIES  [default: 4096] stacks each stack map holds
    GOTRACE_SYSCALL_TRACEPOINTS [default: auto] raw|perf: how syscalls:* tracepoints attach
    GOTRACE_STACK_MODE         [default: bpftrace] kstack/ustack print mode (bpftrace, perf, raw); ignored with --compat 0.17
    GOTRACE_COMPAT             [default: 0.26] as --compat (GOTRACE_ spelling only)
    GOTRACE_CAT_BYTES_MAX      [default: 10240] bytes cat() reads and prints at most

EXAMPLES:
gotrace -l '*sleep*'
    list probes containing "sleep"
gotrace -e 'tracepoint:syscalls:sys_enter_openat { printf("%s %s\n", comm, str(args.filename)); }'
    trace files opened, by process name
gotrace -e 'tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }'
    count syscalls by process name
gotrace -e 'begin { print(getopt("n", 10)); }' -- --n=3
    a named program option
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
			case "flamegraph":
				c.flamegraph, err = getVal()
			case "pid":
				c.pidStr, err = getVal()
				c.hasPid = err == nil
			case "output":
				c.output, err = getVal()
			case "quiet":
				c.quiet = true
			case "verbose":
				c.verbose = true
			case "list":
				c.list = true
			case "cmd":
				c.cmd, err = getVal()
			case "warnings":
				c.helperCheck++
			case "debug":
				var v string
				if v, err = getVal(); err == nil {
					err = c.addDebugStages(v)
				}
			case "mode":
				var v string
				if v, err = getVal(); err == nil {
					if !contains(modes, v) {
						return nil, fmt.Errorf("USAGE: --mode can only be 'codegen', 'compiler-bench', 'bench', 'test' or 'format'.")
					}
					c.mode = v
				}
			case "test", "bench", "fmt":
				if c.mode != "" {
					return nil, fmt.Errorf("USAGE: --%s conflicts with existing --mode", name)
				}
				c.mode = map[string]string{"test": "test", "bench": "bench", "fmt": "format"}[name]
			case "probe-filter":
				c.probeFilter, err = getVal()
			case "traceable-functions":
				c.traceable, err = getVal()
			case "debuginfo":
				var v string
				if v, err = getVal(); err == nil {
					for _, d := range strings.Split(v, ":") {
						if d != "" {
							c.debuginfo = append(c.debuginfo, d)
						}
					}
				}
			case "no-feature":
				var v string
				if v, err = getVal(); err == nil {
					for _, f := range strings.Split(v, ",") {
						if !contains(features, f) {
							return nil, fmt.Errorf("USAGE: --no-feature can only have values 'kprobe_multi,kprobe_session,uprobe_multi'.")
						}
						c.noFeature = append(c.noFeature, f)
					}
				}
			case "btf":
				// bpftrace 0.26 accepts and ignores it (BTF is always used).
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
				// bpftrace 0.26's -d STAGE[,STAGE], beside 0.17's bare -d/-dd: a
				// value is taken when it names stages.
				if j+1 == len(cluster) && i+1 < len(args) && isStageList(args[i+1]) {
					i++
					err = c.addDebugStages(args[i])
				} else if j+1 < len(cluster) && isStageList(cluster[j+1:]) {
					err = c.addDebugStages(cluster[j+1:])
					j = len(cluster)
				} else {
					c.debug++
				}
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
				c.pidStr, err = value()
				c.hasPid = err == nil
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
	// After "--": bpftrace 0.26's named program options (--name[=value]),
	// and positional parameters.
	for _, a := range args[i:] {
		if name, ok := strings.CutPrefix(a, "--"); ok && name != "" {
			c.namedParams = append(c.namedParams, name)
			continue
		}
		rest = append(rest, a)
	}
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
	case "text", "json", "folded":
	default:
		return nil, fmt.Errorf("Invalid output format \"%s\"\nValid formats: 'text', 'json', 'folded'", c.format)
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

// envNames are the settings bpftrace 0.26 renamed: its name first (as
// GOTRACE_ or BPFTRACE_), then bpftrace 0.17's, both accepted.
var envNames = map[string][]string{
	"STRLEN":        {"MAX_STRLEN", "STRLEN"},
	"MAP_KEYS_MAX":  {"MAX_MAP_KEYS", "MAP_KEYS_MAX"},
	"CAT_BYTES_MAX": {"MAX_CAT_BYTES", "CAT_BYTES_MAX"},
}

// envInt reads a numeric GOTRACE_/BPFTRACE_ setting, with def when unset;
// a setting bpftrace 0.26 renamed is read under both names (envNames).
func envInt(name string, def int) (int, error) {
	names := envNames[name]
	if names == nil {
		names = []string{name}
	}
	var v string
	var ok bool
	for _, n := range names {
		if v, ok = env(n); ok {
			name = n
			break
		}
	}
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 31)
	if err != nil {
		return 0, fmt.Errorf("env var GOTRACE_%s (or BPFTRACE_%s) must be a non-negative integer, got '%s'", name, name, v)
	}
	return int(n), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// debugStageNames are the stages bpftrace 0.26's -d STAGE prints.
var debugStageNames = []string{"ast", "types", "codegen", "codegen-opt", "libbpf", "verifier", "parse", "dis"}

// addDebugStages reads bpftrace 0.26's -d/--debug STAGE[,STAGE] ("all" for
// every stage). gotrace prints its stages for any of them, as -d does.
func (c *config) addDebugStages(v string) error {
	for _, st := range strings.Split(v, ",") {
		if st == "" {
			continue
		}
		if st != "all" && !contains(debugStageNames, st) {
			return fmt.Errorf("USAGE: invalid option for -d: %s", st)
		}
		c.debugStages = append(c.debugStages, st)
	}
	c.debug++
	return nil
}

// checkPid validates -p/--pid with the message of the bpftrace release
// followed (they differ: compat.Version.PidParseMessages).
func checkPid(c *config) error {
	if !c.hasPid {
		return nil
	}
	v := c.pidStr
	if c.compat.PidParseMessages() {
		digits := 0
		for digits < len(v) && v[digits] >= '0' && v[digits] <= '9' {
			digits++
		}
		switch {
		case digits == 0:
			return fmt.Errorf("Failed to parse pid: invalid integer: %s", v)
		case digits < len(v):
			return fmt.Errorf("Failed to parse pid: invalid trailing bytes: %s", v)
		}
		pid, err := strconv.ParseUint(v, 10, 64)
		if err != nil || pid > 0x400000 {
			return fmt.Errorf("Failed to parse pid: pid '%s' out of valid pid range [1,4194304]", v)
		}
		c.pid = int(pid)
		return nil
	}
	if v == "" { // an empty -p is no pid, as in bpftrace 0.17
		c.hasPid = false
		return nil
	}
	pid, err := parsePID(v)
	if err != nil {
		return err
	}
	c.pid = pid
	return nil
}

// isStageList reports whether v is meant as a -d STAGE value ("ast", "all",
// "ast,types"): its first stage is one (addDebugStages checks the others).
func isStageList(v string) bool {
	first, _, _ := strings.Cut(v, ",")
	return first == "all" || contains(debugStageNames, first)
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
