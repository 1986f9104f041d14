package main

import (
	"io"
	"strings"
	"testing"

	"github.com/rshub/rshub/wire"
)

// TestSettings_SignatureSchemeFromFlagOrEnvironment: --signature-scheme
// (RSHUB_SIGNATURE_SCHEME) defaults to websub, takes standard and both,
// and refuses anything else naming the flag.
func TestSettings_SignatureSchemeFromFlagOrEnvironment(t *testing.T) {
	env := func(k, v string) func(string) (string, bool) {
		return func(name string) (string, bool) {
			if name == k {
				return v, true
			}
			return "", false
		}
	}
	s, err := parseSettings(nil, noEnv, io.Discard)
	if err != nil || s.SignatureScheme != wire.SchemeWebSub {
		t.Fatalf("default %q, %v", s.SignatureScheme, err)
	}
	s, err = parseSettings([]string{"--signature-scheme", "standard"}, noEnv, io.Discard)
	if err != nil || s.SignatureScheme != wire.SchemeStandard {
		t.Fatalf("flag: %q, %v", s.SignatureScheme, err)
	}
	s, err = parseSettings(nil, env("RSHUB_SIGNATURE_SCHEME", "both"), io.Discard)
	if err != nil || s.SignatureScheme != wire.SchemeBoth {
		t.Fatalf("environment: %q, %v", s.SignatureScheme, err)
	}
	_, err = parseSettings([]string{"--signature-scheme", "svix"}, noEnv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--signature-scheme") {
		t.Fatalf("bad value: %v", err)
	}
	var help strings.Builder
	_, _ = parseSettings([]string{"--help"}, noEnv, &help)
	if !strings.Contains(help.String(), "--signature-scheme") || !strings.Contains(help.String(), "RSHUB_SIGNATURE_SCHEME") {
		t.Fatal("--help does not document --signature-scheme")
	}
}
