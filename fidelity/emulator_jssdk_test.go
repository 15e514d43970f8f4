package fidelity

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unified-data/gotables/inmemory/emulator"
	"github.com/unified-data/gotables/tables/azuritetest"
)

// jsDeviations names the JS matrix steps whose answers differ between Azurite and the
// emulator because Azurite differs from Azure; each names an entry of Deviations.
var jsDeviations = map[string]string{
	// A "/" in a row key: Azure answers 400 OutOfRangeInput, Azurite 400 InvalidInput.
	"createEntity.badKey": "invalid-key-code",
}

// TestEmulatorJS runs tools/jsmatrix/matrix.mjs (a fixed sequence of @azure/data-tables
// calls) against the emulator and against Azurite and compares the two step by step. The
// pinned SDK is installed into .cache/jsmatrix when missing, so make test needs no extra step.
func TestEmulatorJS(t *testing.T) {
	required := os.Getenv(azuritetest.RequireEnv) == "1"
	node, err := exec.LookPath("node")
	if err != nil {
		if required {
			t.Fatalf("%s=1 but node is not installed: the JS matrix needs Node.js 20", azuritetest.RequireEnv)
		}
		t.Skip("node is not installed: the JS matrix (@azure/data-tables) needs Node.js 20")
	}
	dir := jsMatrixDir(t)
	azurite, haveAzurite := azuritetest.LookupConnectionString(t)
	key := emulator.DevelopmentKey
	emu := "DefaultEndpointsProtocol=http;AccountName=" + emulator.DevelopmentAccount + ";AccountKey=" + key +
		";TableEndpoint=" + emulatorEndpoint(t) + ";"
	name := "jsm" + randomHex(t)
	got := runJSMatrix(t, node, dir, emu, name)
	if !haveAzurite {
		t.Log("no Azurite: the emulator's answers are not compared")
		return
	}
	want := runJSMatrix(t, node, dir, azurite, name)
	if len(got) != len(want) {
		t.Fatalf("emulator answered %d steps, Azurite %d", len(got), len(want))
	}
	for i := range got {
		if got[i].step != want[i].step {
			t.Fatalf("step %d: emulator ran %s, Azurite %s", i, got[i].step, want[i].step)
		}
		if got[i].line == want[i].line {
			continue
		}
		if d, ok := jsDeviations[got[i].step]; ok {
			if _, listed := Deviations[d]; !listed {
				t.Fatalf("%s names deviation %q, which fidelity/deviations.go does not list", got[i].step, d)
			}
			t.Logf("%s differs (deviation %s)", got[i].step, d)
			continue
		}
		t.Errorf("%s:\n emulator %s\n azurite  %s", got[i].step, got[i].line, want[i].line)
	}
}

type jsStep struct{ step, line string }

// jsMatrixDir returns .cache/jsmatrix with the pinned SDK and the program in it, installing
// the SDK with npm when it is missing.
func jsMatrixDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "tools", "jsmatrix")
	dir := filepath.Join(root, ".cache", "jsmatrix")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pkg, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	_, statErr := os.Stat(filepath.Join(dir, "node_modules", "@azure", "data-tables", "package.json"))
	if !bytes.Equal(pkg, old) || statErr != nil {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("npm", "install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install of the pinned @azure/data-tables: %v\n%s", err, out)
		}
	}
	prog, err := os.ReadFile(filepath.Join(src, "matrix.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "matrix.mjs"), prog, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runJSMatrix(t *testing.T, node, dir, conn, table string) []jsStep {
	t.Helper()
	cmd := exec.Command(node, "matrix.mjs", conn, table)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("matrix.mjs: %v\n%s", err, stderr.String())
	}
	var steps []jsStep
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s struct{ Step string }
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("matrix.mjs printed %q: %v", sc.Text(), err)
		}
		steps = append(steps, jsStep{s.Step, strings.TrimSpace(sc.Text())})
	}
	return steps
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
