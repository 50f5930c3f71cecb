// Package vmtest boots a Debian kernel under qemu (software emulation) with
// an initramfs whose /init is the static test binary of ./guest, to run the
// probe types this project's CI kernel cannot attach (kprobe, kretprobe,
// kfunc, kretfunc). See vmtest_test.go.
package vmtest

import (
	"fmt"
	"io"
)

// CPIOFile is one entry of an initramfs.
type CPIOFile struct {
	Name  string // without a leading slash: "init", "dev/console"
	Mode  uint32 // type and permission bits (0o100755, 0o40755, 0o20600 ...)
	Data  []byte
	Major uint32 // device number, for device nodes
	Minor uint32
}

// WriteCPIO writes files as a newc ("070701") cpio archive, the format the
// kernel unpacks as an initramfs.
func WriteCPIO(w io.Writer, files []CPIOFile) error {
	ino := uint32(1)
	write := func(f CPIOFile) error {
		name := f.Name + "\x00"
		nlink := 1
		if f.Mode&0o170000 == 0o040000 {
			nlink = 2
		}
		hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
			ino, f.Mode, 0, 0, nlink, 0, len(f.Data), 0, 0, f.Major, f.Minor, len(name), 0)
		ino++
		buf := append([]byte(hdr), name...)
		buf = append(buf, make([]byte, pad4(len(buf)))...)
		if _, err := w.Write(buf); err != nil {
			return err
		}
		if _, err := w.Write(f.Data); err != nil {
			return err
		}
		_, err := w.Write(make([]byte, pad4(len(f.Data))))
		return err
	}
	for _, f := range files {
		if err := write(f); err != nil {
			return fmt.Errorf("write cpio %s: %w", f.Name, err)
		}
	}
	return write(CPIOFile{Name: "TRAILER!!!"})
}

func pad4(n int) int { return (4 - n%4) % 4 }
