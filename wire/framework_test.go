package wire_test

import (
	"strings"
	"testing"

	"github.com/rshub/rshub/wire"
)

func TestFrameworkChannel_NamesRoundTrip(t *testing.T) {
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"arxiv", "arxiv-framework", true},
		{"", "", false},
		{"arxiv-framework", "", false},
		{strings.Repeat("a", 54), strings.Repeat("a", 54) + "-framework", true},
		{strings.Repeat("a", 55), "", false},
	}
	for _, tt := range tests {
		got, ok := wire.FrameworkChannel(tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FrameworkChannel(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
		if ok {
			if p, pok := wire.FrameworkParent(got); !pok || p != tt.name {
				t.Errorf("FrameworkParent(%q) = %q, %v", got, p, pok)
			}
		}
	}
	if _, ok := wire.FrameworkParent("-framework"); ok {
		t.Error("FrameworkParent accepted a bare suffix")
	}
	if got := wire.FrameworkTopicPath("arxiv"); got != "/topics/arxiv-framework" {
		t.Errorf("FrameworkTopicPath = %q", got)
	}
}
