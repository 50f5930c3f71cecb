package output

import (
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang/types"
)

// filterSyms answers cgroup_path(id, filter) with the filter it was given.
type filterSyms struct{ fakeSyms }

func (filterSyms) CgroupPathFilter(id uint64, filter string) string {
	return "filtered(" + filter + ")"
}

// TestCgroupPathFilter: cgroup_path(id, "cpu*") carries its filter in the
// type's Name to a Symbolizer that can filter; without one, or without a
// filter, the plain CgroupPath text.
func TestCgroupPathFilter(t *testing.T) {
	var sb strings.Builder
	p := New(&sb, 0, filterSyms{})
	v, err := Decode(&types.Type{Kind: types.CgroupPath, Size: 8, Name: "cpu*"}, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Text(v); got != "filtered(cpu*)" {
		t.Errorf("with filter: %q", got)
	}
	v.Type = &types.Type{Kind: types.CgroupPath, Size: 8}
	if got := p.Text(v); got != "unified:/" {
		t.Errorf("without filter: %q", got)
	}
	p = New(&sb, 0, fakeSyms{})
	v.Type = &types.Type{Kind: types.CgroupPath, Size: 8, Name: "cpu*"}
	if got := p.Text(v); got != "unified:/" {
		t.Errorf("symbolizer without filtering: %q", got)
	}
}
