package lang

import "testing"

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cands []string
		want  string
	}{
		{"prinf", []string{"print", "printf", "pid"}, `did you mean "printf"?`}, // dropped letter beats a substitution
		{"pdi", []string{"pid", "tid"}, `did you mean "pid"?`},                  // a swap is one edit
		{"cuont", []string{"count", "sum"}, `did you mean "count"?`},
		{"xyz", []string{"count", "sum"}, ""}, // too far
		{"tracepiont", providerNames(), `did you mean "tracepoint"?`},
		{"kpobe", providerNames(), `did you mean "kprobe"?`},
		{"uprobe", []string{"uprobe"}, ""}, // the name itself is no suggestion
	} {
		if got := Suggest(tc.name, tc.cands); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func providerNames() []string {
	var n []string
	for k := range spellings {
		n = append(n, k)
	}
	return n
}

// A misspelt provider's diagnostic carries the hint.
func TestProviderHint(t *testing.T) {
	_, err := Parse(&Source{Name: "stdin", Text: "kretprob:vfs_read { }"})
	want := "stdin:1:1-18: ERROR: invalid provider name: kretprob\nkretprob:vfs_read { }\n~~~~~~~~~~~~~~~~~\nHINT: did you mean \"kretprobe\"?"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"pid", "pid", 0}, {"", "abc", 3}, {"abc", "", 3},
		{"pdi", "pid", 1},   // adjacent swap
		{"tigd", "tgid", 1}, // adjacent swap
		{"pi", "pid", 1}, {"pod", "pid", 1}, {"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment: no edit of a swapped pair
	} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := EditDistance(c.b, c.a); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}
