package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/format"
)

// formatScript is --fmt (--mode format), as bpftrace 0.26: the script is
// only parsed (no privileges, no kernel), then printed in canonical form
// to stdout, or with -o FILE to FILE, replaced atomically (written to a
// temporary file beside it, then renamed). A script that does not parse
// prints its errors and exits 1.
func formatScript(c *config, src *lang.Source, stdout, stderr io.Writer) int {
	out, err := format.Source(src)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	if c.output == "" {
		io.WriteString(stdout, out)
		return 0
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.output), filepath.Base(c.output)+".*")
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: unable to create temporary file: %v\n", err)
		return 1
	}
	_, werr := tmp.WriteString(out)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), c.output)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		fmt.Fprintf(stderr, "ERROR: failed to write '%s': %v\n", c.output, werr)
		return 1
	}
	return 0
}
