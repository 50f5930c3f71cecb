package lang

import (
	"fmt"
	"strings"
)

// HintError is an error whose diagnostic has a hint line ("HINT: ...").
type HintError struct {
	Msg, Hint string
}

func (e *HintError) Error() string { return e.Msg }

// Suggest returns the "did you mean" hint for a misspelt name: the
// candidate fewest edits away (at most a third of the name's length), or
// "" if none is that close. Among equally close candidates it prefers one
// the name is a subsequence of (a dropped letter, the commonest typo:
// "prinf" is "printf" rather than "print"), then the alphabetically first.
func Suggest(name string, candidates []string) string {
	best, bestD, bestSub := "", 1<<30, false
	lname := strings.ToLower(name)
	for _, cand := range candidates {
		if cand == name {
			continue
		}
		lc := strings.ToLower(cand)
		d := EditDistance(lname, lc)
		sub := isSubsequence(lname, lc)
		if d < bestD || (d == bestD && sub && !bestSub) || (d == bestD && sub == bestSub && cand < best) {
			best, bestD, bestSub = cand, d, sub
		}
	}
	limit := max(1, len(strings.TrimLeft(name, "$@"))/3)
	if best == "" || bestD > limit || bestD >= len(name) {
		return ""
	}
	return fmt.Sprintf("did you mean %q?", best)
}

func isSubsequence(a, b string) bool {
	i := 0
	for j := 0; j < len(b) && i < len(a); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

// EditDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of adjacent characters each cost 1, so
// a typo like "pdi" for "pid" is one edit away.
func EditDistance(a, b string) int {
	pp := make([]int, len(b)+1) // row i-2, for transpositions
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}
