package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The repository's root, from this package's directory.
const repoRoot = "../../.."

// needRepo skips a test that reads the repository's files outside this module, when the
// module is tested on its own (the consumer check tests it from a module proxy's copy).
func needRepo(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repoRoot, "go.work")); err != nil {
		t.Skip("not inside the repository: no go.work three directories up")
	}
}

// yamlNode is a node of the YAML subset docker-compose.yml is written in: a map of keys, a
// list of scalars, or a scalar.
type yamlNode struct {
	scalar string
	list   []string
	keys   map[string]*yamlNode
}

// parseYAML reads block maps and lists of scalars, indented by spaces, with comments and
// quoted scalars: what docker-compose.yml uses. Anything else fails the test.
func parseYAML(t *testing.T, text string) *yamlNode {
	t.Helper()
	type frame struct {
		indent int
		node   *yamlNode
	}
	root := &yamlNode{keys: map[string]*yamlNode{}}
	// Each frame is a node whose block is open and the indentation of its key; a line
	// belongs to the innermost frame indented less than it.
	stack := []frame{{-1, root}}
	var last *yamlNode // the node of the previous line's key when it had no value
	lastIndent := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		line = strings.TrimSpace(line)
		for len(stack) > 1 && indent <= stack[len(stack)-1].indent {
			stack = stack[:len(stack)-1]
		}
		if last != nil && indent > lastIndent {
			stack = append(stack, frame{lastIndent, last})
		}
		last = nil
		parent := stack[len(stack)-1].node
		if item, ok := strings.CutPrefix(line, "- "); ok {
			if len(parent.keys) > 0 {
				t.Fatalf("docker-compose.yml:%d: a list item in a map", n)
			}
			parent.keys = nil
			parent.list = append(parent.list, unquote(item))
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("docker-compose.yml:%d: %q is neither a key nor a list item", n, line)
		}
		if parent.keys == nil {
			if parent.list != nil {
				t.Fatalf("docker-compose.yml:%d: a key in a list", n)
			}
			parent.keys = map[string]*yamlNode{}
		}
		if _, dup := parent.keys[key]; dup {
			t.Fatalf("docker-compose.yml:%d: key %q twice", n, key)
		}
		node := &yamlNode{scalar: unquote(strings.TrimSpace(val))}
		parent.keys[key] = node
		if node.scalar == "" {
			node.keys = map[string]*yamlNode{}
			last, lastIndent = node, indent
		}
	}
	return root
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// get follows keys from n, failing the test when one is missing.
func (n *yamlNode) get(t *testing.T, keys ...string) *yamlNode {
	t.Helper()
	for _, k := range keys {
		next := n.keys[k]
		if next == nil {
			t.Fatalf("docker-compose.yml has no %s", strings.Join(keys, "."))
		}
		n = next
	}
	return n
}

// hostPorts returns the host side (address:port) of a service's port mappings.
func hostPorts(t *testing.T, svc *yamlNode) []string {
	t.Helper()
	var out []string
	for _, p := range svc.get(t, "ports").list {
		i := strings.LastIndex(p, ":")
		if i < 0 {
			t.Fatalf("port mapping %q names no host port", p)
		}
		out = append(out, p[:i])
	}
	return out
}

// The emulator service of docker-compose.yml: in a profile of its own (so that "docker
// compose up" starts Azurite alone), built by the Dockerfile, on loopback host ports that
// are not Azurite's, publishing the table and blob ports the image listens on.
func TestDockerComposeEmulator(t *testing.T) {
	needRepo(t)
	text, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := parseYAML(t, string(text))
	azurite, emu := doc.get(t, "services", "azurite"), doc.get(t, "services", "emulator")
	if azurite.keys["profiles"] != nil {
		t.Error("the azurite service is in a profile: docker compose up would not start it")
	}
	if p := emu.get(t, "profiles").list; len(p) != 1 || p[0] != "emulator" {
		t.Errorf("the emulator service's profiles are %q, want [emulator]", p)
	}
	if c := emu.get(t, "build", "context").scalar; c != "." {
		t.Errorf("the emulator's build context is %q, want the repository's root", c)
	}
	dockerfile := emu.get(t, "build", "dockerfile").scalar
	taken := map[string]bool{}
	for _, hp := range hostPorts(t, azurite) {
		taken[hp] = true
	}
	for _, hp := range hostPorts(t, emu) {
		if taken[hp] {
			t.Errorf("the emulator's host port %s is Azurite's", hp)
		}
		if !strings.HasPrefix(hp, "127.0.0.1:") {
			t.Errorf("the emulator's host port %s is not on loopback", hp)
		}
	}
	df, err := os.ReadFile(filepath.Join(repoRoot, dockerfile))
	if err != nil {
		t.Fatalf("the emulator's Dockerfile: %v", err)
	}
	entry := regexp.MustCompile(`(?m)^ENTRYPOINT \[(.*)\]`).FindSubmatch(df)
	if entry == nil {
		t.Fatal("the Dockerfile has no ENTRYPOINT")
	}
	listens := map[string]bool{} // the container ports the ENTRYPOINT listens on
	for _, flag := range []string{"-addr", "-blob-addr"} {
		m := regexp.MustCompile(`"` + flag + `", "0\.0\.0\.0:(\d+)"`).FindSubmatch(entry[1])
		if m == nil {
			t.Fatalf("the Dockerfile's ENTRYPOINT does not listen on 0.0.0.0 with %s", flag)
		}
		listens[string(m[1])] = true
		if !regexp.MustCompile(`(?m)^EXPOSE .*\b` + string(m[1]) + `\b`).Match(df) {
			t.Errorf("the Dockerfile does not EXPOSE %s", m[1])
		}
	}
	published := map[string]bool{}
	for _, p := range emu.get(t, "ports").list {
		port := p[strings.LastIndex(p, ":")+1:]
		if !listens[port] {
			t.Errorf("the emulator's port mapping %s publishes a port it does not listen on", p)
		}
		published[port] = true
	}
	for port := range listens {
		if !published[port] {
			t.Errorf("the emulator's port %s is not published", port)
		}
	}
}

// The Dockerfile builds the binary as scripts/with-emulator.sh does (the build "make
// emulator-fidelity" runs): the same package, static (CGO_ENABLED=0), with the Go of the
// workspace.
func TestDockerfileBuild(t *testing.T) {
	needRepo(t)
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "with-emulator.sh"))
	if err != nil {
		t.Fatal(err)
	}
	build := regexp.MustCompile(`CGO_ENABLED=0 go build [^\n]*?(\./tools/cmd/[a-z-]+)`)
	d, s := build.FindSubmatch(df), build.FindSubmatch(script)
	if d == nil || s == nil {
		t.Fatalf("a CGO_ENABLED=0 go build of the command: Dockerfile %q, scripts/with-emulator.sh %q", d, s)
	}
	if string(d[1]) != string(s[1]) || string(d[1]) != "./tools/cmd/udtables-emulator" {
		t.Errorf("the Dockerfile builds %s, the script %s", d[1], s[1])
	}
	work, err := os.ReadFile(filepath.Join(repoRoot, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	gv := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(work)
	img := regexp.MustCompile(`(?m)^FROM golang:(\d+\.\d+)\b`).FindSubmatch(df)
	if gv == nil || img == nil || string(gv[1]) != string(img[1]) {
		t.Errorf("the Dockerfile builds with golang:%s, the workspace wants go %s", img, gv)
	}
	if !regexp.MustCompile(`(?m)^FROM scratch`).Match(df) {
		t.Error("the Dockerfile's image is not on scratch: a static binary needs nothing else")
	}
}
