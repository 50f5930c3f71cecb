package runtime

import (
	"bufio"
	"fmt"
	"github.com/gotrace/gotrace/internal/priv"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// tracefs helpers. compiler/layout will export TracefsDir and Tracepoints;
// until then the runtime keeps its own small copies.

var (
	tracefsOnce sync.Once
	tracefsPath string
	tracefsErr  error
)

// tracefsDir finds tracefs, mounting it at /sys/kernel/tracing if it is
// not mounted anywhere.
func tracefsDir() (string, error) {
	tracefsOnce.Do(func() {
		for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
			if _, err := os.Stat(filepath.Join(d, "available_events")); err == nil {
				tracefsPath = d
				return
			}
		}
		for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
			if err := priv.TracefsError(d); err != nil {
				tracefsErr = err // there, but root's
				return
			}
		}
		d := "/sys/kernel/tracing"
		if err := unix.Mount("tracefs", d, "tracefs", 0, ""); err != nil {
			tracefsErr = fmt.Errorf("tracefs is not mounted and mounting it at %s failed: %w", d, err)
			return
		}
		tracefsPath = d
	})
	return tracefsPath, tracefsErr
}

// tracepointNames lists "category:event" from available_events, sorted.
func tracepointNames() ([]string, error) {
	dir, err := tracefsDir()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "available_events"))
	if err != nil {
		return nil, fmt.Errorf("list tracepoints: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("list tracepoints: %w", err)
	}
	sort.Strings(out)
	return out, nil
}

// matchTracepoints returns the "category:event" names matching the
// category and event patterns.
func matchTracepoints(cat, ev string) ([]string, error) {
	all, err := tracepointNames()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range all {
		c, e, ok := strings.Cut(n, ":")
		if ok && glob(cat, c) && glob(ev, e) {
			out = append(out, n)
		}
	}
	return out, nil
}

// tracepointExists checks events/CAT/NAME in tracefs.
func tracepointExists(cat, ev string) bool {
	dir, err := tracefsDir()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "events", cat, ev, "id"))
	return err == nil
}
