// Package deploy_test checks deploy/: the DaemonSet manifest offline, and
// the image of deploy/Containerfile built and run with podman, tracing a
// process of the host and serving /metrics.
package deploy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, rel)
}

// manifest is deploy/daemonset.yaml's documents by kind.
type manifest struct {
	configMap, daemonSet map[string]any
}

func loadManifest(t *testing.T) manifest {
	t.Helper()
	b, err := os.ReadFile(repoFile(t, "deploy/daemonset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := parseYAML(string(b))
	if err != nil {
		t.Fatalf("deploy/daemonset.yaml: %v", err)
	}
	var m manifest
	for _, d := range docs {
		doc, _ := d.(map[string]any)
		switch kind := str(doc, "kind"); kind {
		case "ConfigMap":
			m.configMap = doc
		case "DaemonSet":
			m.daemonSet = doc
		default:
			t.Errorf("unexpected document of kind %q", kind)
		}
	}
	if m.configMap == nil || m.daemonSet == nil {
		t.Fatalf("want a ConfigMap and a DaemonSet, got %d documents", len(docs))
	}
	return m
}

// get walks maps and lists: get(v, "spec", "template", 0, ...).
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string { s, _ := get(v, path...).(string); return s }

func list(v any, path ...any) []any { l, _ := get(v, path...).([]any); return l }

func strs(v any, path ...any) []string {
	var out []string
	for _, e := range list(v, path...) {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// allowed are the fields the manifest may use, per object: a misspelt
// field (Kubernetes drops unknown ones with a warning at most) fails here.
var allowed = map[string][]string{
	"daemonset":       {"apiVersion", "kind", "metadata", "spec"},
	"metadata":        {"name", "namespace", "labels", "annotations"},
	"dsSpec":          {"selector", "updateStrategy", "template", "minReadySeconds", "revisionHistoryLimit"},
	"podSpec":         {"hostPID", "hostNetwork", "tolerations", "terminationGracePeriodSeconds", "containers", "volumes", "nodeSelector", "priorityClassName", "serviceAccountName"},
	"container":       {"name", "image", "imagePullPolicy", "args", "command", "ports", "readinessProbe", "livenessProbe", "resources", "securityContext", "volumeMounts", "env"},
	"securityContext": {"privileged", "allowPrivilegeEscalation", "readOnlyRootFilesystem", "runAsUser", "runAsNonRoot", "capabilities", "seccompProfile", "appArmorProfile"},
	"volumeMount":     {"name", "mountPath", "readOnly"},
	"volume":          {"name", "hostPath", "configMap"},
}

func checkFields(t *testing.T, what string, v any) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s is not a mapping: %v", what, v)
		return
	}
	for k := range m {
		if !slices.Contains(allowed[what], k) {
			t.Errorf("%s has field %q, not one of %v", what, k, allowed[what])
		}
	}
}

// TestManifest checks deploy/daemonset.yaml offline, as kubectl's
// client-side validation would and beyond: the fields, the selector
// matching the pod labels, hostPID, the capabilities, the BTF and tracefs
// mounts, every mount backed by a volume, the script the args name being
// in the ConfigMap, and the scrape annotations naming the port --metrics
// listens on.
func TestManifest(t *testing.T) {
	m := loadManifest(t)
	ds, cm := m.daemonSet, m.configMap
	if str(ds, "apiVersion") != "apps/v1" || str(cm, "apiVersion") != "v1" {
		t.Errorf("apiVersions %q, %q: want apps/v1 and v1", str(ds, "apiVersion"), str(cm, "apiVersion"))
	}
	checkFields(t, "daemonset", ds)
	checkFields(t, "metadata", get(ds, "metadata"))
	checkFields(t, "dsSpec", get(ds, "spec"))
	pod := get(ds, "spec", "template", "spec")
	checkFields(t, "podSpec", pod)
	if str(ds, "metadata", "name") == "" || str(cm, "metadata", "name") == "" {
		t.Errorf("unnamed objects")
	}
	sel, _ := get(ds, "spec", "selector", "matchLabels").(map[string]any)
	labels, _ := get(ds, "spec", "template", "metadata", "labels").(map[string]any)
	if len(sel) == 0 {
		t.Errorf("no selector")
	}
	for k, v := range sel {
		if labels[k] != v {
			t.Errorf("selector %s=%v does not match the pod's labels %v", k, v, labels)
		}
	}
	if get(pod, "hostPID") != true {
		t.Errorf("hostPID is not true")
	}
	cs := list(pod, "containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	c := cs[0]
	checkFields(t, "container", c)
	checkFields(t, "securityContext", get(c, "securityContext"))
	if str(c, "image") == "" || str(c, "name") == "" {
		t.Errorf("container without name or image")
	}
	caps := strs(c, "securityContext", "capabilities", "add")
	for _, want := range []string{"BPF", "PERFMON"} {
		if !slices.Contains(caps, want) {
			t.Errorf("capabilities %v lack %s", caps, want)
		}
	}
	if !slices.Contains(strs(c, "securityContext", "capabilities", "drop"), "ALL") {
		t.Errorf("capabilities do not drop ALL first")
	}

	// Mounts and volumes.
	volumes := map[string]any{}
	for _, v := range list(pod, "volumes") {
		checkFields(t, "volume", v)
		volumes[str(v, "name")] = v
	}
	mounted := map[string]string{} // mount path -> volume name
	for _, vm := range list(c, "volumeMounts") {
		checkFields(t, "volumeMount", vm)
		v := volumes[str(vm, "name")]
		if v == nil {
			t.Errorf("volumeMount %s has no volume", str(vm, "name"))
		}
		mounted[str(vm, "mountPath")] = str(vm, "name")
	}
	if len(mounted) != len(volumes) {
		t.Errorf("%d volumes, %d mounted", len(volumes), len(mounted))
	}
	for _, p := range []string{"/sys/kernel/btf", "/sys/kernel/tracing"} {
		if str(volumes[mounted[p]], "hostPath", "path") != p {
			t.Errorf("%s is not the host's %s", p, p)
		}
	}

	// The script: the last argument, in a ConfigMap volume's mount.
	args := strs(c, "args")
	if len(args) == 0 {
		t.Fatalf("no args")
	}
	script := args[len(args)-1]
	dir, file := filepath.Split(script)
	v := volumes[mounted[filepath.Clean(dir)]]
	if str(v, "configMap", "name") != str(cm, "metadata", "name") {
		t.Errorf("script %s is not in the ConfigMap's volume", script)
	}
	if str(cm, "data", file) == "" {
		t.Errorf("ConfigMap has no %s", file)
	}

	// --metrics listens on the annotated port, on every address.
	i := slices.Index(args, "--metrics")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("args %v lack --metrics ADDR", args)
	}
	host, port, err := net.SplitHostPort(args[i+1])
	if err != nil || host != "0.0.0.0" {
		t.Errorf("--metrics %s: want 0.0.0.0:PORT (%v)", args[i+1], err)
	}
	ann, _ := get(ds, "spec", "template", "metadata", "annotations").(map[string]any)
	for k, want := range map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": port, "prometheus.io/path": "/metrics"} {
		if ann[k] != want { // annotation values must be strings
			t.Errorf("annotation %s = %#v, want %q", k, ann[k], want)
		}
	}
	if p := get(c, "ports", 0, "containerPort"); fmt.Sprint(p) != port {
		t.Errorf("containerPort %v, want %s", p, port)
	}
	if str(c, "readinessProbe", "httpGet", "path") != "/metrics" {
		t.Errorf("readiness probe does not read /metrics")
	}
}

// TestYAMLSubset: the reader gives what a YAML library gives for the
// manifest (PyYAML, when python3 has it), and refuses what it does not
// know.
func TestYAMLSubset(t *testing.T) {
	docs, err := parseYAML("a:\n  - x: 1\n    y: [\"p\", q]\n  -\n    z: |\n      l1\n\n      l2\n  - plain # note\nb: 'it''s'\n")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(docs)
	if want := `[{"a":[{"x":1,"y":["p","q"]},{"z":"l1\n\nl2\n"},"plain"],"b":"it's"}]`; string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	for _, bad := range []string{"a: {b: 1}\n", "a: &x 1\n", "a: 1\na: 2\n", "a: 1\n  b: 2\n"} {
		if _, err := parseYAML(bad); err == nil {
			t.Errorf("parseYAML(%q): no error", bad)
		}
	}
	if exec.Command("python3", "-c", "import yaml").Run() != nil {
		t.Log("python3 has no yaml module: not compared with PyYAML")
		return
	}
	path := repoFile(t, "deploy/daemonset.yaml")
	out, err := exec.Command("python3", "-c", "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1]))), sort_keys=True))", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	docs, err = parseYAML(string(b))
	if err != nil {
		t.Fatal(err)
	}
	var py any
	if err := json.Unmarshal(out, &py); err != nil {
		t.Fatal(err)
	}
	mine, _ := json.Marshal(docs)
	theirs, _ := json.Marshal(py)
	if string(mine) != string(theirs) {
		t.Errorf("the manifest read here and by PyYAML differ:\n%s\n%s", mine, theirs)
	}
}

// podman runs podman with its storage in a directory of the test (vfs: no
// mounts left behind), cgroupfs and file events (no systemd needed), and
// runc (crun refuses hybrid cgroup hierarchies such as this VM's).
type podman struct {
	base []string
}

func newPodman(t *testing.T) *podman {
	dir := t.TempDir()
	return &podman{base: []string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"),
		"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "file", "--runtime", "runc"}}
}

func (p *podman) args(a ...string) []string { return append(append([]string(nil), p.base...), a...) }

func (p *podman) run(t *testing.T, timeout time.Duration, a ...string) testkit.Result {
	t.Helper()
	r := testkit.RunBounded(t, timeout, exec.Command("podman", p.args(a...)...))
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("podman %s: exit %d (timed out %v):\n%s%s", strings.Join(a, " "), r.ExitCode, r.TimedOut, r.Stdout, r.Stderr)
	}
	return r
}

// limits are --ulimit flags at or below the current hard limits: podman
// raises RLIMIT_NOFILE and RLIMIT_NPROC by default, which needs
// CAP_SYS_RESOURCE (this VM's root lacks it).
func limits(t *testing.T) []string {
	var nofile syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	n := strconv.FormatUint(min(nofile.Max, 65536), 10)
	return []string{"--ulimit", "nofile=" + n + ":" + n, "--ulimit", "nproc=4096:4096"}
}

// hasCap reports whether this process may grant capability bit n.
func hasCap(t *testing.T, n uint) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CapBnd:\s*([0-9a-f]+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no CapBnd in /proc/self/status")
	}
	v, _ := strconv.ParseUint(string(m[1]), 16, 64)
	return v&(1<<n) != 0
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// scrape polls url until re matches the exposition, and returns the
// match.
func scrape(t *testing.T, url string, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = string(b)
			if m := re.FindStringSubmatch(last); m != nil {
				return m
			}
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: no %s within %v; last:\n%s", url, re, timeout, last)
	return nil
}

// startContainer runs the image with podman run (in the foreground, so
// that SIGINT reaches gotrace through podman's signal proxy) and returns
// once gotrace has attached, with the time that took. The container is
// removed at the end of the test whatever happened.
func startContainer(t *testing.T, p *podman, name string, runArgs []string, image string, gotraceArgs ...string) (*testkit.Tracer, time.Duration) {
	t.Helper()
	a := append([]string{"run", "--rm", "--name", name, "--env", testkit.NotifyAttached + "=1"}, limits(t)...)
	a = append(append(append(a, runArgs...), image), gotraceArgs...)
	t.Cleanup(func() {
		testkit.RunBounded(t, 30*time.Second, exec.Command("podman", p.args("rm", "-f", "-t", "2", name)...))
	})
	t0 := time.Now()
	tr := testkit.StartTracer(t, 60*time.Second, "podman", p.args(a...)...)
	return tr, time.Since(t0)
}

// TestContainer builds deploy/Containerfile's image from a static build,
// then runs it twice: with the manifest's own script, arguments,
// capabilities and mounts (not privileged, read-only root), counting a
// host helper's system calls by name; and privileged, as the task's
// acceptance says, counting exactly the helper's getpid calls by its host
// PID. Both serve /metrics on loopback (host network) and stop on SIGINT.
func TestContainer(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.BTF, testkit.Tracefs, testkit.GCC, testkit.Go, testkit.Podman, testkit.Runc)
	ctx := t.TempDir()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The static binary, as deploy/README.md builds it (without -trimpath:
	// that shares the build cache with the other tests).
	t0 := time.Now()
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", filepath.Join(ctx, "gotrace"), "./cmd/gotrace")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if r := testkit.RunBounded(t, 10*time.Minute, build); r.ExitCode != 0 || r.TimedOut {
		t.Fatalf("go build: %s%s", r.Stdout, r.Stderr)
	}
	t.Logf("static build: %v", time.Since(t0).Round(time.Millisecond))
	if out, err := exec.Command("file", filepath.Join(ctx, "gotrace")).Output(); err == nil && !strings.Contains(string(out), "statically linked") {
		t.Errorf("the binary is not static: %s", out)
	}
	cf, err := os.ReadFile(filepath.Join(root, "deploy", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctx, "Containerfile"), cf, 0o644); err != nil {
		t.Fatal(err)
	}

	p := newPodman(t)
	image := "localhost/gotrace:test"
	t1 := time.Now()
	p.run(t, 5*time.Minute, "build", "-t", image, "-f", filepath.Join(ctx, "Containerfile"), ctx)
	t.Logf("podman build: %v", time.Since(t1).Round(time.Millisecond))
	size := strings.TrimSpace(p.run(t, time.Minute, "image", "inspect", "--format", "{{.Size}}", image).Stdout)
	layers := strings.TrimSpace(p.run(t, time.Minute, "image", "inspect", "--format", "{{len .RootFS.Layers}}", image).Stdout)
	t.Logf("image %s: %s bytes, %s layer(s)", image, size, layers)
	if n, err := strconv.Atoi(size); err != nil || n > 64<<20 {
		t.Errorf("image size %q: want a number below 64 MiB", size)
	}
	if layers != "1" {
		t.Errorf("image has %s layers, want the binary's alone (FROM scratch)", layers)
	}

	t.Run("manifest", func(t *testing.T) {
		m := loadManifest(t)
		c := get(m.daemonSet, "spec", "template", "spec", "containers", 0)
		scripts := t.TempDir()
		for k, v := range get(m.configMap, "data").(map[string]any) {
			if err := os.WriteFile(filepath.Join(scripts, k), []byte(v.(string)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run := []string{"--pid=host", "--network=host", "--read-only", "--cap-drop=all",
			"--security-opt", "seccomp=unconfined", "--security-opt", "no-new-privileges"}
		for _, c := range strs(c, "securityContext", "capabilities", "add") {
			if c == "SYS_RESOURCE" && !hasCap(t, 24) {
				t.Log("CAP_SYS_RESOURCE is not in this process's bounding set: not granted")
				continue
			}
			run = append(run, "--cap-add="+c)
		}
		for _, vm := range list(c, "volumeMounts") {
			src := str(vm, "mountPath") // hostPath volumes: the same path on the host
			if src == "/scripts" {
				src = scripts
			}
			opt := src + ":" + str(vm, "mountPath")
			if get(vm, "readOnly") == true {
				opt += ":ro"
			}
			run = append(run, "-v", opt)
		}
		port := freePort(t)
		args := strs(c, "args")
		for i, a := range args {
			if a == "0.0.0.0:9464" {
				args[i] = fmt.Sprintf("127.0.0.1:%d", port) // host network: loopback only
			}
		}
		h := testkit.StartHelper(t, "getpid", "1000")
		tr, startup := startContainer(t, p, "gotrace-test-manifest", run, image, args...)
		t.Logf("manifest's container attached %v after podman run", startup.Round(time.Millisecond))
		h.Go()
		if r := h.Wait(10 * time.Second); r.ExitCode != 0 {
			t.Fatalf("getpid helper: exit %d %s", r.ExitCode, r.Stderr)
		}
		comm := filepath.Base(testkit.Helper(t, "getpid"))
		if len(comm) > 15 {
			comm = comm[:15]
		}
		url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
		mm := scrape(t, url, regexp.MustCompile(`(?m)^gotrace_syscalls_total\{key="`+regexp.QuoteMeta(comm)+`"\} (\d+)$`), 10*time.Second)
		// 1000 getpid calls, then the helper's own exit path (a write, exit_group).
		if n, _ := strconv.Atoi(mm[1]); n < 1000 || n > 1050 {
			t.Errorf("%s made %d system calls, want 1000 getpid and a few more", comm, n)
		}
		scrape(t, url, regexp.MustCompile(`(?m)^gotrace_read_bytes_count [1-9]\d*$`), 10*time.Second)
		r := tr.Stop(syscall.SIGINT, 15*time.Second)
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "@syscalls["+comm+"]: ") {
			t.Errorf("container: exit %d\nstdout:\n%.2000s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
		}
	})

	t.Run("privileged", func(t *testing.T) {
		port := freePort(t)
		h := testkit.StartHelper(t, "getpid", "1000")
		run := []string{"--privileged", "--pid=host", "--network=host",
			"-v", "/sys/kernel/btf:/sys/kernel/btf:ro", "-v", "/sys/kernel/tracing:/sys/kernel/tracing"}
		tr, startup := startContainer(t, p, "gotrace-test-privileged", run, image,
			"--metrics", fmt.Sprintf("127.0.0.1:%d", port),
			"-e", fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /pid == %d/ { @calls = count(); }`, h.Pid))
		t.Logf("privileged container attached %v after podman run", startup.Round(time.Millisecond))
		url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
		scrape(t, url, regexp.MustCompile(`(?m)^gotrace_up 1$`), 10*time.Second)
		h.Go()
		if r := h.Wait(10 * time.Second); r.ExitCode != 0 {
			t.Fatalf("getpid helper: exit %d %s", r.ExitCode, r.Stderr)
		}
		scrape(t, url, regexp.MustCompile(`(?m)^gotrace_calls_total 1000$`), 10*time.Second)
		r := tr.Stop(syscall.SIGINT, 15*time.Second)
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "@calls: 1000\n") {
			t.Errorf("container: exit %d\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
		}
	})
}
