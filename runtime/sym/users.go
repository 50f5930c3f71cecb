package sym

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userCache is /etc/passwd by uid, re-read when the file changes.
type userCache struct {
	mtime time.Time
	size  int64
	read  bool
	names map[uint64]string
}

// Username is the user name of uid from /etc/passwd, or "" when there is
// none (bpftrace 0.17 prints an empty string then).
func (s *Symbolizer) Username(uid uint64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.users
	fi, err := os.Stat(s.opts.Passwd)
	if err != nil {
		return ""
	}
	if !c.read || !fi.ModTime().Equal(c.mtime) || fi.Size() != c.size {
		data, err := os.ReadFile(s.opts.Passwd)
		if err != nil {
			return ""
		}
		c.names = parsePasswd(data)
		c.mtime, c.size, c.read = fi.ModTime(), fi.Size(), true
	}
	return c.names[uid]
}

// parsePasswd maps uids to names; the first line of a uid wins, as in
// bpftrace's scan.
func parsePasswd(data []byte) map[uint64]string {
	names := map[uint64]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), ":", 4)
		if len(f) < 3 {
			continue
		}
		uid, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			continue
		}
		if _, dup := names[uid]; !dup {
			names[uid] = f[0]
		}
	}
	return names
}

// cgroupCache indexes each cgroup hierarchy's directories by inode.
type cgroupCache struct {
	roots []cgroupRoot
	read  bool
	// byRoot maps a hierarchy's mount point to its inode → path index.
	byRoot map[string]*cgroupIndex
}

type cgroupRoot struct{ name, dir string }

type cgroupIndex struct {
	paths  map[uint64]string
	misses map[uint64]time.Time // ids not found, and when
}

// CgroupPath is cgroup_path(id)'s text: "hierarchy:path" for every
// hierarchy holding a cgroup whose inode number is id — cgroup v2
// ("unified") first, then v1 hierarchies by name — joined by commas.
func (s *Symbolizer) CgroupPath(id uint64) string { return s.CgroupPathFilter(id, "*") }

// CgroupPathFilter is cgroup_path(id, filter): only hierarchies whose name
// matches the wildcard filter.
func (s *Symbolizer) CgroupPathFilter(id uint64, filter string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.cgroup
	if !c.read {
		c.roots = readCgroupRoots(s.opts.Mounts)
		c.byRoot = map[string]*cgroupIndex{}
		c.read = true
	}
	var parts []string
	for _, r := range c.roots {
		if !WildcardMatch(filter, r.name) {
			continue
		}
		if p := c.lookup(r.dir, id); p != "" {
			parts = append(parts, r.name+":"+p)
		}
	}
	return strings.Join(parts, ",")
}

func (c *cgroupCache) lookup(dir string, id uint64) string {
	ix := c.byRoot[dir]
	if ix == nil {
		ix = &cgroupIndex{misses: map[uint64]time.Time{}}
		c.byRoot[dir] = ix
	}
	if p, ok := ix.paths[id]; ok {
		return p
	}
	// A cgroup made since the last walk: walk again, but not over and over
	// for an id that is gone.
	if t, ok := ix.misses[id]; ok && time.Since(t) < refreshEvery {
		return ""
	}
	ix.paths = walkCgroups(dir)
	if p, ok := ix.paths[id]; ok {
		return p
	}
	ix.misses[id] = time.Now()
	return ""
}

// walkCgroups maps the inode of every directory under dir to its path
// relative to dir ("/" for dir itself).
func walkCgroups(dir string) map[uint64]string {
	paths := map[uint64]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		rel := strings.TrimPrefix(p, dir)
		if rel == "" {
			rel = "/"
		}
		if _, dup := paths[st.Ino]; !dup {
			paths[st.Ino] = rel
		}
		return nil
	})
	return paths
}

// readCgroupRoots lists cgroup mounts from /proc/mounts: v2 ones named
// "unified", v1 ones by their mount directory's name, v2 first and v1
// sorted by name (bpftrace's order).
func readCgroupRoots(mounts string) []cgroupRoot {
	data, err := os.ReadFile(mounts)
	if err != nil {
		return nil
	}
	var v1, v2 []cgroupRoot
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		dir := unescapeMount(f[1])
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		switch f[2] {
		case "cgroup2":
			v2 = append(v2, cgroupRoot{"unified", dir})
		case "cgroup":
			v1 = append(v1, cgroupRoot{filepath.Base(dir), dir})
		}
	}
	slices.SortFunc(v1, func(a, b cgroupRoot) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.dir, b.dir)
	})
	return append(v2, v1...)
}

// unescapeMount undoes /proc/mounts' octal escapes ("\040" for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
