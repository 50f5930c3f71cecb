package runtime

import (
	"fmt"
	"io"
	"time"
)

// Phase timing for performance work: once EnableTiming is called (the
// command does for GOTRACE_TIMING=1) the runtime prints one line per phase
// of a run ("timing: attach 1.2ms"), each the time since the previous
// mark. It costs one branch per phase when off.
type phaseClock struct {
	w    io.Writer
	last time.Time
}

var timing *phaseClock

// EnableTiming starts the phase clock, writing its lines to w. Call it
// once, before Run, from the process's main goroutine.
func EnableTiming(w io.Writer) {
	timing = &phaseClock{w: w, last: time.Now()}
}

// TimingMark ends the phase named name on the phase clock, if
// EnableTiming started it (the command's phases before Run).
func TimingMark(name string) { timing.mark(name) }

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
