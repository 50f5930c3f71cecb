package lang

import "testing"

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cands []string
		want  string
	}{
		{"prinf", []string{"print", "printf", "pid"}, `did you mean "printf"?`}, // dropped letter beats a substitution
		{"pdi", []string{"pid", "tid"}, `did you mean "pid"?`},                 // a swap is one edit
		{"cuont", []string{"count", "sum"}, `did you mean "count"?`},
		{"xyz", []string{"count", "sum"}, ""},         // too far
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
	for k := range providerAliases {
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
