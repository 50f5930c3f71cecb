package output

import (
	"fmt"
	"strings"
	"time"
)

var (
	shortDays   = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	longDays    = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	shortMonths = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	longMonths  = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
)

// Strftime formats t as C's strftime in the C locale, plus bpftrace's %f
// (microseconds, 6 digits). Unknown conversions are copied as written, as
// glibc does.
func Strftime(format string, t time.Time) string {
	var sb strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			sb.WriteByte(c)
			continue
		}
		i++
		v := format[i]
		// glibc accepts E and O modifiers; in the C locale they change nothing.
		if (v == 'E' || v == 'O') && i+1 < len(format) {
			i++
			v = format[i]
		}
		switch v {
		case '%':
			sb.WriteByte('%')
		case 'a':
			sb.WriteString(shortDays[t.Weekday()])
		case 'A':
			sb.WriteString(longDays[t.Weekday()])
		case 'b', 'h':
			sb.WriteString(shortMonths[t.Month()-1])
		case 'B':
			sb.WriteString(longMonths[t.Month()-1])
		case 'c':
			sb.WriteString(Strftime("%a %b %e %H:%M:%S %Y", t))
		case 'C':
			fmt.Fprintf(&sb, "%02d", t.Year()/100)
		case 'd':
			fmt.Fprintf(&sb, "%02d", t.Day())
		case 'D':
			sb.WriteString(Strftime("%m/%d/%y", t))
		case 'e':
			fmt.Fprintf(&sb, "%2d", t.Day())
		case 'f':
			fmt.Fprintf(&sb, "%06d", t.Nanosecond()/1000)
		case 'F':
			sb.WriteString(Strftime("%Y-%m-%d", t))
		case 'g':
			y, _ := t.ISOWeek()
			fmt.Fprintf(&sb, "%02d", y%100)
		case 'G':
			y, _ := t.ISOWeek()
			fmt.Fprintf(&sb, "%d", y)
		case 'H':
			fmt.Fprintf(&sb, "%02d", t.Hour())
		case 'I':
			fmt.Fprintf(&sb, "%02d", hour12(t))
		case 'j':
			fmt.Fprintf(&sb, "%03d", t.YearDay())
		case 'k':
			fmt.Fprintf(&sb, "%2d", t.Hour())
		case 'l':
			fmt.Fprintf(&sb, "%2d", hour12(t))
		case 'm':
			fmt.Fprintf(&sb, "%02d", int(t.Month()))
		case 'M':
			fmt.Fprintf(&sb, "%02d", t.Minute())
		case 'n':
			sb.WriteByte('\n')
		case 'p':
			if t.Hour() < 12 {
				sb.WriteString("AM")
			} else {
				sb.WriteString("PM")
			}
		case 'P':
			if t.Hour() < 12 {
				sb.WriteString("am")
			} else {
				sb.WriteString("pm")
			}
		case 'r':
			sb.WriteString(Strftime("%I:%M:%S %p", t))
		case 'R':
			sb.WriteString(Strftime("%H:%M", t))
		case 's':
			fmt.Fprintf(&sb, "%d", t.Unix())
		case 'S':
			fmt.Fprintf(&sb, "%02d", t.Second())
		case 't':
			sb.WriteByte('\t')
		case 'T', 'X':
			sb.WriteString(Strftime("%H:%M:%S", t))
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			fmt.Fprintf(&sb, "%d", wd)
		case 'U':
			fmt.Fprintf(&sb, "%02d", (t.YearDay()+6-int(t.Weekday()))/7)
		case 'V':
			_, w := t.ISOWeek()
			fmt.Fprintf(&sb, "%02d", w)
		case 'w':
			fmt.Fprintf(&sb, "%d", int(t.Weekday()))
		case 'W':
			fmt.Fprintf(&sb, "%02d", (t.YearDay()+6-(int(t.Weekday())+6)%7)/7)
		case 'x':
			sb.WriteString(Strftime("%m/%d/%y", t))
		case 'y':
			fmt.Fprintf(&sb, "%02d", t.Year()%100)
		case 'Y':
			fmt.Fprintf(&sb, "%d", t.Year())
		case 'z':
			_, off := t.Zone()
			sign := '+'
			if off < 0 {
				sign, off = '-', -off
			}
			fmt.Fprintf(&sb, "%c%02d%02d", sign, off/3600, off%3600/60)
		case 'Z':
			name, _ := t.Zone()
			sb.WriteString(name)
		default:
			sb.WriteByte('%')
			sb.WriteByte(v)
		}
	}
	return sb.String()
}

func hour12(t time.Time) int {
	h := t.Hour() % 12
	if h == 0 {
		h = 12
	}
	return h
}
