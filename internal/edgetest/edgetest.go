// Package edgetest holds the hostile inputs every door of the hub must
// refuse, in one table per kind, so that each door's test (admin API,
// --channels file, subscription form, /events and /ws parameters) checks
// the same class of inputs: channel definitions (hostile_channels.json)
// and entry filters (hostile_filters.json).
package edgetest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rshub/rshub/hub"
)

//go:embed hostile_channels.json
var channelsJSON []byte

//go:embed hostile_filters.json
var filtersJSON []byte

// Channel is a channel definition that no door may create, and why.
type Channel struct {
	Why     string
	Channel hub.Channel
}

// Filter is a pair of filter parameter lists that every door must refuse,
// and why; a nil list is an absent parameter.
type Filter struct {
	Why    string
	Prefix []string
	Change []string
}

// Channels returns the hostile channel definitions.
func Channels() []Channel {
	var raw []struct {
		Why     string          `json:"why"`
		Pad     int             `json:"pad"` // bytes appended to the topic
		Channel json.RawMessage `json:"channel"`
	}
	mustDecode(channelsJSON, &raw)
	out := make([]Channel, len(raw))
	for i, r := range raw {
		out[i].Why = r.Why
		mustDecode(r.Channel, &out[i].Channel)
		out[i].Channel.Topic += strings.Repeat("a", r.Pad)
	}
	return out
}

// Filters returns the hostile filter parameters.
func Filters() []Filter {
	var raw []struct {
		Why         string   `json:"why"`
		Prefix      []string `json:"prefix"`
		Change      []string `json:"change"`
		PrefixPad   int      `json:"prefixPad"`   // one prefix of this many bytes
		PrefixCount int      `json:"prefixCount"` // this many distinct valid prefixes
	}
	mustDecode(filtersJSON, &raw)
	out := make([]Filter, len(raw))
	for i, r := range raw {
		out[i] = Filter{Why: r.Why, Prefix: r.Prefix, Change: r.Change}
		if r.PrefixPad > 0 {
			p := "http://src.example/"
			out[i].Prefix = []string{p + strings.Repeat("a", r.PrefixPad-len(p))}
		}
		for n := range r.PrefixCount {
			out[i].Prefix = append(out[i].Prefix, fmt.Sprintf("http://src.example/%d/", n))
		}
	}
	return out
}

// JSON returns c as the admin API and the --channels file take it.
func (c Channel) JSON() []byte {
	b, err := json.Marshal(c.Channel)
	if err != nil {
		panic(err)
	}
	return b
}

func mustDecode(b []byte, v any) {
	if err := json.Unmarshal(b, v); err != nil {
		panic(fmt.Sprintf("edgetest: %v", err))
	}
}
