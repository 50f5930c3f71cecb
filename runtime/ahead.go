package runtime

import "sync/atomic"

// ahead is a piece of work started on another goroutine before it is
// needed (the event ring, a tracepoint's perf event), which its user does
// itself if that goroutine has not begun it by the time it is needed. At
// start-up the process has more such goroutines than CPUs, and a runnable
// goroutine can wait a millisecond or more for one (measured here: the
// ring's goroutine queued 0.5-2 ms while the script compiled, and the load
// then waited for it); whoever claims the work first does it, and the
// other waits only for work under way.
type ahead struct {
	claimed atomic.Bool
	done    chan struct{} // closed once the work is done or cancelled
	work    func()
}

func newAhead(work func()) *ahead { return &ahead{done: make(chan struct{}), work: work} }

// do does the work unless someone has claimed it; it reports whether it
// did. The goroutine started ahead calls it.
func (a *ahead) do() bool {
	if !a.claimed.CompareAndSwap(false, true) {
		return false
	}
	defer close(a.done)
	a.work()
	return true
}

// wait does the work if no one has begun it, else waits until it is done.
func (a *ahead) wait() {
	if !a.do() {
		<-a.done
	}
}

// cancel keeps the work from being done if no one has begun it (it
// reports true: nothing was made), else waits until it is done (false:
// what it made is the caller's to close).
func (a *ahead) cancel() bool {
	if a.claimed.CompareAndSwap(false, true) {
		close(a.done)
		return true
	}
	<-a.done
	return false
}
