module github.com/gotrace/gotrace

go 1.26.8

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/cilium/ebpf v0.22.0
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	golang.org/x/sys v0.50.0
)

require github.com/rogpeppe/go-internal v1.16.0 // indirect

replace github.com/alecthomas/participle/v2 => ./third_party/participle
