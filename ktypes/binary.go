package ktypes

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Library and binary resolution, as the dynamic linker would: a name with a
// '/' is a path; "libc" or "libc.so.6" is looked up in /etc/ld.so.cache and
// then the standard directories; anything else is looked up in $PATH.

var libDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
}

// ResolveBinary returns the absolute path uprobe target name means.
func ResolveBinary(name string, pid int) (string, error) {
	p, _, err := ResolveBinaryAll(name, pid)
	return p, err
}

// ResolveBinaryAll is resolveBinary that also says how many different
// files the name matched (a library in two places, a binary in two $PATH
// directories): bpftrace attaches to the first and warns.
func ResolveBinaryAll(name string, pid int) (string, int, error) {
	if name == "" {
		return "", 0, fmt.Errorf("uprobe needs a binary or library path")
	}
	if strings.Contains(name, "/") {
		p, err := filepath.Abs(name)
		if err != nil {
			return "", 0, err
		}
		// With -p the path is the target's: it may run in another mount
		// namespace (a container), seen from here under /proc/PID/root.
		if pid > 0 && !strings.HasPrefix(p, "/proc/") {
			inNS := fmt.Sprintf("/proc/%d/root%s", pid, p)
			if _, err := os.Stat(inNS); err == nil && !sameFile(inNS, p) {
				return inNS, 1, nil
			}
		}
		if _, err := os.Stat(p); err != nil {
			return "", 0, fmt.Errorf("binary %s: %w", name, err)
		}
		return p, 1, nil
	}
	if pid > 0 {
		if p := libraryOfPID(name, pid); p != "" {
			return p, 1, nil
		}
	}
	if ps := lookupLibraries(name); len(ps) > 0 {
		return ps[0], len(ps), nil
	}
	if ps := lookPathAll(name); len(ps) > 0 {
		return ps[0], len(ps), nil
	}
	return "", 0, fmt.Errorf("could not find library or binary %q (not in /etc/ld.so.cache, the standard library directories or $PATH)", name)
}

// isELFFile reports whether p is a regular file starting with the ELF
// magic (not a directory such as /usr/lib/python3, not a script).
func isELFFile(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var m [4]byte
	n, _ := f.Read(m[:])
	return n == 4 && string(m[:]) == "\x7fELF"
}

// distinct appends p to ps unless the same file (by real path) is there.
func distinct(ps []string, p string, seen map[string]bool) []string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		real = p
	}
	if seen[real] {
		return ps
	}
	seen[real] = true
	return append(ps, p)
}

// searchPath is the $PATH uprobe targets named without a slash are looked
// for in (SetSearchPath; the standard directories until it is called).
var searchPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// SetSearchPath sets the $PATH binaries named in attach points are looked
// for in (the command passes its environment's).
func SetSearchPath(path string) { searchPath = path }

// lookPathAll lists the ELF executables named name in $PATH's directories,
// different files only, in $PATH order.
func lookPathAll(name string) []string {
	var ps []string
	seen := map[string]bool{}
	for _, dir := range filepath.SplitList(searchPath) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 || !isELFFile(p) {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		ps = distinct(ps, p, seen)
	}
	return ps
}

// libMatches reports whether a library file name (soname) is what name
// asks for: "libc" matches "libc.so.6", "libc.so.6" matches itself.
func libMatches(name, file string) bool {
	if file == name {
		return true
	}
	return strings.HasPrefix(file, name+".so") || strings.HasPrefix(file, name+"-") && strings.Contains(file, ".so")
}

func lookupLibrary(name string) string {
	if ps := lookupLibraries(name); len(ps) > 0 {
		return ps[0]
	}
	return ""
}

// lookupLibraries lists the different library files name may mean: those
// of /etc/ld.so.cache, else those of the standard directories.
func lookupLibraries(name string) []string {
	var ps []string
	seen := map[string]bool{}
	if ents, err := readLDCache("/etc/ld.so.cache"); err == nil {
		for _, e := range ents {
			if libMatches(name, e.key) && isELFFile(e.value) {
				ps = distinct(ps, e.value, seen)
			}
		}
	}
	if len(ps) > 0 {
		return ps
	}
	for _, d := range libDirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if libMatches(name, e.Name()) {
				if p, err := filepath.EvalSymlinks(filepath.Join(d, e.Name())); err == nil && isELFFile(p) {
					ps = distinct(ps, p, seen)
				}
			}
		}
	}
	return ps
}

// libraryOfPID finds name among the files mapped by process pid.
func libraryOfPID(name string, pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
			continue
		}
		if libMatches(name, filepath.Base(f[5])) {
			return f[5]
		}
	}
	return ""
}

type ldEntry struct{ key, value string }

// readLDCache parses glibc's "glibc-ld.so.cache1.1" format (also when it
// follows the old "ld.so-1.7.0" table).
func readLDCache(path string) ([]ldEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	const magic = "glibc-ld.so.cache1.1"
	base := bytes.Index(data, []byte(magic))
	if base < 0 {
		return nil, fmt.Errorf("%s: unknown format", path)
	}
	hdr := data[base:]
	if len(hdr) < 48 {
		return nil, fmt.Errorf("%s: short header", path)
	}
	le := binary.LittleEndian
	n := int(le.Uint32(hdr[20:24]))
	const entSize = 24
	if n < 0 || 48+n*entSize > len(hdr) {
		return nil, fmt.Errorf("%s: bad entry count", path)
	}
	// String offsets are relative to the new-format header.
	str := func(off uint32) string {
		o := int(off)
		if o >= len(hdr) {
			return ""
		}
		end := bytes.IndexByte(hdr[o:], 0)
		if end < 0 {
			return ""
		}
		return string(hdr[o : o+end])
	}
	out := make([]ldEntry, 0, n)
	for i := 0; i < n; i++ {
		e := hdr[48+i*entSize:]
		out = append(out, ldEntry{key: str(le.Uint32(e[4:8])), value: str(le.Uint32(e[8:12]))})
	}
	return out, nil
}

// sameFile reports whether a and b name the same file (false when either
// does not exist).
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// progCache holds each file's program headers (path → []elf.ProgHeader).
var progCache sync.Map

// FileOffset converts a virtual address of path into the file offset a
// uprobe needs.
func FileOffset(path string, vaddr uint64) (uint64, error) {
	var progs []elf.ProgHeader
	if v, ok := progCache.Load(path); ok {
		progs = v.([]elf.ProgHeader)
	} else {
		f, err := elf.Open(path)
		if err != nil {
			return 0, ELFOpenError(path, err)
		}
		for _, p := range f.Progs {
			progs = append(progs, p.ProgHeader)
		}
		f.Close()
		progCache.Store(path, progs)
	}
	for _, p := range progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && vaddr >= p.Vaddr && vaddr < p.Vaddr+p.Memsz {
			return vaddr - p.Vaddr + p.Off, nil
		}
	}
	return 0, fmt.Errorf("address 0x%x is not in an executable segment of %s", vaddr, path)
}

// ELFOpenError explains why path could not be read as ELF: a file that is
// not ELF at all (a script, a text file, an empty file) is named as such,
// rather than by the ELF reader's "EOF" or "bad magic number".
func ELFOpenError(path string, err error) error {
	var fe *elf.FormatError
	if errors.As(err, &fe) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s is not an ELF file (uprobes and usdt probes need an executable or a shared library)", path)
	}
	return fmt.Errorf("read ELF %s: %w", path, err)
}

func GlobFiles(pattern string) ([]string, error) {
	// filepath.Glob knows * and ?; expand {a,b} first.
	pats := []string{pattern}
	if i := strings.IndexByte(pattern, '{'); i >= 0 {
		if j := strings.IndexByte(pattern[i:], '}'); j > 0 {
			pats = nil
			for _, a := range strings.Split(pattern[i+1:i+j], ",") {
				pats = append(pats, pattern[:i]+a+pattern[i+j+1:])
			}
		}
	}
	var out []string
	for _, p := range pats {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no files match %s", pattern)
	}
	return out, nil
}

// MappedPath is where a mapped file can be read from here: through the
// process's root, so binaries in another mount namespace are found.
func MappedPath(pid int, path string) string {
	p := fmt.Sprintf("/proc/%d/root%s", pid, path)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return path
}

// MappedExecutables returns the regular files the process maps
// executable, in /proc/PID/maps order, each once: not anonymous mappings,
// nor files deleted since ("PATH (deleted)"). The error is /proc's.
func MappedExecutables(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.Contains(f[1], "x") || !strings.HasPrefix(f[5], "/") || len(f) > 6 {
			continue // anonymous, not executable, or "(deleted)"
		}
		if !seen[f[5]] {
			seen[f[5]] = true
			out = append(out, f[5])
		}
	}
	return out, nil
}

// Glob reports whether name matches pattern with bpftrace's wildcards:
// '*' any run, '?' one character, '{a,b}' alternatives.
func Glob(pattern, name string) bool {
	if i := strings.IndexByte(pattern, '{'); i >= 0 {
		if j := strings.IndexByte(pattern[i:], '}'); j > 0 {
			pre, alts, post := pattern[:i], pattern[i+1:i+j], pattern[i+j+1:]
			for _, a := range strings.Split(alts, ",") {
				if Glob(pre+a+post, name) {
					return true
				}
			}
			return false
		}
	}
	return globSimple(pattern, name)
}

func globSimple(p, s string) bool {
	// Iterative matcher with backtracking on the last '*'.
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// HasWildcard reports whether s uses glob syntax.
func HasWildcard(s string) bool { return strings.ContainsAny(s, "*?{") }
