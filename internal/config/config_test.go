package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newFS() (*flag.FlagSet, *string, *time.Duration, *bool) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	s := fs.String("listen", "127.0.0.1:8080", "listen address")
	d := fs.Duration("max-age", 0, "retention")
	b := fs.Bool("open-topics", false, "open")
	return fs, s, d, b
}

func TestApply_PrecedenceFlagEnvFileDefault(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.json")
	if err := os.WriteFile(file, []byte(`{"listen":"file:1","max-age":"2h","open-topics":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fs, s, d, b := newFS()
	if err := fs.Parse([]string{"--listen", "flag:1"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RSHUB_MAX_AGE": "3h", "RSHUB_LISTEN": "env:1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if err := Apply(fs, "RSHUB_", file, lookup); err != nil {
		t.Fatal(err)
	}
	if *s != "flag:1" || *d != 3*time.Hour || !*b {
		t.Fatalf("got listen=%q max-age=%v open=%v; want flag:1, 3h (env), true (file)", *s, *d, *b)
	}
}

func TestApply_BadValuesNameTheirSource(t *testing.T) {
	fs, _, _, _ := newFS()
	_ = fs.Parse(nil)
	err := Apply(fs, "RSHUB_", "", func(k string) (string, bool) {
		if k == "RSHUB_MAX_AGE" {
			return "soon", true
		}
		return "", false
	})
	if err == nil || !strings.Contains(err.Error(), "RSHUB_MAX_AGE") {
		t.Fatalf("want an error naming RSHUB_MAX_AGE, got %v", err)
	}
	file := filepath.Join(t.TempDir(), "c.json")
	_ = os.WriteFile(file, []byte(`{"listn":"x"}`), 0o600)
	fs2, _, _, _ := newFS()
	_ = fs2.Parse(nil)
	err = Apply(fs2, "RSHUB_", file, func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), `unknown setting "listn"`) {
		t.Fatalf("want unknown setting error, got %v", err)
	}
}

func TestUsage_ListsEveryFlagWithEnvAndDefault(t *testing.T) {
	fs, _, _, _ := newFS()
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	Usage(fs, "RSHUB_", "intro\n")()
	out := buf.String()
	for _, want := range []string{"--listen", "RSHUB_LISTEN", "(default 127.0.0.1:8080)", "--max-age", "RSHUB_OPEN_TOPICS"} {
		if !strings.Contains(out, want) {
			t.Errorf("usage lacks %q:\n%s", want, out)
		}
	}
}

func TestParse_ConfigFileFromEnvironmentAndStrayArguments(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, []byte(`{"listen":"file:1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fs, s, _, _ := newFS()
	var cfg string
	fs.StringVar(&cfg, "config", "", "file")
	env := map[string]string{"RSHUB_CONFIG": file}
	if err := Parse(fs, "RSHUB_", nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &cfg); err != nil {
		t.Fatal(err)
	}
	if *s != "file:1" {
		t.Fatalf("listen %q, want the file's value via RSHUB_CONFIG", *s)
	}
	fs2, _, _, _ := newFS()
	var cfg2 string
	if err := Parse(fs2, "RSHUB_", []string{"stray"}, func(string) (string, bool) { return "", false }, &cfg2); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Fatalf("stray argument: %v", err)
	}
}
