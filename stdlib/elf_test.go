package stdlib

import (
	"testing"

	"github.com/gotrace/gotrace/internal/testkit"
)

// uaddr's pointee width comes from the symbol's size.
func TestElfSymbolSize(t *testing.T) {
	bin := testkit.Helper(t, "ufunc")
	if n := ElfSymbolSize(bin, "origin"); n != 24 {
		t.Errorf("size of origin = %d, want 24 (struct point)", n)
	}
	if n := ElfSymbolSize(bin, "no_such_symbol"); n != 0 {
		t.Errorf("size of a missing symbol = %d, want 0", n)
	}
	if a, err := ElfSymbol(bin, "origin"); err != nil || a == 0 {
		t.Errorf("ElfSymbol(origin) = %#x, %v", a, err)
	}
}
