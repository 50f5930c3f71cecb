package runtime

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gotrace/gotrace/ktypes"
)

// tracefs helpers of the runtime: listing and matching tracepoints.

// tracefsDir finds tracefs (ktypes's TracefsDir: one discovery,
// shared with the checker's format reader).
func tracefsDir() (string, error) { return ktypes.TracefsDir() }

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
