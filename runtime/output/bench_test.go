package output

import (
	"bytes"
	"testing"
)

// TestBenchmarks: bpftrace 0.26's benchmark table and JSON record.
func TestBenchmarks(t *testing.T) {
	res := []Bench{{Name: "a", AvgNs: 123, Iters: 1000}, {Name: "longer", AvgNs: 4, Iters: 7}}
	var b bytes.Buffer
	p := New(&b, Text, nil)
	if err := p.Benchmarks(res); err != nil {
		t.Fatal(err)
	}
	want := "Benchmark                                Time(ns)       Iterations\n" +
		"------------------------------------------------------------------\n" +
		"a                                        123            1000\n" +
		"longer                                   4              7\n"
	if b.String() != want {
		t.Errorf("text:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	p = New(&b, JSON, nil)
	if err := p.Benchmarks(res); err != nil {
		t.Fatal(err)
	}
	if want := `{"type": "benchmark_result", "data": {"a": {"average": 123, "iters": 1000}, "longer": {"average": 4, "iters": 7}}}` + "\n"; b.String() != want {
		t.Errorf("json: %q, want %q", b.String(), want)
	}
}
