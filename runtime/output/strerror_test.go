package output

import "testing"

// TestStrerror: glibc's wording by number; numbers the table lacks (a gap,
// negative, past its end) are "Unknown error N".
func TestStrerror(t *testing.T) {
	for errno, want := range map[int64]string{
		0:   "Success",
		2:   "No such file or directory",
		133: "Memory page has hardware error",
		41:  "Unknown error 41",
		134: "Unknown error 134",
		-1:  "Unknown error -1",
	} {
		if got := Strerror(errno); got != want {
			t.Errorf("Strerror(%d) = %q, want %q", errno, got, want)
		}
	}
}
