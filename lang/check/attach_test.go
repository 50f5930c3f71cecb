package check

import (
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang"
)

func TestAttachParams(t *testing.T) {
	for _, c := range []struct {
		src    string
		params []string
		want   string // provider/target/func of the first attach point, or the error
	}{
		{`BEG$1 { exit(); }`, []string{"IN"}, "BEGIN//"},
		{`uprobe:$1:func { exit(); }`, []string{"/bin/bash"}, "uprobe//bin/bash/func"},
		{`uprobe:$1:$2 { exit(); }`, []string{"/bin/sh", "main"}, "uprobe//bin/sh/main"},
		{`t:syscalls:sys_enter_$1 { exit(); }`, []string{"read"}, "tracepoint/syscalls/sys_enter_read"},
		{`BEG$1 { exit(); }`, nil, "stdin:1:1-6: ERROR: invalid attach point: BEG (expected provider:target, BEGIN or END)"},
		{`BEG$2 { exit(); }`, []string{"IN"}, "stdin:1:1-6: ERROR: invalid attach point: BEG (expected provider:target, BEGIN or END)"},
	} {
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: c.src})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if ap := prog.Probes[0].Attach[0]; ap.Provider != lang.ProbeNone {
			t.Errorf("%s: the parser resolved the attach point before the parameters were known: %+v", c.src, ap)
		}
		_, err = Check(prog, Options{Resolver: fakeResolver{}, Params: c.params})
		got := ""
		if err != nil {
			got = strings.SplitN(err.Error(), "\n", 2)[0]
		} else {
			ap := prog.Probes[0].Attach[0]
			got = ap.Provider.String() + "/" + ap.Target + "/" + ap.Func
			if strings.Contains(ap.Raw, "$") {
				t.Errorf("%s: Raw %q not substituted", c.src, ap.Raw)
			}
		}
		if got != c.want {
			t.Errorf("%s %q: got %q, want %q", c.src, c.params, got, c.want)
		}
	}
}
