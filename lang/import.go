package lang

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode"
)

// Imports (bpftrace 0.25-0.26): `import "name";` at the top of a script
// reads other scripts into it, as bpftrace's ResolveRootImports and
// ImportExternalScripts passes do:
//
//   - name is looked up in the script's own directory (the current one
//     for -e and stdin), then in ParseOptions.ImportPaths; the first that
//     has it wins. An import nested in an imported script is looked up in
//     the same directories (bpftrace resolves every import against the
//     main script's paths). A name is imported once: a second import of
//     it, a cycle included, does nothing.
//   - a file or directory that others may write (or whose directory
//     others may write) is skipped with a warning during the search, and
//     refused when found inside an imported directory.
//   - a directory imports its .bt files (not its subdirectories), named
//     "name/file.bt"; other files there are ignored.
//   - a .bt script brings its C declarations, map declarations, macros
//     and probes; a `config` block in it is an error. Its diagnostics
//     name it as it was imported ("lib/foo.bt:3:5-9: ERROR: ...").
//   - C sources (.bpf.c), headers (.h) and BPF objects (.bpf.o), which
//     bpftrace compiles with clang or links, are refused: gotrace has no
//     clang. Any other file named directly is "unknown import type".
//   - "stdlib", bpftrace's own library that every script imports
//     implicitly, is accepted and adds nothing (gotrace's builtins are
//     its standard library).
//
// The imported probes go before the script's own, in bpftrace's order:
// for each imported script (by name), the program's probes are reversed,
// the script's appended, and the whole reversed again, so that "if A
// imports B, B's begin and end probes run first" (bpftrace's docs call
// this partial order an effort, not a guarantee).

// importer resolves the imports of one program.
type importer struct {
	main     *lowerer
	paths    []string
	packages map[string]bool
	scripts  map[string]*importedScript
}

type importedScript struct {
	l    *lowerer
	prog *Program
	diag *Diagnostics
}

// resolveImports reads the imports of prog (parsed by l) and merges them
// into it, before its macros are expanded.
func resolveImports(l *lowerer, prog *Program, extra []string) {
	dir := ""
	if strings.Contains(l.src.Name, "/") {
		dir = filepath.Dir(l.src.Name)
	}
	im := &importer{
		main:     l,
		paths:    append([]string{dir}, extra...),
		packages: map[string]bool{},
		scripts:  map[string]*importedScript{},
	}
	for _, imp := range prog.Imports {
		im.resolve(l.diags, imp.Span(), imp.Path)
	}
	im.merge(prog)
}

// resolve finds name in the import paths and imports it; diags are those
// of the script that imports it, at sp.
func (im *importer) resolve(diags *Diagnostics, sp Span, name string) {
	if im.packages[name] {
		return
	}
	im.packages[name] = true
	var checked []string
	for _, dir := range im.paths {
		p := name
		if dir != "" && !filepath.IsAbs(name) {
			p = filepath.Join(dir, name)
		}
		checked = append(checked, p)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if !importPermitted(p) {
			diags.Add(Warning, sp, "", "skipping due to global write permissions: %s", strconv.Quote(p))
			continue
		}
		im.importAny(diags, sp, name, p, false, true)
		return
	}
	if name == "stdlib" {
		return
	}
	hint := ""
	if len(checked) > 0 {
		hint = "checked: " + strings.Join(checked, ",")
	}
	diags.Add(Error, sp, hint, "Unable to find suitable path for import")
}

// importPermitted reports whether neither p nor its directory may be
// written by others.
func importPermitted(p string) bool {
	ok := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().Perm()&0o002 == 0
	}
	dir := filepath.Dir(p)
	if !strings.Contains(p, "/") {
		dir = "."
	}
	return ok(p) && ok(dir)
}

// importAny imports the file or directory at p, imported as name.
func (im *importer) importAny(diags *Diagnostics, sp Span, name, p string, ignoreUnknown, dirs bool) {
	if !importPermitted(p) {
		diags.Errorf(sp, "cowardly refusing to import from a directory with global write permissions: %s", strconv.Quote(p))
		return
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		if !dirs {
			return
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			diags.Errorf(sp, "error reading import '%s': %s", strconv.Quote(p), errnoText(err))
			return
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			im.importAny(diags, sp, name+"/"+n, filepath.Join(p, n), true, false)
		}
		return
	}
	base := filepath.Base(p)
	switch {
	case strings.HasSuffix(base, ".bt"):
		im.importScript(diags, sp, name, p)
	case strings.HasSuffix(base, ".bpf.c"):
		diags.Errorf(sp, "cannot import %s: a C source (.bpf.c) is compiled with clang, which gotrace does not have", strconv.Quote(name))
	case strings.HasSuffix(base, ".h"):
		diags.Errorf(sp, "cannot import %s: a C header (.h) is compiled with clang, which gotrace does not have", strconv.Quote(name))
	case strings.HasSuffix(base, ".bpf.o"):
		diags.Errorf(sp, "cannot import %s: gotrace does not link BPF objects (.bpf.o)", strconv.Quote(name))
	case !ignoreUnknown:
		diags.Errorf(sp, "unknown import type: %s", strconv.Quote(base))
	}
}

// errnoText is the C library's wording of err's errno ("No such file or
// directory"), as bpftrace prints strerror.
func errnoText(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		s := en.Error()
		if s != "" {
			r := []rune(s)
			r[0] = unicode.ToUpper(r[0])
			return string(r)
		}
	}
	return err.Error()
}

// importScript reads and parses the script at p as name, then resolves
// its own imports.
func (im *importer) importScript(diags *Diagnostics, sp Span, name, p string) {
	if im.scripts[name] != nil {
		return
	}
	b, err := os.ReadFile(p)
	if err != nil {
		diags.Errorf(sp, "error reading import '%s': %s", strconv.Quote(p), errnoText(err))
		return
	}
	src := &Source{Name: name, Text: string(b), imported: true}
	d := &Diagnostics{Src: src}
	s := &importedScript{diag: d}
	im.scripts[name] = s
	s.l, s.prog = parseItems(src, d)
	if s.prog == nil {
		return
	}
	if len(s.prog.Config) > 0 {
		// An empty block is allowed, as in bpftrace.
		d.Errorf(s.prog.configSpan, "invalid `config` within import")
	}
	for _, imp := range s.prog.Imports {
		im.resolve(d, imp.Span(), imp.Path)
	}
}

// merge adds the imported scripts' declarations, macros and probes to
// prog, and their diagnostics to the program's.
func (im *importer) merge(prog *Program) {
	names := make([]string, 0, len(im.scripts))
	for n := range im.scripts {
		names = append(names, n)
	}
	sort.Strings(names)
	main := im.main
	for _, n := range names {
		s := im.scripts[n]
		main.diags.Items = append(main.diags.Items, s.diag.Items...)
		if s.prog == nil {
			continue
		}
		prog.Includes = append(prog.Includes, s.prog.Includes...)
		prog.Decls = append(prog.Decls, s.prog.Decls...)
		for _, d := range s.prog.MapDecls {
			dup := false
			for _, o := range prog.MapDecls {
				if o.Map == d.Map {
					dup = true
				}
			}
			if dup {
				main.diags.Errorf(d.Span(), "Map %s is already declared", d.Map)
				continue
			}
			prog.MapDecls = append(prog.MapDecls, d)
		}
		mnames := make([]string, 0, len(s.l.macros))
		for mn := range s.l.macros {
			mnames = append(mnames, mn)
		}
		sort.Strings(mnames)
		for _, mn := range mnames {
			m := s.l.macros[mn]
			if main.macros == nil {
				main.macros = map[string]*macroDef{}
			}
			if _, dup := main.macros[mn]; dup {
				main.diags.Errorf(m.span, "Redefinition of macro: %s", mn)
				continue
			}
			main.macros[mn] = m
		}
		reverseProbes(prog.Probes)
		prog.Probes = append(prog.Probes, s.prog.Probes...)
		reverseProbes(prog.Probes)
	}
}

func reverseProbes(ps []*Probe) {
	for i, j := 0, len(ps)-1; i < j; i, j = i+1, j-1 {
		ps[i], ps[j] = ps[j], ps[i]
	}
}
