package runtime

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestAheadWaitDoesUnstartedWork: work whose goroutine has not begun is
// done by its waiter, on the waiter's goroutine, once; the goroutine's
// late do is then a no-op.
func TestAheadWaitDoesUnstartedWork(t *testing.T) {
	var runs atomic.Int32
	var by string
	a := newAhead(func() { runs.Add(1); by = "waiter" })
	a.wait()
	if runs.Load() != 1 || by != "waiter" {
		t.Fatalf("wait: the work ran %d times, by %q; want once, by the waiter", runs.Load(), by)
	}
	if a.do() {
		t.Error("the late goroutine did the work again")
	}
	a.wait() // done: returns at once
	if runs.Load() != 1 {
		t.Errorf("the work ran %d times, want 1", runs.Load())
	}
}

// TestAheadWaitWaitsForWorkUnderWay: a waiter that comes while the
// goroutine does the work waits for it to finish and does not do it again.
func TestAheadWaitWaitsForWorkUnderWay(t *testing.T) {
	began, finish := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	a := newAhead(func() { runs.Add(1); close(began); <-finish })
	go a.do()
	<-began
	waited := make(chan struct{})
	go func() { a.wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("wait returned while the work was under way")
	default:
	}
	close(finish)
	<-waited
	if runs.Load() != 1 {
		t.Errorf("the work ran %d times, want 1", runs.Load())
	}
}

// TestAheadCancel: cancelling unstarted work keeps it from running (true);
// cancelling done work reports it was done (false).
func TestAheadCancel(t *testing.T) {
	var runs atomic.Int32
	a := newAhead(func() { runs.Add(1) })
	if !a.cancel() {
		t.Error("cancel of unstarted work: false, want true")
	}
	if a.do() {
		t.Error("cancelled work was done")
	}
	a.wait()
	b := newAhead(func() { runs.Add(1) })
	b.do()
	if b.cancel() {
		t.Error("cancel of done work: true, want false")
	}
	if runs.Load() != 1 {
		t.Errorf("the work ran %d times, want 1 (b's)", runs.Load())
	}
}

// TestAheadRace: however the goroutine, waiters and a canceller
// interleave, the work runs at most once, and every waiter returns after
// it (when it ran).
func TestAheadRace(t *testing.T) {
	for i := 0; i < 200; i++ {
		var runs, finished, early atomic.Int32
		a := newAhead(func() { runs.Add(1); finished.Add(1) })
		var wg sync.WaitGroup
		cancelled := atomic.Bool{}
		for j := 0; j < 4; j++ {
			wg.Add(1)
			go func(j int) {
				defer wg.Done()
				switch j {
				case 0:
					a.do()
				case 3:
					if a.cancel() {
						cancelled.Store(true)
					}
				default:
					a.wait()
					if finished.Load() != 1 {
						early.Add(1) // wrong unless it was cancelled
					}
				}
			}(j)
		}
		wg.Wait()
		if n := runs.Load(); n > 1 || (n == 0) != cancelled.Load() {
			t.Fatalf("the work ran %d times, cancelled %v", n, cancelled.Load())
		}
		if early.Load() > 0 && !cancelled.Load() {
			t.Fatalf("%d waiters returned before the work finished", early.Load())
		}
	}
}
