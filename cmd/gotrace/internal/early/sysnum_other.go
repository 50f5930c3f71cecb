//go:build !amd64 && !arm64

package early

const sysBPF = 0 // unknown here: no early ring (init checks)
