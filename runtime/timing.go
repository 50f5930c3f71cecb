package runtime

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Phase timing for performance work: with GOTRACE_TIMING=1 the runtime
// prints one line per phase of a run to stderr ("timing: attach 1.2ms"),
// each the time since the previous mark. It costs one branch per phase
// when off.
type phaseClock struct {
	w    io.Writer
	last time.Time
}

var timing = newPhaseClock()

func newPhaseClock() *phaseClock {
	if os.Getenv("GOTRACE_TIMING") == "" {
		return nil
	}
	return &phaseClock{w: os.Stderr, last: time.Now()}
}

// mark ends the phase named name.
func (c *phaseClock) mark(name string) {
	if c == nil {
		return
	}
	now := time.Now()
	fmt.Fprintf(c.w, "timing: %-12s %8.3fms\n", name, float64(now.Sub(c.last).Microseconds())/1000)
	c.last = now
}

// reset starts a phase now without reporting the time before it (waiting
// for events is not a phase).
func (c *phaseClock) reset() {
	if c != nil {
		c.last = time.Now()
	}
}
