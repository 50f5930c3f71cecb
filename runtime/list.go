package runtime

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gotrace/gotrace/internal/priv"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
)

// List prints the probes matching pattern (bpftrace's -l): one full probe
// name per line; with verbose, a tracepoint's fields or a kernel
// function's arguments follow it, indented. An empty pattern lists every
// kernel probe type as bpftrace 0.17 does (hardware, kfunc when this kernel
// can run it, kprobe, software, tracepoint, in that order; return probes
// and aliases are not repeated). "uprobe:PATH:*" lists PATH's function
// symbols.
func List(w io.Writer, pattern string, verbose bool) error {
	return ListWith(w, ListOptions{Pattern: pattern, Verbose: verbose})
}

// ListOptions configure ListWith.
type ListOptions struct {
	Pattern string
	Verbose bool // tracepoint fields, kfunc arguments (BTF), uprobe arguments (DWARF)
	// DebugDirs (--debuginfo) hold separate debug files: uprobe arguments
	// of a stripped binary come from there.
	DebugDirs []string
	// PID restricts uprobe listing to the binaries mapped by the process
	// (-p): "uprobe:FUNC" or no pattern lists their functions.
	PID int
	// Compat: bpftrace 0.26 lists kfunc probes as fentry:, event aliases
	// and interval/profile units; 0.17 does not.
	Compat compat.Version
}

// ListWith is List with a process: bpftrace's `-l [PATTERN] -p PID`.
func ListWith(w io.Writer, o ListOptions) error {
	pattern, verbose := o.Pattern, o.Verbose
	if len(o.DebugDirs) > 0 {
		// -lv of a stripped binary: its arguments from a debug file there.
		ktypes.SetDebugDirs(o.DebugDirs)
	}
	if isTypeSearch(pattern) {
		bw := bufio.NewWriter(w)
		defer bw.Flush()
		return listTypes(bw, pattern, verbose)
	}
	if err := checkSearchChars(pattern); err != nil {
		return err
	}
	if o.PID != 0 {
		return listPIDUprobes(w, o)
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	prov, rest, hasProv := strings.Cut(pattern, ":")
	if !hasProv {
		// A bare pattern matches the whole probe name.
		prov, rest = "*", pattern
	}
	prov = canonicalProvider(prov)
	if rest == "" {
		rest = "*"
	}
	explicit := hasProv && !strings.ContainsAny(prov, "*?")
	// want: the provider pattern covers kind. A wildcard provider (or
	// none) expands over the probe types the table lists by wildcard
	// (the kernel's, as in bpftrace).
	want := func(kind lang.ProbeKind) bool {
		if explicit {
			return prov == kind.String()
		}
		return kind.Type().ListedByWildcard && glob(prov, kind.String())
	}
	if want(lang.ProbeTracepoint) {
		// Not root: say so before anything is listed.
		for _, d := range priv.TracefsDirs {
			if err := priv.TracefsError(d); err != nil {
				return err
			}
		}
	}
	match := func(full string) bool {
		if !hasProv {
			return glob(pattern, full) || glob("*"+pattern+"*", full)
		}
		return glob(prov+":"+rest, full)
	}

	v026 := o.Compat.ListsAsFentry()
	if want(lang.ProbeHardware) {
		listPerfEvents(bw, lang.ProbeHardware.String(), hardwareEvents, v026, match)
	}
	for _, k := range []lang.ProbeKind{lang.ProbeKfunc, lang.ProbeKretfunc} {
		if !want(k) || !explicit && kfuncSupport() != nil {
			continue
		}
		kind := k.String()
		// kfunc:[MODULE:]FUNC; without a module, FUNC in any of them.
		m := func(mod, name string) bool { return match(kind + ":" + mod + ":" + name) }
		if hasProv && !strings.Contains(rest, ":") {
			m = func(mod, name string) bool { return glob(rest, name) }
		}
		shown := kind
		if v026 {
			shown = k.Type().Probetype
		}
		if err := listKfuncs(bw, shown, m, verbose); err != nil {
			return err
		}
	}
	for _, k := range []lang.ProbeKind{lang.ProbeKprobe, lang.ProbeKretprobe} {
		if !want(k) {
			continue
		}
		if err := listKprobes(bw, k.String(), hasProv, rest, match); err != nil {
			return err
		}
	}
	if want(lang.ProbeSoftware) {
		listPerfEvents(bw, lang.ProbeSoftware.String(), softwareEvents, v026, match)
	}
	for _, k := range []lang.ProbeKind{lang.ProbeInterval, lang.ProbeProfile} {
		// bpftrace 0.26 lists a timer probe type by its units, when named.
		if !v026 || !want(k) {
			continue
		}
		kind := k.String()
		for _, u := range timerUnits {
			if full := kind + ":" + u + ":"; match(full) || match(kind+":"+u) {
				fmt.Fprintln(bw, full)
			}
		}
	}
	if want(lang.ProbeTracepoint) {
		names, err := tracepointNames()
		if err != nil {
			return err
		}
		for _, n := range names {
			full := lang.ProbeTracepoint.String() + ":" + n
			if !match(full) {
				continue
			}
			fmt.Fprintln(bw, full)
			if verbose {
				c, e, _ := strings.Cut(n, ":")
				listTracepointFields(bw, c, e)
			}
		}
	}
	// Raw tracepoints are listed when named, or by a provider pattern
	// other than "*" ("raw*:"); bpftrace 0.26 lists them with every
	// probe too ("-l", "-l '*'": its basic test "it lists rawtracepoints").
	if hasProv && prov != "*" && glob(prov, lang.ProbeRawTracepoint.String()) || v026 && (!hasProv || prov == "*") {
		names, err := tracepointNames()
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, n := range names {
			c, e, _ := strings.Cut(n, ":")
			if ktypes.NotRawTracepoint(c) {
				continue
			}
			if full := lang.ProbeRawTracepoint.String() + ":" + e; !seen[e] && match(full) {
				seen[e] = true
				fmt.Fprintln(bw, full)
			}
		}
	}
	uprobeTarget, _, _ := strings.Cut(rest, ":")
	if want(lang.ProbeUprobe) || want(lang.ProbeUretprobe) ||
		hasProv && !explicit && glob(prov, lang.ProbeUprobe.String()) && strings.Contains(uprobeTarget, "/") {
		// A wildcard provider lists uprobes when the target is a path
		// ('*:./prog:*'), as bpftrace does.
		uprov := prov
		if !explicit {
			uprov = lang.ProbeUprobe.String()
		}
		target, fn, _ := strings.Cut(rest, ":")
		if fn == "" {
			fn = "*"
		}
		targets := []string{target}
		if strings.Contains(target, "*") && strings.Contains(target, "/") {
			// A wildcard in the path lists every file it matches, in
			// name order, each as written ("./bin/prog*" → "./bin/progA").
			matches, err := filepath.Glob(target)
			if err != nil {
				return fmt.Errorf("invalid path pattern '%s': %v", target, err)
			}
			targets = targets[:0]
			for _, m := range matches {
				if fi, err := os.Stat(m); err != nil || fi.IsDir() {
					continue
				}
				if strings.HasPrefix(target, "./") && !strings.HasPrefix(m, "./") {
					m = "./" + m
				}
				targets = append(targets, m)
			}
			if len(targets) == 0 {
				return noUprobeTarget(pattern, target)
			}
		}
		for _, target := range targets {
			path, err := ktypes.ResolveBinary(target, 0)
			if err != nil {
				if _, serr := os.Stat(target); strings.Contains(target, "/") && serr != nil {
					return noUprobeTarget(pattern, target)
				}
				return err
			}
			// A path prints as written; a library name as the file it means.
			shown := path
			if strings.Contains(target, "/") {
				shown = target
			}
			if err := listUprobeFuncs(bw, uprov, path, shown, fn, verbose); err != nil {
				return err
			}
		}
	}
	// As for uprobes, a wildcard provider lists a path's USDT probes
	// ('*:./prog:*' gives its uprobe: then its usdt: lines, as bpftrace).
	if want(lang.ProbeUSDT) || hasProv && !explicit && glob(prov, lang.ProbeUSDT.String()) && strings.Contains(uprobeTarget, "/") {
		if err := listUSDT(bw, rest, 0); err != nil {
			return err
		}
	}
	return nil
}

// listUSDT prints usdt:FILE:PROVIDER:NAME for the probes rest
// ("TARGET[:[PROVIDER:]NAME]") matches: TARGET a file, a path pattern, or
// (with pid) "*" for every file the process maps; an empty or absent
// PROVIDER matches any.
func listUSDT(w io.Writer, rest string, pid int) error {
	target, pat, _ := strings.Cut(rest, ":")
	if pat == "" {
		pat = "*"
	}
	probes, err := ktypes.USDTProbes(target, pid)
	if err != nil {
		return err
	}
	for _, p := range probes {
		full := p.Provider + ":" + p.Name
		// PATTERN matches PROVIDER:NAME, or NAME alone ("::NAME" too).
		if glob(pat, full) || glob(pat, p.Name) || strings.HasPrefix(pat, ":") && glob(pat[1:], p.Name) {
			fmt.Fprintf(w, "%s:%s:%s\n", lang.ProbeUSDT, p.Shown, full)
		}
	}
	return nil
}

// timerUnits are the units of interval: and profile: probes as bpftrace
// 0.26 lists them (sorted).
var timerUnits = []string{"hz", "ms", "s", "us"}

// listPerfEvents prints KIND:EVENT: for the software or hardware events
// matching; with aliases (bpftrace 0.26) an event's alias follows it as
// an entry of its own (software:cpu-clock:, software:cpu:).
func listPerfEvents(w io.Writer, kind string, defs []perfEventDef, aliases bool, match func(string) bool) {
	for _, d := range defs {
		names := []string{d.name}
		if aliases && d.alias != "" {
			names = append(names, d.alias)
		}
		for _, n := range names {
			if full := kind + ":" + n + ":"; match(full) || match(kind+":"+n) {
				fmt.Fprintln(w, full)
			}
		}
	}
}

// listKprobes prints KIND:FUNC for the traceable kernel functions
// matching, each name once (bpftrace lists module functions without
// their module); "kprobe:MODULE:FUNC" restricts to a module.
func listKprobes(w io.Writer, kind string, hasProv bool, rest string, match func(string) bool) error {
	funcs, err := kernelFuncs()
	if err != nil {
		return err
	}
	modPat, fnPat, byMod := strings.Cut(rest, ":")
	last := ""
	for _, f := range funcs { // sorted by name
		if f.name == last {
			continue
		}
		full := kind + ":" + f.name
		ok := match(full)
		if hasProv && byMod {
			ok = glob(modPat, f.mod) && glob(fnPat, f.name)
		}
		if ok {
			last = f.name
			fmt.Fprintln(w, full)
		}
	}
	return nil
}

// listUprobeFuncs prints PROV:SHOWN:FUNC for path's functions matching fn;
// verbose adds their parameters from DWARF ("    int* n").
func listUprobeFuncs(w io.Writer, prov, path, shown, fn string, verbose bool) error {
	funcs, err := elfFuncs(path)
	if err != nil {
		return err
	}
	for _, f := range funcs {
		if !glob(fn, f.name) {
			continue
		}
		if f.ifunc {
			// Probed by name as bpftrace lists it (a warning says where
			// the probe goes); no parameters: the resolver has none.
			fmt.Fprintf(w, "%s:%s:%s\n", prov, shown, f.name)
			continue
		}
		fmt.Fprintf(w, "%s:%s:%s\n", prov, shown, f.name)
		if verbose {
			ps, err := ktypes.DWARFParams(path, f.name)
			if err != nil {
				continue // no debug information: the name alone, as bpftrace
			}
			for _, p := range ps {
				fmt.Fprintf(w, "    %s %s\n", p.CType, p.Name)
			}
		}
	}
	return nil
}

// listPIDUprobes lists the functions of every executable file the process
// maps (bpftrace -l -p PID), filtered by "uprobe:[TARGET:]FUNC" patterns.
func listPIDUprobes(w io.Writer, o ListOptions) error {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	prov, rest, hasProv := strings.Cut(o.Pattern, ":")
	if !hasProv {
		prov, rest = lang.ProbeUprobe.String(), o.Pattern
	}
	prov = canonicalProvider(prov)
	if !hasProv || glob(prov, lang.ProbeUSDT.String()) {
		// The USDT probes of every file the process maps (after its
		// uprobes when no provider is given).
		defer func() {
			usdtRest := rest
			if !hasProv {
				usdtRest = "*:" + rest
			}
			if !strings.Contains(usdtRest, ":") {
				usdtRest += ":*"
			}
			_ = listUSDT(bw, usdtRest, o.PID)
		}()
	}
	if !glob(prov, lang.ProbeUprobe.String()) && !glob(prov, lang.ProbeUretprobe.String()) {
		return nil
	}
	if strings.ContainsAny(prov, "*?") {
		prov = lang.ProbeUprobe.String()
	}
	targetPat, fn := "*", rest
	if t, f, ok := strings.Cut(rest, ":"); ok {
		targetPat, fn = t, f
	}
	if fn == "" {
		fn = "*"
	}
	paths, err := ktypes.MappedExecutables(o.PID)
	if err != nil {
		return fmt.Errorf("process %d: %w", o.PID, err)
	}
	for _, path := range paths {
		if !glob(targetPat, path) && !glob(targetPat, filepath.Base(path)) {
			continue
		}
		// A binary the process maps but that cannot be read (deleted,
		// another mount namespace) is skipped, not fatal.
		_ = listUprobeFuncs(bw, prov, ktypes.MappedPath(o.PID, path), path, fn, o.Verbose)
	}
	return nil
}

// checkSearchChars rejects characters no probe name contains, as bpftrace
// rejects them in a search expression.
func checkSearchChars(pattern string) error {
	for _, c := range pattern {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.ContainsRune("_-/.*?[]+@:,!$", c)
		if !ok {
			return fmt.Errorf("invalid character '%c' in search expression", c)
		}
	}
	return nil
}

// canonicalProvider expands bpftrace's provider aliases (the probe
// table's spellings).
func canonicalProvider(p string) string {
	if c, ok := lang.CanonicalProvider(p); ok {
		return c
	}
	return p
}

// listTracepointFields prints the non-common fields of a tracepoint's
// format file as bpftrace -lv does ("    int __syscall_nr").
func listTracepointFields(w io.Writer, cat, ev string) {
	dir, err := tracefsDir()
	if err != nil {
		return
	}
	f, err := os.Open(filepath.Join(dir, "events", cat, ev, "format"))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var fields []string
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(l, "field:") {
			continue
		}
		decl, _, _ := strings.Cut(strings.TrimPrefix(l, "field:"), ";")
		decl = strings.TrimSpace(decl)
		if strings.Contains(decl, " common_") {
			continue
		}
		fields = append(fields, decl)
	}
	for _, d := range fields {
		fmt.Fprintf(w, "    %s\n", d)
	}
}

// noUprobeTarget is bpftrace's error for a -l uprobe pattern whose file
// does not exist, placed on the pattern as if it were a probe.
func noUprobeTarget(pattern, target string) error {
	return fmt.Errorf("stdin:1:1-%d: ERROR: uprobe target file '%s' does not exist or is not executable\n%s\n%s",
		len(pattern)+1, target, pattern, strings.Repeat("~", len(pattern)))
}
