package output

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// TestFormatAgreesWithChecker: for generated formats, the printer takes
// exactly the arguments the checker counts (stdlib.ParseFormat) and never
// fails on a format the checker accepted; text that is no conversion,
// known or not, prints as written. Both read lang/printf's scanner; this
// fails if either goes its own way again.
func TestFormatAgreesWithChecker(t *testing.T) {
	const alphabet = "%%%-+ #0123456789.hlLjztqdiuxXocsprab\n"
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 20000; n++ {
		var sb strings.Builder
		for k := r.Intn(12); k >= 0; k-- {
			sb.WriteByte(alphabet[r.Intn(len(alphabet))])
		}
		f := sb.String()
		verbs := stdlib.ParseFormat(f)
		args := make([]Value, len(verbs))
		for i, v := range verbs {
			switch v.ArgClass() {
			case "string":
				args[i] = Value{Type: types.StringType(4), Bytes: []byte("str")}
			case "buffer":
				args[i] = Value{Type: &types.Type{Kind: types.Buffer, Size: 2}, Bytes: []byte{1, 2}}
			default:
				args[i] = Value{Type: types.U64, Bits: 7}
			}
		}
		var out strings.Builder
		if err := Printf(&out, f, args); err != nil {
			t.Fatalf("format %q: the checker counts %d conversions, the printer says: %v", f, len(verbs), err)
		}
		if len(verbs) > 0 {
			if err := Printf(&strings.Builder{}, f, args[:len(verbs)-1]); err == nil {
				t.Fatalf("format %q: %d conversions, the printer took %d arguments", f, len(verbs), len(verbs)-1)
			}
		}
	}
	// Unknown conversions print as written.
	var out strings.Builder
	if err := Printf(&out, "a %q b %d %", []Value{{Type: types.U64, Bits: 5}}); err != nil || out.String() != "a %q b 5 %" {
		t.Errorf("got %q, %v", out.String(), err)
	}
}
