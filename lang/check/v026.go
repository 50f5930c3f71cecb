package check

import "github.com/gotrace/gotrace/lang/types"

// truth is the type of a comparison, `!`, `&&` or `||`: bool in bpftrace
// 0.26, legacy (an integer type) in 0.17.
func (c *checker) truth(legacy *types.Type) *types.Type {
	if c.opts.Compat.BoolWords() {
		return types.BoolType
	}
	return legacy
}
