package output

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// The flame graph's geometry, in SVG user units (pixels).
const (
	flameWidth    = 1200
	flamePad      = 10 // left and right margins
	flameFrame    = 16 // height of one frame
	flameTop      = 52 // title, subtitle and buttons
	flameBottom   = 28 // the details line
	flameFont     = 12
	flameCharW    = 0.59 * flameFont // average glyph width of the font
	flameMinWidth = 0.1              // frames narrower than this are left out
)

// FlameStacks folds every stack-keyed map, in name order, into one list
// of stacks for a flame graph. Maps without a kstack or ustack key are
// not drawn.
func (p *Printer) FlameStacks(maps []MapData) ([]FoldedStack, error) {
	sorted := append([]MapData(nil), maps...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Info.Name < sorted[j].Info.Name })
	var all []FoldedStack
	for _, m := range sorted {
		if !HasStackKey(m) {
			continue
		}
		stacks, _, err := p.Folded(m)
		if err != nil {
			return nil, err
		}
		all = append(all, stacks...)
	}
	return all, nil
}

// WriteFlameGraphFile writes the flame graph of the stack-keyed maps to
// path (--flamegraph FILE).
func (p *Printer) WriteFlameGraphFile(path string, maps []MapData) error {
	stacks, err := p.FlameStacks(maps)
	if err != nil {
		return fmt.Errorf("flame graph: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("flame graph: %w", err)
	}
	w := bufio.NewWriter(f)
	err = WriteFlameGraph(w, stacks, p.FlameTitle)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("flame graph %s: %w", path, err)
	}
	return nil
}

// flameNode is one frame of the merged call tree.
type flameNode struct {
	name     string
	kind     FrameKind
	value    uint64
	children map[string]*flameNode
	isRoot   bool
}

func (n *flameNode) child(f FoldedFrame) *flameNode {
	key := strconv.Itoa(int(f.Kind)) + f.Name
	c := n.children[key]
	if c == nil {
		c = &flameNode{name: f.Name, kind: f.Kind, children: map[string]*flameNode{}}
		n.children[key] = c
	}
	return c
}

func (n *flameNode) sortedChildren() []*flameNode {
	cs := make([]*flameNode, 0, len(n.children))
	for _, c := range n.children {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].name != cs[j].name {
			return cs[i].name < cs[j].name
		}
		return cs[i].kind < cs[j].kind
	})
	return cs
}

// flameRect is one drawn frame: its place in samples (x, w) and depth.
type flameRect struct {
	node  *flameNode
	x     uint64
	depth int
}

// WriteFlameGraph writes an interactive SVG flame graph of the stacks: the
// root ("all") at the bottom, callees above their callers, each frame as
// wide as its samples; children sorted by name, as flame graphs are.
// Colours: warm for user frames, aqua for kernel frames, grey for the
// other key parts. The embedded script zooms on a click (frames below
// the clicked one stay, faded, as its ancestors), searches frame names by
// regular expression (ctrl-F or the Search button; the matched share of
// all samples is shown) and shows a frame's samples on hover; without
// scripts the SVG is still a plain picture with <title> tooltips.
func WriteFlameGraph(w io.Writer, stacks []FoldedStack, title string) error {
	if title == "" {
		title = "Flame Graph"
	}
	root := &flameNode{name: "all", children: map[string]*flameNode{}, isRoot: true}
	for _, s := range stacks {
		root.value += s.Value
		n := root
		for _, f := range s.Frames {
			n = n.child(f)
			n.value += s.Value
		}
	}
	total := root.value
	inner := float64(flameWidth - 2*flamePad)
	scale := 0.0
	if total > 0 {
		scale = inner / float64(total)
	}
	// Lay out depth first, left to right, leaving out frames too narrow
	// to see (their children are narrower still).
	var rects []flameRect
	maxDepth := 0
	var walk func(n *flameNode, x uint64, depth int)
	walk = func(n *flameNode, x uint64, depth int) {
		if float64(n.value)*scale < flameMinWidth && depth > 0 {
			return
		}
		rects = append(rects, flameRect{node: n, x: x, depth: depth})
		if depth > maxDepth {
			maxDepth = depth
		}
		for _, c := range n.sortedChildren() {
			walk(c, x, depth+1)
			x += c.value
		}
	}
	walk(root, 0, 0)
	height := flameTop + (maxDepth+1)*flameFrame + flameBottom

	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" onload="init(evt)" data-total="%d" data-pad="%d" data-charw="%.2f">
<!-- Flame graph drawn by gotrace: %d samples, %d frames -->
<defs><linearGradient id="bg" x1="0" y1="0" x2="0" y2="1"><stop stop-color="#eeeeee" offset="5%%"/><stop stop-color="#eeeeb0" offset="95%%"/></linearGradient></defs>
<style type="text/css">
text { font-family: Verdana, sans-serif; font-size: %dpx; fill: #000; }
#title { font-size: 17px; text-anchor: middle; }
#sub { font-size: 12px; text-anchor: middle; fill: #555; }
.btn { cursor: pointer; fill: #333; }
.btn:hover { text-decoration: underline; }
.f { cursor: pointer; }
.f:hover rect { stroke: #000; stroke-width: 0.5; }
.f text { pointer-events: none; }
.anc rect { opacity: 0.5; }
.hide { display: none; }
.match rect { fill: #e040e0 !important; }
</style>
<script type="text/ecmascript"><![CDATA[
%s]]></script>
<rect x="0" y="0" width="%d" height="%d" fill="url(#bg)"/>
<text id="title" x="%d" y="24">%s</text>
<text id="sub" x="%d" y="42">user frames warm, kernel frames aqua, other keys grey; click to zoom, ctrl-F to search</text>
<text id="unzoom" class="btn hide" x="%d" y="24" onclick="unzoom()">Reset Zoom</text>
<text id="search" class="btn" x="%d" y="24" text-anchor="end" onclick="search()">Search</text>
<text id="matched" x="%d" y="%d" text-anchor="end"> </text>
<text id="details" x="%d" y="%d"> </text>
<g id="frames">
`, flameWidth, height, flameWidth, height, total, flamePad, flameCharW, total, len(rects),
		flameFont, flameScript, flameWidth, height,
		flameWidth/2, xmlEscape(title), flameWidth/2,
		flamePad, flameWidth-flamePad, flameWidth-flamePad, height-10, flamePad, height-10)
	for _, r := range rects {
		n := r.node
		x := float64(flamePad) + float64(r.x)*scale
		wd := float64(n.value) * scale
		y := height - flameBottom - (r.depth+1)*flameFrame
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(n.value) / float64(total)
		}
		name := xmlEscape(n.name)
		fmt.Fprintf(b, `<g class="f" data-x="%d" data-w="%d" data-d="%d"><title>%s (%d samples, %.2f%%)</title><rect x="%.2f" y="%d" width="%.2f" height="%d" rx="2" fill="%s"/><text x="%.2f" y="%d">%s</text></g>`+"\n",
			r.x, n.value, r.depth, name, n.value, pct,
			x, y, wd, flameFrame-1, flameColor(n),
			x+3, y+flameFrame-4, xmlEscape(fitLabel(n.name, wd)))
	}
	b.WriteString("</g>\n</svg>\n")
	return b.Flush()
}

// fitLabel is as much of name as fits in width pixels ("..." when cut;
// nothing when not even two characters fit). The script does the same
// when it zooms.
func fitLabel(name string, width float64) string {
	n := int((width - 6) / flameCharW)
	r := []rune(name)
	switch {
	case n >= len(r):
		return name
	case n < 3:
		return ""
	}
	return string(r[:n-2]) + ".."
}

// flameColor is a frame's fill: a colour of its kind, varied by a hash of
// its name so that neighbours differ and a function keeps its colour.
func flameColor(n *flameNode) string {
	h := fnv.New32a()
	h.Write([]byte(n.name))
	v := h.Sum32()
	a, b := float64(v&0xff)/255, float64((v>>8)&0xff)/255
	var r, g, bl int
	switch {
	case n.isRoot:
		r, g, bl = 220, 220, 220
	case n.kind == FrameKernel:
		r, g, bl = int(50+60*a), int(190+50*b), int(190+50*b)
	case n.kind == FrameUser:
		r, g, bl = int(205+50*a), int(230*b), int(55*a)
	default:
		c := int(170 + 50*a)
		r, g, bl = c, c, c+10
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, bl)
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}

// flameScript is the flame graph's behaviour: zoom, search, details.
const flameScript = `var svg, frames, details, matched, unzoomBtn, total, pad, charw, width, re = null;
function init(evt) {
	svg = document.documentElement;
	frames = Array.prototype.slice.call(document.getElementById("frames").children);
	details = document.getElementById("details").firstChild;
	matched = document.getElementById("matched").firstChild;
	unzoomBtn = document.getElementById("unzoom");
	total = +svg.getAttribute("data-total");
	pad = +svg.getAttribute("data-pad");
	charw = +svg.getAttribute("data-charw");
	width = +svg.getAttribute("width") - 2 * pad;
	frames.forEach(function (g) {
		g.addEventListener("click", function () { zoom(g); });
		g.addEventListener("mouseover", function () { details.nodeValue = g.querySelector("title").textContent; });
		g.addEventListener("mouseout", function () { details.nodeValue = " "; });
	});
	window.addEventListener("keydown", function (e) {
		if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); search(); }
		if (e.key === "Escape") { unzoom(); clearSearch(); }
	});
}
function fx(g) { return +g.getAttribute("data-x"); }
function fw(g) { return +g.getAttribute("data-w"); }
function fd(g) { return +g.getAttribute("data-d"); }
function name(g) { var t = g.querySelector("title").textContent; return t.substring(0, t.lastIndexOf(" (")); }
function place(g, x, w) {
	var r = g.querySelector("rect"), t = g.querySelector("text");
	r.setAttribute("x", x.toFixed(2));
	r.setAttribute("width", w.toFixed(2));
	t.setAttribute("x", (x + 3).toFixed(2));
	var s = name(g), n = Math.floor((w - 6) / charw);
	t.textContent = n >= s.length ? s : (n < 3 ? "" : s.substring(0, n - 2) + "..");
}
function zoom(z) {
	var x0 = fx(z), w0 = fw(z), d0 = fd(z), scale = width / w0;
	frames.forEach(function (g) {
		var x = fx(g), w = fw(g), d = fd(g);
		g.classList.remove("hide", "anc");
		if (d < d0 && x <= x0 && x + w >= x0 + w0) {
			g.classList.add("anc");
			place(g, pad, width);
		} else if (d >= d0 && x >= x0 && x + w <= x0 + w0) {
			place(g, pad + (x - x0) * scale, w * scale);
		} else {
			g.classList.add("hide");
		}
	});
	unzoomBtn.classList.toggle("hide", d0 === 0);
}
function unzoom() {
	var scale = width / total;
	frames.forEach(function (g) {
		g.classList.remove("hide", "anc");
		place(g, pad + fx(g) * scale, fw(g) * scale);
	});
	unzoomBtn.classList.add("hide");
}
function clearSearch() {
	frames.forEach(function (g) { g.classList.remove("match"); });
	matched.nodeValue = " ";
}
function search() {
	var term = prompt("Search frames (regular expression)", re ? re.source : "");
	if (term === null) return;
	clearSearch();
	if (term === "") { re = null; return; }
	try { re = new RegExp(term); } catch (e) { matched.nodeValue = "bad expression"; return; }
	var spans = [];
	frames.forEach(function (g) {
		if (fd(g) > 0 && re.test(name(g))) { g.classList.add("match"); spans.push([fx(g), fx(g) + fw(g)]); }
	});
	// Nested matches count once: merge the matched sample ranges.
	spans.sort(function (a, b) { return a[0] - b[0]; });
	var sum = 0, end = -1;
	spans.forEach(function (s) {
		if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }
		else if (s[1] > end) { sum += s[1] - end; end = s[1]; }
	});
	matched.nodeValue = "Matched: " + (total ? (100 * sum / total).toFixed(1) : "0") + "%";
}
`
