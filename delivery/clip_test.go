package delivery

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/wire"
)

func TestClip_BoundsAtACharacterWithTheOriginalLength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"short", "http://example.com/cb", "http://example.com/cb"},
		{"at the limit", strings.Repeat("a", maxLogged), strings.Repeat("a", maxLogged)},
		{"long", strings.Repeat("a", 1000), strings.Repeat("a", maxLogged) + "…(1000 bytes)"},
		{"multibyte at the cut", strings.Repeat("a", maxLogged-1) + "é" + "zz", strings.Repeat("a", maxLogged-1) + "…(259 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wire.Clip(tt.in)
			if got != tt.want || !utf8.ValidString(got) {
				t.Errorf("wire.Clip = %q, want %q", got, tt.want)
			}
		})
	}
	if q := quote(strings.Repeat("\xff", 1000)); len(q) > maxLogged+20 {
		t.Errorf("quote of 1000 invalid bytes is %d bytes long", len(q))
	}
}

func TestClipError_KeepsTheChainAndBoundsTheMessage(t *testing.T) {
	t.Parallel()
	err := netguard.CheckURL("ftp://example.com/" + strings.Repeat("x", 5000))
	c := clipError(err)
	if len(c.Error()) > maxLogged+20 || !errors.Is(c, netguard.ErrRefused) {
		t.Errorf("clipError: %d bytes, refusal kept %v", len(c.Error()), errors.Is(c, netguard.ErrRefused))
	}
}
