package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rshub/rshub/internal/embednats"
)

// Settings of the NATS doors that cannot work are refused at start,
// naming the flag: a leaf listener or an edge link without the leaf
// password, the embedded server's flags with an external server, a read
// user named as one of the hub's own.
func TestCheckNATSAccess_RefusesSettingsThatCannotWork(t *testing.T) {
	d := func(edit func(*Config)) Config { c := Defaults(); edit(&c); return c }
	for name, tc := range map[string]struct {
		cfg  Config
		want string // "" accepted
	}{
		"defaults":                         {Defaults(), ""},
		"a read password":                  {d(func(c *Config) { c.NATSPasswordFile = "pw" }), ""},
		"anonymous read":                   {d(func(c *Config) { c.NATSAnonymousRead = true }), ""},
		"leaf listener, no password":       {d(func(c *Config) { c.LeafListen = "127.0.0.1:7422" }), "--leaf-password-file"},
		"edge link, no password":           {d(func(c *Config) { c.Upstream, c.UpstreamLeaf = "http://o/", "nats-leaf://o:7422" }), "--leaf-password-file"},
		"edge link, user in the URL":       {d(func(c *Config) { c.Upstream, c.UpstreamLeaf = "http://o/", "nats-leaf://u:p@o:7422" }), ""},
		"external server, read password":   {d(func(c *Config) { c.NATSURL, c.NATSPasswordFile = "nats://n", "pw" }), "apply to the embedded"},
		"external server, anonymous":       {d(func(c *Config) { c.NATSURL, c.NATSAnonymousRead = "nats://n", true }), "apply to the embedded"},
		"read user named as the hub's":     {d(func(c *Config) { c.NATSUser = embednats.HubUser }), "--nats-user"},
		"read user named as the edges'":    {d(func(c *Config) { c.NATSUser = embednats.LeafUser }), "--nats-user"},
		"read user with a colon":           {d(func(c *Config) { c.NATSUser = "a:b" }), "--nats-user"},
		"metrics on its own listener only": {d(func(c *Config) { c.MetricsListen = "127.0.0.1:9090" }), ""},
	} {
		err := tc.cfg.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Check = %v, want %q", name, err, tc.want)
		}
	}
}

// A password file's first line, trimmed, is the password; an empty first
// line, a missing file or a file too long to be one is refused naming the
// flag.
func TestReadPasswordFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for name, tc := range map[string]struct {
		path, want string
		ok         bool
	}{
		"one line":      {write("a", "s3cret\n"), "s3cret", true},
		"no newline":    {write("b", "  s3cret  "), "s3cret", true},
		"more lines":    {write("c", "s3cret\r\nignored\n"), "s3cret", true},
		"empty":         {write("d", ""), "", false},
		"blank first":   {write("e", "\nsecret\n"), "", false},
		"too long":      {write("f", strings.Repeat("x", maxPasswordFile+1)), "", false},
		"missing":       {filepath.Join(dir, "none"), "", false},
		"no file given": {"", "", true},
	} {
		got, err := readPasswordFile("--nats-password-file", tc.path)
		if (err == nil) != tc.ok || got != tc.want || err != nil && !strings.Contains(err.Error(), "--nats-password-file") {
			t.Errorf("%s: %q %v, want %q ok=%v", name, got, err, tc.want, tc.ok)
		}
	}
}
