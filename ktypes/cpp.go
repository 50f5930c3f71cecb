package ktypes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// This file is a small C preprocessor: enough of one for the headers a
// tracing script includes (include guards, #if on macros, object- and
// function-like macros, #include search). It is not a conforming one: the
// aim is to reach the struct, union, enum and typedef declarations.

type macro struct {
	fn       bool
	params   []string
	variadic bool
	vaName   string // GNU named variadic parameter ("args..."), else __VA_ARGS__
	body     []ctok
}

type cond struct {
	active  bool // this branch is being read
	taken   bool // some branch of this #if was taken
	outerOK bool // the enclosing region is active
	inElse  bool
}

type preproc struct {
	abi      abi
	dirs     []string // -I directories
	sysdirs  []string
	macros   map[string]*macro
	once     map[string]bool
	missing  []string // #include targets found nowhere
	included []string // files read, in order
	depth    int
	out      []ctok
	errs     []error
}

const maxIncludeDepth = 64

func newPreproc(a abi, dirs []string) *preproc {
	p := &preproc{abi: a, dirs: dirs, macros: map[string]*macro{}, once: map[string]bool{}}
	p.sysdirs = systemIncludeDirs(a)
	def := func(name, val string) {
		toks, _ := lexLine(val, "<built-in>", 0)
		p.macros[name] = &macro{body: toks}
	}
	for _, d := range [][2]string{
		{"__STDC__", "1"}, {"__STDC_VERSION__", "201112L"}, {"__GNUC__", "4"},
		{"__GNUC_MINOR__", "2"}, {"__linux__", "1"}, {"__linux", "1"}, {"__unix__", "1"},
		{"__CHAR_BIT__", "8"}, {"__SIZEOF_SHORT__", "2"}, {"__SIZEOF_INT__", "4"},
		{"__SIZEOF_LONG__", "8"}, {"__SIZEOF_LONG_LONG__", "8"}, {"__SIZEOF_POINTER__", "8"},
		{"__SIZEOF_SIZE_T__", "8"}, {"__LP64__", "1"}, {"_LP64", "1"},
		{"__ORDER_LITTLE_ENDIAN__", "1234"}, {"__ORDER_BIG_ENDIAN__", "4321"},
		{"__BYTE_ORDER__", "1234"}, {"__BPF_TRACING__", "1"}, {"__ELF__", "1"},
		{"__INT_MAX__", "2147483647"}, {"__LONG_MAX__", "9223372036854775807L"},
		{"__SCHAR_MAX__", "127"}, {"__SHRT_MAX__", "32767"}, {"__LONG_LONG_MAX__", "9223372036854775807LL"},
	} {
		def(d[0], d[1])
	}
	switch a.name {
	case "arm64":
		def("__aarch64__", "1")
		def("__AARCH64EL__", "1")
		def("__CHAR_UNSIGNED__", "1")
	default:
		def("__x86_64__", "1")
		def("__x86_64", "1")
		def("__amd64__", "1")
	}
	return p
}

// systemIncludeDirs are the directories a compiler for the ABI searches
// after the -I ones, in gcc's order.
func systemIncludeDirs(a abi) []string {
	triple := "x86_64-linux-gnu"
	if a.name == "arm64" {
		triple = "aarch64-linux-gnu"
	}
	dirs := []string{"/usr/local/include", "/usr/include/" + triple, "/usr/include"}
	// The compiler's own headers (stddef.h, stdarg.h ...), when installed.
	for _, pat := range []string{"/usr/lib/gcc/" + triple + "/*/include", "/usr/lib/llvm-*/lib/clang/*/include"} {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			dirs = append(dirs, m[len(m)-1])
		}
	}
	return dirs
}

// run preprocesses src (read from file name) and appends its tokens to p.out.
func (p *preproc) run(src, name string) {
	p.depth++
	defer func() { p.depth-- }()
	p.included = append(p.included, name)
	lines := strings.Split(stripComments(src), "\n")
	var conds []cond
	active := func() bool { return len(conds) == 0 || conds[len(conds)-1].active }
	var text []ctok // active non-directive tokens not yet expanded
	flush := func() {
		if len(text) > 0 {
			p.out = append(p.out, p.expand(text)...)
			text = nil
		}
	}
	for i, line := range lines {
		trim := strings.TrimSpace(line)
		if !strings.HasPrefix(trim, "#") {
			if !active() || trim == "" {
				continue
			}
			toks, err := lexLine(line, name, i+1)
			if err != nil {
				p.errs = append(p.errs, err)
				continue
			}
			text = append(text, toks...)
			continue
		}
		toks, err := lexLine(trim[1:], name, i+1)
		if err != nil && active() {
			p.errs = append(p.errs, err)
			continue
		}
		if len(toks) == 0 {
			continue // the null directive
		}
		dir, args := toks[0].text, toks[1:]
		switch dir {
		case "if", "ifdef", "ifndef":
			c := cond{outerOK: active()}
			if c.outerOK {
				switch dir {
				case "ifdef":
					c.active = len(args) > 0 && p.macros[args[0].text] != nil
				case "ifndef":
					c.active = len(args) > 0 && p.macros[args[0].text] == nil
				default:
					c.active = p.evalIf(args, name) != 0
				}
			}
			c.taken = c.active
			conds = append(conds, c)
			continue
		case "elif", "else", "endif", "elifdef", "elifndef":
			if len(conds) == 0 {
				p.errs = append(p.errs, fmt.Errorf("%s:%d: #%s without #if", name, i+1, dir))
				continue
			}
			c := &conds[len(conds)-1]
			switch dir {
			case "endif":
				conds = conds[:len(conds)-1]
			case "else":
				c.inElse = true
				c.active = c.outerOK && !c.taken
				c.taken = true
			default:
				if c.taken || !c.outerOK {
					c.active = false
					continue
				}
				switch dir {
				case "elifdef":
					c.active = len(args) > 0 && p.macros[args[0].text] != nil
				case "elifndef":
					c.active = len(args) > 0 && p.macros[args[0].text] == nil
				default:
					c.active = p.evalIf(args, name) != 0
				}
				c.taken = c.active
			}
			continue
		}
		if !active() {
			continue
		}
		flush()
		switch dir {
		case "define":
			p.define(args, name, i+1, fnLikeDefine(trim))
		case "undef":
			if len(args) > 0 {
				delete(p.macros, args[0].text)
			}
		case "include", "include_next":
			p.include(args, name, i+1, dir == "include_next")
		case "pragma":
			if len(args) > 0 && args[0].text == "once" {
				p.once[name] = true
			}
		case "error":
			p.errs = append(p.errs, fmt.Errorf("%s:%d: #error%s", name, i+1, strings.TrimPrefix(trim[1:], "error")))
		default:
			// #warning, #line, #ident, #assert ...: nothing to do here.
		}
	}
	flush()
	if len(conds) > 0 {
		p.errs = append(p.errs, fmt.Errorf("%s: unterminated #if", name))
	}
}

// fnLikeDefine reports whether a "#define NAME(" line defines a
// function-like macro: the "(" must follow the name with no space.
func fnLikeDefine(line string) bool {
	s := strings.TrimSpace(strings.TrimPrefix(line, "#"))
	s = strings.TrimSpace(strings.TrimPrefix(s, "define"))
	i := 0
	for i < len(s) && isIdentChar(s[i]) {
		i++
	}
	return i < len(s) && s[i] == '('
}

func (p *preproc) define(args []ctok, file string, line int, fnLike bool) {
	if len(args) == 0 || args[0].kind != tIdent {
		p.errs = append(p.errs, fmt.Errorf("%s:%d: #define needs a macro name", file, line))
		return
	}
	name := args[0].text
	m := &macro{}
	rest := args[1:]
	if fnLike && len(rest) > 0 && rest[0].is("(") && looksLikeParams(rest) {
		m.fn = true
		j := 1
		for ; j < len(rest) && !rest[j].is(")"); j++ {
			switch {
			case rest[j].is(","):
			case rest[j].is("..."):
				m.variadic = true
				if j > 1 && rest[j-1].kind == tIdent && len(m.params) > 0 {
					m.vaName = m.params[len(m.params)-1]
					m.params = m.params[:len(m.params)-1]
				}
			default:
				m.params = append(m.params, rest[j].text)
			}
		}
		rest = rest[j+1:]
	}
	m.body = rest
	p.macros[name] = m
}

// looksLikeParams reports whether toks (starting at "(") is a macro
// parameter list: identifiers and "..." separated by commas.
func looksLikeParams(toks []ctok) bool {
	want := true // an identifier is expected next
	for _, t := range toks[1:] {
		switch {
		case t.is(")"):
			return true
		case want && (t.kind == tIdent || t.is("...")):
			want = false
		case !want && t.is(","):
			want = true
		case !want && t.is("..."): // GNU named variadic: "args..."

		default:
			return false
		}
	}
	return false
}

func (p *preproc) include(args []ctok, from string, line int, next bool) {
	if len(args) > 0 && args[0].kind == tIdent {
		args = p.expand(args)
	}
	var target string
	quoted := false
	switch {
	case len(args) == 1 && args[0].kind == tString:
		target, quoted = strings.Trim(args[0].text, `"`), true
	case len(args) >= 3 && args[0].is("<"):
		var b strings.Builder
		for _, t := range args[1:] {
			if t.is(">") {
				break
			}
			b.WriteString(t.text)
		}
		target = b.String()
	default:
		p.errs = append(p.errs, fmt.Errorf("%s:%d: malformed #include", from, line))
		return
	}
	if p.depth >= maxIncludeDepth {
		p.errs = append(p.errs, fmt.Errorf("%s:%d: #include nested too deeply", from, line))
		return
	}
	path := p.find(target, from, quoted, next)
	if path == "" {
		p.missing = append(p.missing, target)
		return
	}
	if p.once[path] {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s:%d: %w", from, line, err))
		return
	}
	p.run(string(data), path)
}

// find searches for an include target: the including file's directory for
// "quoted" names, then -I directories, then the system ones. include_next
// starts after the directory the including file was found in.
func (p *preproc) find(target, from string, quoted, next bool) string {
	if filepath.IsAbs(target) {
		if fileExists(target) {
			return target
		}
		return ""
	}
	var dirs []string
	if quoted && !next && from != "" && !strings.HasPrefix(from, "<") {
		dirs = append(dirs, filepath.Dir(from))
	}
	dirs = append(dirs, p.dirs...)
	dirs = append(dirs, p.sysdirs...)
	if next {
		fromDir := filepath.Dir(from)
		for i, d := range dirs {
			if filepath.Clean(filepath.Join(d, filepath.Dir(target))) == fromDir {
				dirs = dirs[i+1:]
				break
			}
		}
	}
	for _, d := range dirs {
		if path := filepath.Join(d, target); fileExists(path) {
			return path
		}
	}
	return ""
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// evalIf evaluates a #if expression: defined() first, then macros, then any
// identifier left is 0.
func (p *preproc) evalIf(args []ctok, file string) int64 {
	var pre []ctok
	for i := 0; i < len(args); i++ {
		t := args[i]
		if t.is("defined") {
			name := ""
			if i+1 < len(args) && args[i+1].is("(") && i+3 < len(args) {
				name, i = args[i+2].text, i+3
			} else if i+1 < len(args) {
				name, i = args[i+1].text, i+1
			}
			v := "0"
			if p.macros[name] != nil {
				v = "1"
			}
			pre = append(pre, ctok{kind: tNumber, text: v, file: t.file, line: t.line})
			continue
		}
		if (t.is("__has_include") || t.is("__has_include_next")) && i+1 < len(args) && args[i+1].is("(") {
			j := i + 2
			var b strings.Builder
			quoted := false
			for ; j < len(args) && !args[j].is(")"); j++ {
				if args[j].kind == tString {
					quoted = true
					b.WriteString(strings.Trim(args[j].text, `"`))
				} else if !args[j].is("<") && !args[j].is(">") {
					b.WriteString(args[j].text)
				}
			}
			v := "0"
			if p.find(b.String(), file, quoted, false) != "" {
				v = "1"
			}
			pre = append(pre, ctok{kind: tNumber, text: v})
			i = j
			continue
		}
		pre = append(pre, t)
	}
	exp := p.expand(pre)
	// Unknown identifiers are 0; unknown function-like ones (__has_builtin(x)
	// and friends) are 0 with their arguments.
	var final []ctok
	for i := 0; i < len(exp); i++ {
		t := exp[i]
		if t.kind == tIdent {
			if i+1 < len(exp) && exp[i+1].is("(") {
				depth := 0
				for i++; i < len(exp); i++ {
					if exp[i].is("(") {
						depth++
					} else if exp[i].is(")") {
						if depth--; depth == 0 {
							break
						}
					}
				}
			}
			final = append(final, ctok{kind: tNumber, text: "0"})
			continue
		}
		final = append(final, t)
	}
	ev := &evaluator{toks: final}
	v, err := ev.expr()
	if err == nil && ev.i < len(final) {
		err = fmt.Errorf("unexpected %q", final[ev.i].text)
	}
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: #if: %w", file, err))
		return 0
	}
	return v
}

// expand macro-expands toks. Each expansion's tokens carry the names of the
// macros they came from, so a macro is never expanded inside itself.
func (p *preproc) expand(toks []ctok) []ctok {
	var out []ctok
	// A stack of token runs still to read: expansions are pushed in front
	// of the rest instead of copying the rest each time.
	stack := [][]ctok{toks}
	next := func() (ctok, bool) {
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			if len(top) == 0 {
				stack = stack[:len(stack)-1]
				continue
			}
			stack[len(stack)-1] = top[1:]
			return top[0], true
		}
		return ctok{}, false
	}
	peek := func() (ctok, bool) {
		for k := len(stack) - 1; k >= 0; k-- {
			if len(stack[k]) > 0 {
				return stack[k][0], true
			}
		}
		return ctok{}, false
	}
	for steps := 0; ; steps++ {
		t, ok := next()
		if !ok {
			break
		}
		m := p.macros[t.text]
		if t.kind != tIdent || m == nil || t.hide[t.text] || steps > 1<<20 {
			out = append(out, t)
			continue
		}
		hide := map[string]bool{t.text: true}
		for k := range t.hide {
			hide[k] = true
		}
		if !m.fn {
			stack = append(stack, relocate(m.body, t, hide))
			continue
		}
		if n, ok := peek(); !ok || !n.is("(") {
			out = append(out, t)
			continue
		}
		next() // "("
		var args [][]ctok
		var cur []ctok
		depth := 0
		closed := false
		for {
			a, ok := next()
			if !ok {
				break
			}
			if a.is("(") {
				depth++
			} else if a.is(")") {
				if depth == 0 {
					closed = true
					break
				}
				depth--
			} else if a.is(",") && depth == 0 && !(m.variadic && len(args) >= len(m.params)) {
				args = append(args, cur)
				cur = nil
				continue
			}
			cur = append(cur, a)
		}
		if !closed {
			p.errs = append(p.errs, fmt.Errorf("%s: unterminated call of macro %s", t.pos(), t.text))
			break
		}
		args = append(args, cur)
		stack = append(stack, relocate(p.substitute(m, args), t, hide))
	}
	return out
}

// substitute replaces a function-like macro's parameters in its body.
func (p *preproc) substitute(m *macro, args [][]ctok) []ctok {
	arg := func(name string) ([]ctok, bool) {
		for i, pn := range m.params {
			if m.variadic && pn == m.vaName {
				break
			}
			if pn == name {
				if i < len(args) {
					return args[i], true
				}
				return nil, true
			}
		}
		if m.variadic && (name == m.vaName || (m.vaName == "" && name == "__VA_ARGS__")) {
			if len(args) > len(m.params) {
				return args[len(m.params)], true
			}
			return nil, true
		}
		return nil, false
	}
	var out []ctok
	body := m.body
	for i := 0; i < len(body); i++ {
		t := body[i]
		if t.is("#") && i+1 < len(body) {
			if a, ok := arg(body[i+1].text); ok {
				var parts []string
				for _, x := range a {
					parts = append(parts, x.text)
				}
				s := strings.Join(parts, " ")
				out = append(out, ctok{kind: tString, text: `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`})
				i++
				continue
			}
		}
		if i+1 < len(body) && body[i+1].is("##") && i+2 < len(body) {
			left := []ctok{t}
			if a, ok := arg(t.text); ok {
				left = a
			}
			right := []ctok{body[i+2]}
			if a, ok := arg(body[i+2].text); ok {
				right = a
			}
			var s string
			if len(left) > 0 {
				s = left[len(left)-1].text
				out = append(out, left[:len(left)-1]...)
			}
			if len(right) > 0 {
				s += right[0].text
			}
			if s != "" {
				if pasted, err := lexLine(s, t.file, t.line); err == nil {
					out = append(out, pasted...)
				}
			}
			if len(right) > 1 {
				out = append(out, right[1:]...)
			}
			i += 2
			continue
		}
		if a, ok := arg(t.text); ok && t.kind == tIdent {
			out = append(out, p.expand(a)...)
			continue
		}
		out = append(out, t)
	}
	return out
}

// relocate copies body tokens to the place of the macro use, with hide set.
func relocate(body []ctok, at ctok, hide map[string]bool) []ctok {
	out := make([]ctok, len(body))
	for i, b := range body {
		b.file, b.line, b.bol = at.file, at.line, false
		if len(b.hide) == 0 {
			b.hide = hide
		} else {
			h := map[string]bool{}
			for k := range b.hide {
				h[k] = true
			}
			for k := range hide {
				h[k] = true
			}
			b.hide = h
		}
		out[i] = b
	}
	return out
}

// kernelHeaderDirs are the top directories of the kernel's include trees:
// what they declare, the kernel's BTF describes too.
var kernelHeaderDirs = map[string]bool{
	"linux": true, "asm": true, "asm-generic": true, "uapi": true, "generated": true, "net": true,
	"trace": true, "crypto": true, "keys": true, "scsi": true, "sound": true, "video": true,
	"xen": true, "media": true, "drm": true, "rdma": true, "soc": true, "clocksource": true,
	"dt-bindings": true, "kunit": true, "math-emu": true, "misc": true, "pcmcia": true,
	"ras": true, "target": true, "vdso": true, "acpi": true, "kvm": true, "memory": true,
}

// IsKernelHeader reports whether an #include target names a kernel header
// (linux/sched.h, net/sock.h ...): when it is not installed, a script's
// types still come from the kernel's BTF.
func IsKernelHeader(target string) bool {
	dir, _, ok := strings.Cut(target, "/")
	return ok && kernelHeaderDirs[dir]
}

// FindInclude reports where the script-level #include target would be
// read from: -I dirs, then the system include directories for arch, or ""
// when it is nowhere. quoted is #include "target".
func FindInclude(target string, quoted bool, dirs []string, arch string) string {
	a, err := abiFor(arch)
	if err != nil {
		return ""
	}
	return newPreproc(a, dirs).find(target, "script", quoted, false)
}
