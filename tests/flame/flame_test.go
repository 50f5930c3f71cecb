// Package flame_test draws flame graphs of a real process: gotrace traces
// a helper with a known call chain, prints the folded stacks and writes the
// SVG, and headless Chromium renders it.
package flame_test

import (
	"bytes"
	"debug/elf"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/runtime/output"
)

// targetAfterPrologue is the offset in the uchain helper's target just
// past its frame setup ([endbr64;] push %rbp; mov %rsp,%rbp): a uprobe
// there walks the whole chain main → chain_a → chain_b → target.
func targetAfterPrologue(t *testing.T, bin string) int {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name != "target" || elf.ST_TYPE(s.Info) != elf.STT_FUNC || int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		data, err := sec.Data()
		if err != nil {
			t.Fatal(err)
		}
		code := data[s.Value-sec.Addr:]
		off := 0
		if bytes.HasPrefix(code, []byte{0xf3, 0x0f, 0x1e, 0xfa}) { // endbr64
			off = 4
		}
		if !bytes.HasPrefix(code[off:], []byte{0x55, 0x48, 0x89, 0xe5}) {
			t.Fatalf("target does not start with push %%rbp; mov %%rsp,%%rbp: % x", code[:16])
		}
		return off + 4
	}
	t.Fatalf("%s has no function target", bin)
	return 0
}

// TestFlameGraphOfHelper traces the uchain helper's known chain with
// @[kstack, ustack] (a uprobe has no kernel stack: only user frames
// fold), checks the folded line and the SVG's frames, then has Chromium
// render the SVG and checks the screenshot shows the target frame's
// colour where the SVG puts it.
func TestFlameGraphOfHelper(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.Tracefs, testkit.GCC, testkit.Chromium)
	bin := testkit.Helper(t, "uchain")
	off := targetAfterPrologue(t, bin)
	h := testkit.StartHelper(t, "uchain", "100000000000")
	h.Go()
	dir := t.TempDir()
	svgPath := filepath.Join(dir, "flame.svg")
	script := fmt.Sprintf(`uprobe:%s:target+%d /pid == %d/ { @[kstack, ustack] = count(); @n++; if (@n == 200) { exit(); } }`, bin, off, h.Pid)
	t0 := time.Now()
	tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-f", "folded", "--flamegraph", svgPath, "-e", script)
	r := tr.Wait(20 * time.Second)
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("gotrace: exit %d (timed out %v)\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.TimedOut, r.Stdout, r.Stderr)
	}
	t.Logf("traced and drew in %v", time.Since(t0).Round(time.Millisecond))

	// Folded: root first, the chain ending in target; @n folds to its name.
	m := regexp.MustCompile(`(?m)^((?:[^;\n]+;)*)main;chain_a;chain_b;target (\d+)$`).FindStringSubmatch(r.Stdout)
	if m == nil {
		t.Fatalf("no folded line ending main;chain_a;chain_b;target N:\n%s", r.Stdout)
	}
	if n, _ := strconv.Atoi(m[2]); n < 200 {
		t.Errorf("folded count %d, want at least 200 hits", n)
	}
	if strings.Contains(m[1], "chain_") {
		t.Errorf("frames below main: %q", m[1])
	}
	if !regexp.MustCompile(`(?m)^@n \d+$`).MatchString(r.Stdout) {
		t.Errorf("@n not folded to its name:\n%s", r.Stdout)
	}

	b, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	t.Logf("SVG: %d bytes", len(b))
	rects := map[string][]string{}
	for _, f := range regexp.MustCompile(`<title>([^<]*) \((\d+) samples, [0-9.]+%\)</title><rect x="([0-9.]+)" y="(\d+)" width="([0-9.]+)" height="(\d+)" rx="2" fill="rgb\((\d+),(\d+),(\d+)\)"/>`).FindAllStringSubmatch(svg, -1) {
		rects[f[1]] = f
	}
	for _, name := range []string{"main", "chain_a", "chain_b", "target"} {
		if rects[name] == nil {
			t.Errorf("no frame %s in the SVG", name)
		}
	}
	if strings.Contains(svg, "unique") || strings.Contains(svg, "<title>@n") {
		t.Errorf("the SVG draws @n, a map without stacks")
	}
	if t.Failed() {
		t.Fatalf("SVG:\n%s", svg)
	}

	// Render it. Chromium gets its own profile directory and runs in its
	// own process group, killed when done.
	shot := filepath.Join(dir, "flame.png")
	t1 := time.Now()
	cmd := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "--window-size=1200,400", "file://"+svgPath)
	cmd.Dir = dir
	res := testkit.RunBounded(t, 90*time.Second, cmd)
	if res.TimedOut || res.ExitCode != 0 {
		t.Fatalf("chromium: exit %d (timed out %v):\n%s%s", res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	}
	t.Logf("chromium screenshot in %v", time.Since(t1).Round(time.Millisecond))
	pf, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, res.Stderr)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if sz := img.Bounds().Size(); sz.X != 1200 || sz.Y != 400 {
		t.Errorf("screenshot is %v, want 1200x400", sz)
	}
	colours := map[[3]uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 2 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	if len(colours) < 8 {
		t.Errorf("screenshot has %d colours: blank?", len(colours))
	}
	// The centre of target's frame has its fill colour.
	f := rects["target"]
	x, _ := strconv.ParseFloat(f[3], 64)
	y, _ := strconv.Atoi(f[4])
	w, _ := strconv.ParseFloat(f[5], 64)
	hgt, _ := strconv.Atoi(f[6])
	want := [3]int{atoi(f[7]), atoi(f[8]), atoi(f[9])}
	if got := pixel(img, int(x+w/2), y+hgt/2); !near(got, want) {
		t.Errorf("screenshot at target's frame (%d,%d) is %v, want its fill %v", int(x+w/2), y+hgt/2, got, want)
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func pixel(img image.Image, x, y int) [3]int {
	r, g, b, _ := img.At(x, y).RGBA()
	return [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
}

// near allows for colour management's rounding.
func near(a, b [3]int) bool {
	for i := range a {
		if d := a[i] - b[i]; d > 6 || d < -6 {
			return false
		}
	}
	return true
}

// flameStacks is a small profile: main calls work, which calls leaf (55
// samples), spends 25 in itself and 10 in a page fault; 4 samples are in
// other.
func flameStacks() []output.FoldedStack {
	u := func(n string) output.FoldedFrame { return output.FoldedFrame{Name: n, Kind: output.FrameUser} }
	k := func(n string) output.FoldedFrame { return output.FoldedFrame{Name: n, Kind: output.FrameKernel} }
	return []output.FoldedStack{
		{Frames: []output.FoldedFrame{u("main"), u("work"), u("leaf")}, Value: 55},
		{Frames: []output.FoldedFrame{u("main"), u("work")}, Value: 25},
		{Frames: []output.FoldedFrame{u("main"), u("work"), k("asm_exc_page_fault"), k("clear_page")}, Value: 10},
		{Frames: []output.FoldedFrame{u("other")}, Value: 4},
	}
}

// dumpDOM has Chromium load the SVG, run drive (JavaScript, after the
// graph's own init) and print the resulting document.
func dumpDOM(t *testing.T, svg, drive string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "flame.svg")
	inj := `<script><![CDATA[window.addEventListener("load", function () {` + drive + `});]]></script></svg>`
	if err := os.WriteFile(path, []byte(strings.Replace(svg, "</svg>", inj, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+path)
	res := testkit.RunBounded(t, 90*time.Second, cmd)
	if res.TimedOut || res.ExitCode != 0 {
		t.Fatalf("chromium --dump-dom: exit %d (timed out %v):\n%s", res.ExitCode, res.TimedOut, res.Stderr)
	}
	return res.Stdout
}

// frameState is a frame's class and rect after the script ran.
func frameState(t *testing.T, dom, name string) (class, x, width string) {
	t.Helper()
	m := regexp.MustCompile(`<g class="([^"]*)" data-x="\d+" data-w="\d+" data-d="\d+"><title>` + regexp.QuoteMeta(name) + ` \(\d+ samples, [0-9.]+%\)</title><rect x="([0-9.]+)" y="\d+" width="([0-9.]+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no frame %s in the document:\n%s", name, dom)
	}
	return m[1], m[2], m[3]
}

// TestFlameGraphScript runs the SVG's own script in Chromium: a click's
// zoom on work widens it to the whole width (its callees in proportion,
// in name order: the page fault, then leaf;
// main and the root faded behind it, other hidden), a search counts nested
// matches once, and Reset Zoom puts everything back.
func TestFlameGraphScript(t *testing.T) {
	testkit.Require(t, testkit.Chromium)
	var sb strings.Builder
	if err := output.WriteFlameGraph(&sb, flameStacks(), "script test"); err != nil {
		t.Fatal(err)
	}
	svg := sb.String()
	clickWork := `var g = frames.filter(function (f) { return name(f) === "work"; })[0]; g.dispatchEvent(new MouseEvent("click"));`
	dom := dumpDOM(t, svg, clickWork+` window.prompt = function () { return "leaf|page|clear"; }; search();`)
	for name, want := range map[string][3]string{
		"work":  {"f", "10.00", "1180.00"},
		"leaf":  {"f match", fmt.Sprintf("%.2f", 10+10*1180.0/90), fmt.Sprintf("%.2f", 55*1180.0/90)},
		"main":  {"f anc", "10.00", "1180.00"},
		"all":   {"f anc", "10.00", "1180.00"},
		"other": {"f hide", "", ""},
	} {
		class, x, w := frameState(t, dom, name)
		if class != want[0] || (want[1] != "" && (x != want[1] || w != want[2])) {
			t.Errorf("after zooming on work, %s: class %q x %s width %s, want %q %s %s", name, class, x, w, want[0], want[1], want[2])
		}
	}
	// leaf (55) and the page fault (10, with clear_page nested in it) of 94.
	if want := fmt.Sprintf("Matched: %.1f%%", 100*65.0/94); !strings.Contains(dom, want) {
		t.Errorf("no %q in the document", want)
	}
	if !strings.Contains(dom, `id="unzoom" class="btn"`) {
		t.Errorf("Reset Zoom not shown after zooming")
	}

	dom = dumpDOM(t, svg, clickWork+` unzoom();`)
	for name, want := range map[string][2]string{
		"work":  {"10.00", fmt.Sprintf("%.2f", 90*1180.0/94)},
		"other": {fmt.Sprintf("%.2f", 10+90*1180.0/94), fmt.Sprintf("%.2f", 4*1180.0/94)},
	} {
		class, x, w := frameState(t, dom, name)
		if class != "f" || x != want[0] || w != want[1] {
			t.Errorf("after Reset Zoom, %s: class %q x %s width %s, want x %s width %s", name, class, x, w, want[0], want[1])
		}
	}
}

// TestFoldedKernelAndUser folds real kernel and user stacks together: the
// naps helper's system calls (nanosleeps), @[kstack, ustack] at
// raw_syscalls:sys_enter until 200 of them. Every line has the user
// frames first (libc's nanosleep) and the kernel's syscall entry on top
// of them; the lines' counts add up to @n, the calls counted, and the
// attach message stays off stdout.
func TestFoldedKernelAndUser(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.Tracefs, testkit.GCC)
	h := testkit.StartHelper(t, "naps", "1000000", "100")
	h.Go()
	tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-f", "folded", "-e",
		fmt.Sprintf(`tracepoint:raw_syscalls:sys_enter /pid == %d/ { @[kstack, ustack] = count(); @n++; if (@n == 200) { exit(); } }`, h.Pid))
	r := tr.Wait(20 * time.Second)
	if r.ExitCode != 0 || r.TimedOut {
		t.Fatalf("gotrace: exit %d (timed out %v)\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.TimedOut, r.Stdout, r.Stderr)
	}
	total, n := 0, -1
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("not a folded line: %q\n%s", line, r.Stdout)
		}
		v, err := strconv.Atoi(line[i+1:])
		if err != nil {
			t.Fatalf("not a folded line: %q\n%s", line, r.Stdout)
		}
		if line[:i] == "@n" {
			n = v
			continue
		}
		total += v
		frames := strings.Split(line[:i], ";")
		entry := slices.IndexFunc(frames, func(f string) bool { return strings.HasPrefix(f, "entry_SYSCALL_64") })
		if entry < 1 || !slices.Contains(frames[entry:], "do_syscall_64") || !strings.Contains(strings.Join(frames[:entry], ";"), "nanosleep") {
			t.Errorf("want libc's nanosleep below entry_SYSCALL_64, do_syscall_64 above: %q", line)
		}
	}
	if n < 200 || total != n {
		t.Errorf("folded counts add up to %d, @n is %d (want at least 200):\n%s", total, n, r.Stdout)
	}
}
