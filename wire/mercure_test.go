package wire_test

import (
	"testing"

	"github.com/rshub/rshub/wire"
)

func TestMercureKey_HoldsThePublishersIDPerTopic(t *testing.T) {
	a, b := wire.MercureKey("https://e/a", "id:1"), wire.MercureKey("https://e/b", "id:1")
	if a == b {
		t.Fatal("the same id on two topics makes one key")
	}
	for _, k := range []string{a, b} {
		if got := wire.MercureID(k); got != "id:1" {
			t.Fatalf("MercureID(%q) = %q, want id:1", k, got)
		}
	}
	for _, k := range []string{"", "0123abcd", "mercure-id"} {
		if got := wire.MercureID(k); got != "" {
			t.Fatalf("MercureID(%q) = %q, want none", k, got)
		}
	}
}
