package wire

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEncodeRecord_Golden pins the headers of a stored record, plain and
// with values that must travel encoded.
func TestEncodeRecord_Golden(t *testing.T) {
	rec := Record{
		Seq: 42, Topic: "https://example.org/topic", Channel: "arxiv",
		From:        time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		Until:       time.Date(2024, 1, 1, 0, 1, 0, 500, time.UTC),
		ContentType: "application/xml", ResourceSync: "https://example.org/capabilitylist.xml",
		Received: time.Date(2024, 1, 1, 0, 1, 2, 123456789, time.UTC), Key: "k-1", Entries: 3,
		Body: []byte("<urlset/>"), Private: true,
	}
	want := Header{
		"Nats-Msg-Id":        {"k-1"},
		"Rshub-Topic":        {"https://example.org/topic"},
		"Rshub-Channel":      {"arxiv"},
		"Rshub-From":         {"2024-01-01T00:00:00Z"},
		"Rshub-Until":        {"2024-01-01T00:01:00.0000005Z"},
		"Content-Type":       {"application/xml"},
		"Rshub-Received":     {"2024-01-01T00:01:02.123456789Z"},
		"Rshub-Resourcesync": {"https://example.org/capabilitylist.xml"},
		"Rshub-Entries":      {"3"},
		"Rshub-Private":      {"1"},
	}
	if got := EncodeRecord(rec); !reflect.DeepEqual(got, want) {
		t.Fatalf("EncodeRecord\n got %v\nwant %v", got, want)
	}
	got, err := DecodeRecord("rshub.notify.arxiv", want, rec.Body, 42)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Fatalf("DecodeRecord = %+v, %v; want %+v", got, err, rec)
	}

	hostile := Record{Topic: "https://例え.jp/", Channel: "a", ContentType: " text/plain ", Key: "a\r\nX: y", ResourceSync: "=?x"}
	want = Header{
		"Rshub-Topic":        {"=?UTF-8?B?aHR0cHM6Ly/kvovjgYguanAv?="},
		"Rshub-Channel":      {"a"},
		"Content-Type":       {"=?UTF-8?B?IHRleHQvcGxhaW4g?="},
		"Nats-Msg-Id":        {"=?UTF-8?B?YQ0KWDogeQ==?="},
		"Rshub-Resourcesync": {"=?UTF-8?B?PT94?="},
	}
	if got := EncodeRecord(hostile); !reflect.DeepEqual(got, want) {
		t.Fatalf("EncodeRecord of hostile values\n got %v\nwant %v", got, want)
	}
	back, err := DecodeRecord("rshub.notify.a", want, nil, 0)
	if err != nil || !reflect.DeepEqual(back, hostile) {
		t.Fatalf("DecodeRecord = %+v, %v; want %+v", back, err, hostile)
	}
}

func TestDecodeRecord_ChannelFromSubjectWhenMissing(t *testing.T) {
	rec, err := DecodeRecord(Subject("", "dbpedia"), Header{HeaderTopic: {"t"}}, nil, 1)
	if err != nil || rec.Channel != "dbpedia" {
		t.Fatalf("channel %q, %v", rec.Channel, err)
	}
}

func TestDecodeRecord_RejectsMalformedValues(t *testing.T) {
	tests := map[string]Header{
		HeaderTopic:    {HeaderTopic: {"=?UTF-8?B?!!!?="}},
		HeaderMsgID:    {HeaderMsgID: {"=?ISO-8859-1?Q?x?="}},
		HeaderUntil:    {HeaderUntil: {"yesterday"}},
		HeaderReceived: {HeaderReceived: {"2024-13-01T00:00:00Z"}},
		HeaderEntries:  {HeaderEntries: {"-1"}},
	}
	for name, h := range tests {
		if _, err := DecodeRecord("rshub.notify.a", h, nil, 1); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want one naming the header", name, err)
		}
	}
}

func TestHeader_GetIsExactLikeNATS(t *testing.T) {
	h := Header{"Rshub-Topic": {"t"}, "empty": {}}
	if h.Get("Rshub-Topic") != "t" || h.Get("rshub-topic") != "" || h.Get("empty") != "" || Header(nil).Get("x") != "" {
		t.Fatal("Get")
	}
}

func TestCheckRecord_LimitsEachValue(t *testing.T) {
	if err := CheckRecord(Record{Topic: strings.Repeat("x", MaxHeaderValue)}); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []Record{
		{Topic: strings.Repeat("x", MaxHeaderValue+1)}, {Key: strings.Repeat("x", MaxHeaderValue+1)},
		{Channel: strings.Repeat("x", MaxHeaderValue+1)}, {ContentType: strings.Repeat("x", MaxHeaderValue+1)},
		{ResourceSync: strings.Repeat("x", MaxHeaderValue+1)},
	} {
		if err := CheckRecord(rec); err == nil || !strings.Contains(err.Error(), "limit") {
			t.Errorf("CheckRecord: %v", err)
		}
	}
}

func TestHeaderValue_RoundTripsAndLeavesPlainValues(t *testing.T) {
	for _, v := range []string{"", "plain", "a b", "https://example.org/?q=1", "\x00", "ü", "\xff", " x", "x ", "=?", "=?UTF-8?B?YQ==?="} {
		enc := EncodeHeaderValue(v)
		back, err := DecodeHeaderValue(enc)
		if err != nil || back != v {
			t.Errorf("%q: encoded %q, decoded %q, %v", v, enc, back, err)
		}
		if safeHeaderValue(v) != (enc == v) {
			t.Errorf("%q: encoded %q although safe %v", v, enc, safeHeaderValue(v))
		}
	}
	if _, err := DecodeHeaderValue("=?UTF-8?B?YQ=="); err == nil {
		t.Fatal("unterminated encoded word accepted")
	}
}
