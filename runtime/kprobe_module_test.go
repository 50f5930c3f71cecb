package runtime

import (
	"os"
	"testing"

	"github.com/gotrace/gotrace/lang"
)

// TestKprobeModuleLoaded: kprobe:MODULE:FUNC for a module that is not
// loaded is bpftrace 0.26's error; a loaded module, vmlinux, a pattern or
// no module pass.
func TestKprobeModuleLoaded(t *testing.T) {
	ap, err := lang.ParseAttachPoint("kprobe:nonsense:vfs_read", lang.Span{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = kprobeProvider{probeSide{kind: lang.ProbeKprobe}}.Expand(ap, &Env{})
	if want := "specified module nonsense in probe kprobe:nonsense:vfs_read is not loaded."; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	loaded := ""
	if ents, err := os.ReadDir("/sys/module"); err == nil && len(ents) > 0 {
		loaded = ents[0].Name()
	}
	for _, raw := range []string{"kprobe:vmlinux:vfs_read", "kprobe:vfs_read", "kretprobe:nonsen*:vfs_read", "kprobe:" + loaded + ":f"} {
		if loaded == "" && raw == "kprobe::f" {
			continue
		}
		ap, err := lang.ParseAttachPoint(raw, lang.Span{})
		if err != nil {
			t.Fatal(err)
		}
		if err := moduleLoaded(ap); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
