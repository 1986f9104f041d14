package wire

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func strp(s string) *string { return &s }

// TestFrames_Golden pins the JSON bytes of each frame the hub sends.
func TestFrames_Golden(t *testing.T) {
	length := int64(12)
	n := Notification{
		Type: FrameNotification, Channel: "arxiv", Topic: "https://example.org/changelist.xml", Seq: 1235,
		From:        FrameTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)),
		Until:       FrameTime(time.Date(2024, 1, 1, 1, 1, 0, 0, time.FixedZone("CET", 3600))),
		ContentType: "application/xml",
		Received:    FrameTime(time.Date(2024, 1, 1, 0, 1, 2, 123456789, time.UTC)),
		Entries: []Entry{{Loc: "https://example.org/res1", Change: "updated", DateTime: "2024-01-01T00:00:30Z",
			LastMod: "2024-01-01T00:00:30Z", Hash: "md5:1e0d5cb8ef6ba40c99b14c0237be735e", Length: &length, Type: "text/plain"}},
		XML: strp("<urlset/>"),
	}
	tests := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"notification", mustJSON(t, n), `{"type":"notification","channel":"arxiv","topic":"https://example.org/changelist.xml","seq":1235,` +
			`"from":"2024-01-01T00:00:00Z","until":"2024-01-01T00:01:00Z","content_type":"application/xml",` +
			`"received":"2024-01-01T00:01:02.123456789Z","entries":[{"loc":"https://example.org/res1","change":"updated",` +
			`"datetime":"2024-01-01T00:00:30Z","lastmod":"2024-01-01T00:00:30Z","hash":"md5:1e0d5cb8ef6ba40c99b14c0237be735e",` +
			`"length":12,"type":"text/plain"}],"xml":"\u003curlset/\u003e"}`},
		{"notification, other content, no times", mustJSON(t, Notification{Type: FrameNotification, Channel: "c", Topic: "t", Seq: 7,
			ContentType: "text/plain", Entries: []Entry{}, Body: strp("hi")}),
			`{"type":"notification","channel":"c","topic":"t","seq":7,"content_type":"text/plain","entries":[],"body":"hi"}`},
		{"notification, unparsed", mustJSON(t, Notification{Type: FrameNotification, Channel: "c", Topic: "t", Seq: 8,
			ContentType: "application/xml", Entries: []Entry{}, Error: "entries not parsed: EOF"}),
			`{"type":"notification","channel":"c","topic":"t","seq":8,"content_type":"application/xml","entries":[],"error":"entries not parsed: EOF"}`},
		{"gap", GapFrame(1, 4711, "since=0 is older than the log's retention: replay starts at 4712"),
			`{"type":"gap","missing_from_seq":1,"missing_to_seq":4711,"message":"since=0 is older than the log's retention: replay starts at 4712"}`},
		{"live", LiveFrame("", 5000), `{"type":"live","seq":5000}`},
		{"live with epoch", LiveFrame("e1", 5000), `{"type":"live","seq":5000,"id":"e1-5000"}`},
		{"reset", ResetFrame("e2", 1, 3, "ahead"),
			`{"type":"reset","epoch":"e2","first_seq":1,"last_seq":3,"since":0,"id":"e2-0","message":"ahead"}`},
		{"reset of a retained log", ResetFrame("e2", 40, 90, "m"),
			`{"type":"reset","epoch":"e2","first_seq":40,"last_seq":90,"since":39,"id":"e2-39","message":"m"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.frame) != tt.want {
				t.Fatalf("frame\n got %s\nwant %s", tt.frame, tt.want)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeFrame_ReadsEachFrameBack(t *testing.T) {
	n := Notification{Type: FrameNotification, Channel: "c", Topic: "t", Seq: 9, ContentType: "application/xml",
		Entries: []Entry{{Loc: "http://x/1"}}, XML: strp("<urlset/>")}
	tests := []struct {
		data []byte
		want Frame
	}{
		{mustJSON(t, n), Frame{Type: FrameNotification, Notification: &n}},
		{GapFrame(2, 3, "gone"), Frame{Type: FrameGap, Gap: &Gap{Type: FrameGap, From: 2, To: 3, Message: "gone"}}},
		{LiveFrame("", 4), Frame{Type: FrameLive, Live: &Live{Type: FrameLive, Seq: 4}}},
		{ResetFrame("e", 0, 0, "empty"), Frame{Type: FrameReset, Reset: &Reset{Type: FrameReset, Epoch: "e", ID: "e-0", Message: "empty"}}},
		{[]byte(`{"type":"future","seq":1}`), Frame{Type: "future"}},
	}
	for _, tt := range tests {
		got, err := DecodeFrame(tt.data)
		if err != nil {
			t.Fatalf("DecodeFrame(%s): %v", tt.data, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DecodeFrame(%s) = %+v, want %+v", tt.data, got, tt.want)
		}
	}
	for _, bad := range []string{`not json`, `{"type":"gap","missing_from_seq":"x"}`, `[]`} {
		if _, err := DecodeFrame([]byte(bad)); err == nil {
			t.Errorf("DecodeFrame(%s) succeeded", bad)
		}
	}
}

func TestFrameTime_UTCAndAbsentWhenZero(t *testing.T) {
	if FrameTime(time.Time{}) != "" {
		t.Fatal("zero time not absent")
	}
	if got := FrameTime(time.Date(2024, 1, 1, 1, 0, 0, 5, time.FixedZone("X", 3600))); got != "2024-01-01T00:00:00.000000005Z" {
		t.Fatalf("FrameTime = %s", got)
	}
}
