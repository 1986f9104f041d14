package mirror

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestMapPath(t *testing.T) {
	tests := []struct {
		base, loc, want string
	}{
		{"http://s/files/", "http://s/files/a/b.txt", "a/b.txt"},
		{"http://s/files", "http://s/files/a%20b.txt", "a b.txt"},
		{"", "http://Host:8080/x/y", "host_8080/x/y"},
		{"http://s/files/", "http://s/files/../etc/passwd", ""},
		{"http://s/files/", "http://s/files/a/%2e%2e/%2e%2e/x", ""},
		{"http://s/files/", "http://s/files/a%2F..%2F..%2Fx", ""},
		{"http://s/files/", "http://s/other/x", ""},
		{"http://s/files", "http://s/filesx/y", ""},
		{"http://s/files/", "http://s/files/dir/", ""},
		{"http://s/files/", "http://s/files/a?x=1", ""},
		{"http://s/files/", "http://s/files/a#f", ""},
		{"http://s/files/", "http://s/files/a%00b", ""},
		{"http://s/files/", "http://s/files/a\\..\\b", ""},
		{"http://s/files/", "http://s/files//a", ""},
		{"http://s/files/", "http://s/files/.rshub-tmp-1", ""},
		{"", "ftp://s/a", ""},
		{"", "/relative", ""},
	}
	for _, tt := range tests {
		got, err := MapPath(tt.base, tt.loc)
		if tt.want == "" {
			if err == nil {
				t.Errorf("MapPath(%q, %q) = %q, want an error", tt.base, tt.loc, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("MapPath(%q, %q) = %q, %v, want %q", tt.base, tt.loc, got, err, tt.want)
		}
	}
}

// FuzzMapPath checks that every path MapPath accepts stays inside the
// mirror directory.
func FuzzMapPath(f *testing.F) {
	f.Add("http://s/files/", "http://s/files/a/b.txt")
	f.Add("", "http://h:1/../../x")
	f.Add("http://s/f", "http://s/f/%2e%2e%2fx")
	f.Fuzz(func(t *testing.T, base, loc string) {
		rel, err := MapPath(base, loc)
		if err != nil {
			return
		}
		root := "/mirror"
		p := filepath.Join(root, filepath.FromSlash(rel))
		if !strings.HasPrefix(p, root+"/") || !filepath.IsLocal(rel) || strings.Contains(rel, "\x00") {
			t.Fatalf("MapPath(%q, %q) = %q escapes the mirror (%q)", base, loc, rel, p)
		}
		if filepath.Clean(p) != p {
			t.Fatalf("MapPath(%q, %q) = %q is not clean", base, loc, rel)
		}
	})
}
