package ktypes

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// Separate debug information, as gdb, bcc and bpftrace find it: Debian's
// -dbg/-dbgsym packages install /usr/lib/debug/.build-id/xx/yyyy.debug,
// `objcopy --add-gnu-debuglink` names a file in .gnu_debuglink (looked for
// next to the binary, in its .debug directory and under /usr/lib/debug),
// and debuginfod clients cache BUILDID/debuginfo.

// BuildID is the GNU build ID of f in hex, or "".
func BuildID(f *elf.File) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	if err != nil || len(data) <= 16 {
		return ""
	}
	// Elf_Nhdr: namesz, descsz, type (4 bytes each), "GNU\0", desc.
	namesz := int(f.ByteOrder.Uint32(data[0:4]))
	descsz := int(f.ByteOrder.Uint32(data[4:8]))
	off := 12 + (namesz+3)&^3
	if descsz < 2 || off+descsz > len(data) {
		return ""
	}
	return hex.EncodeToString(data[off : off+descsz])
}

// debugRoot is where debug files are installed (a variable for tests).
var debugRoot = "/usr/lib/debug"

// SetDebugRoot makes dir the place debug packages install into (for
// tests) and returns what restores the old one.
func SetDebugRoot(dir string) (restore func()) {
	old := debugRoot
	debugRoot = dir
	return func() { debugRoot = old }
}

// extraDirs are more directories holding separate debug files
// (--debuginfo), set once at start by SetDebugDirs.
var extraDirs []string

// SetDebugDirs adds directories (--debuginfo DIR[:DIR]) where separate
// debug files are looked for, after the standard places; a relative one
// is taken from the binary's directory.
func SetDebugDirs(dirs []string) { extraDirs = append([]string(nil), dirs...) }

// debugLink is the file name .gnu_debuglink of f names, or "".
func debugLink(f *elf.File) string {
	if s := f.Section(".gnu_debuglink"); s != nil {
		if data, err := s.Data(); err == nil {
			if i := bytes.IndexByte(data, 0); i > 0 {
				return string(data[:i])
			}
		}
	}
	return ""
}

// debugCandidates lists where the debug file of f (at name) may be, best
// first: by build ID under /usr/lib/debug and in debuginfod caches; by
// .gnu_debuglink next to the binary, in its .debug directory and under
// /usr/lib/debug/BINDIR; then in each of dirs (and extraDirs) by build ID,
// by debuglink and as BINARY.debug (objcopy --only-keep-debug's usual
// name, which must carry the same build ID).
func debugCandidates(f *elf.File, name string, dirs []string) []string {
	var cands []string
	id := BuildID(f)
	if len(id) > 2 {
		cands = append(cands, filepath.Join(debugRoot, ".build-id", id[:2], id[2:]+".debug"))
		for _, dir := range debuginfodCaches() {
			cands = append(cands, filepath.Join(dir, id, "debuginfo"))
		}
	}
	dir := filepath.Dir(name)
	if real, err := filepath.EvalSymlinks(name); err == nil {
		dir = filepath.Dir(real)
	}
	link := debugLink(f)
	if link != "" {
		abs, _ := filepath.Abs(dir)
		cands = append(cands, filepath.Join(dir, link), filepath.Join(dir, ".debug", link),
			filepath.Join(debugRoot, abs, link))
	}
	for _, d := range append(append([]string(nil), dirs...), extraDirs...) {
		if !filepath.IsAbs(d) {
			// --debuginfo=./external_debug: from the working directory
			// when it is there, else from the binary's directory.
			if st, err := os.Stat(d); err != nil || !st.IsDir() {
				d = filepath.Join(dir, d)
			}
		}
		if len(id) > 2 {
			cands = append(cands, filepath.Join(d, ".build-id", id[:2], id[2:]+".debug"))
		}
		if link != "" {
			cands = append(cands, filepath.Join(d, link))
		}
		cands = append(cands, filepath.Join(d, filepath.Base(name)+".debug"))
	}
	return cands
}

// debuginfodDirs are the cache directories of debuginfod clients
// searched by build ID (SetDebuginfodCaches; none until it is called).
var debuginfodDirs []string

func debuginfodCaches() []string { return debuginfodDirs }

// SetDebuginfodCaches sets the debuginfod client caches searched for
// debug files by build ID.
func SetDebuginfodCaches(dirs []string) { debuginfodDirs = append([]string(nil), dirs...) }

// DebuginfodCaches are the cache directories debuginfod clients use, from
// the environment getenv reads (the command passes os.Getenv):
// $DEBUGINFOD_CACHE_PATH, $XDG_CACHE_HOME/debuginfod_client,
// $HOME/.cache/debuginfod_client, and the sudo user's.
func DebuginfodCaches(getenv func(string) string) []string {
	var dirs []string
	if d := getenv("DEBUGINFOD_CACHE_PATH"); d != "" {
		dirs = append(dirs, d)
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		dirs = append(dirs, filepath.Join(d, "debuginfod_client"))
	}
	if d := getenv("HOME"); d != "" {
		dirs = append(dirs, filepath.Join(d, ".cache", "debuginfod_client"))
	}
	if sudo := getenv("SUDO_USER"); sudo != "" && !strings.ContainsAny(sudo, "/.") {
		dirs = append(dirs, filepath.Join("/home", sudo, ".cache", "debuginfod_client"))
	}
	return dirs
}

// debugFile opens the separate debug-info file of f (at name), if one is
// installed (in the standard places or dirs); with needDWARF only one
// that holds .debug_info. A file whose build ID differs from f's is
// another build's and is skipped.
func debugFile(f *elf.File, name string, dirs []string, needDWARF bool) (*elf.File, string) {
	id := BuildID(f)
	abs, _ := filepath.Abs(name)
	seen := map[string]bool{}
	for _, c := range debugCandidates(f, name, dirs) {
		ca, _ := filepath.Abs(c)
		if c == name || ca == abs || seen[ca] {
			continue
		}
		seen[ca] = true
		d, err := elf.Open(c)
		if err != nil {
			continue
		}
		did := BuildID(d)
		if (id != "" && did != "" && did != id) || (needDWARF && d.Section(".debug_info") == nil) {
			d.Close()
			continue
		}
		return d, c
	}
	return nil, ""
}

// DebugFile returns the path of the separate debug-info file of the ELF
// file at path, or "" when there is none.
func DebugFile(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	d, p := debugFile(f, path, nil, false)
	if d != nil {
		d.Close()
	}
	return p
}

// OpenDebug opens the separate debug-info file of the ELF file f at path;
// the caller closes it. nil when there is none.
func OpenDebug(f *elf.File, path string) (*elf.File, string) { return debugFile(f, path, nil, false) }

// OpenDWARF opens the separate debug file of f at path that holds its
// DWARF, looking in the standard places, then in dirs and the
// --debuginfo directories; the caller closes it. nil when there is none.
func OpenDWARF(f *elf.File, path string, dirs []string) (*elf.File, string) {
	return debugFile(f, path, dirs, true)
}
