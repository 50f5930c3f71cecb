package output

import (
	"math/rand"
	"sort"
	"testing"
)

// TestStableSortMatchesSliceStable: stableSort gives sort.SliceStable's
// order (equal rows keep their order) on rows with many ties.
func TestStableSortMatchesSliceStable(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 2, 7, 100, 5000} {
		rows := make([]row, n)
		for i := range rows {
			rows[i] = row{uscalar: uint64(rng.Intn(10)), count: int64(i)} // count: the original position
		}
		want := append([]row(nil), rows...)
		sort.SliceStable(want, func(i, j int) bool { return want[i].uscalar < want[j].uscalar })
		stableSort(rows, func(a, b *row) bool { return a.uscalar < b.uscalar })
		for i := range rows {
			if rows[i].uscalar != want[i].uscalar || rows[i].count != want[i].count {
				t.Fatalf("n=%d: row %d = (%d, was %d), want (%d, was %d)", n, i, rows[i].uscalar, rows[i].count, want[i].uscalar, want[i].count)
			}
		}
	}
}
