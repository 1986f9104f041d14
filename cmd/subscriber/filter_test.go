package main

import (
	"bytes"
	"testing"

	"github.com/rshub/rshub/changefeed"
)

func TestSettings_FilterFromRepeatedAndCommaSeparatedFlagsAndEnvironment(t *testing.T) {
	s, err := parseSettings([]string{"--mirror", "m", "--source", "http://s/",
		"--filter-prefix", "http://s/a/,http://s/b/", "--filter-prefix", "http://s/c/", "--filter-change", "created, deleted"}, noEnv, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Filter.Prefixes) != 3 || s.Filter.Prefixes[2] != "http://s/c/" || len(s.Filter.Changes) != 2 || s.Filter.Changes[1] != changefeed.Deleted {
		t.Fatalf("filter %+v", s.Filter)
	}
	env := func(k string) (string, bool) {
		if k == "RSHUB_SUBSCRIBER_FILTER_PREFIX" {
			return "http://s/x/,http://s/y/", true
		}
		return "", false
	}
	s, err = parseSettings([]string{"--mirror", "m", "--source", "http://s/"}, env, &bytes.Buffer{})
	if err != nil || len(s.Filter.Prefixes) != 2 {
		t.Fatalf("environment: %+v %v", s.Filter, err)
	}
	if _, err := parseSettings([]string{"--mirror", "m", "--source", "http://s/", "--filter-change", "moved"}, noEnv, &bytes.Buffer{}); err == nil {
		t.Fatal("unknown change type accepted")
	}
	s, _ = parseSettings([]string{"--mirror", "m", "--source", "http://s/"}, noEnv, &bytes.Buffer{})
	if !s.Filter.IsZero() {
		t.Fatalf("no flags, filter %+v", s.Filter)
	}
}

// The subscriber refuses the filter values the hub refuses (one rule,
// changefeed.ParseFilter): it sent them on and only the hub said no.
func TestSettings_FilterValuesTheHubRefusesAreRefusedHere(t *testing.T) {
	for _, args := range [][]string{
		{"--filter-prefix", "not a uri"},
		{"--filter-prefix", "ftp://s/a/"},
		{"--filter-prefix", "HTTP://s/a/"},
		{"--filter-change", "created,"},
		{"--filter-change", ",,,"},
	} {
		if _, err := parseSettings(append([]string{"--mirror", "m", "--source", "http://s/"}, args...), noEnv, &bytes.Buffer{}); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
