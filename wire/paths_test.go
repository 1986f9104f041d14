package wire

import (
	"net/url"
	"testing"
	"time"
)

func TestPaths_BuildAndParseBack(t *testing.T) {
	tests := []struct {
		path string
		want Path
	}{
		{PathWellKnown, Path{Doc: DocSourceDescription}},
		{CapabilityListPath("arxiv"), Path{Doc: DocCapabilityList, Channel: "arxiv"}},
		{ChangeListPath("arxiv"), Path{Doc: DocChangeList, Channel: "arxiv"}},
		{ChangeListFilePath("arxiv", 42), Path{Doc: DocChangeListFile, Channel: "arxiv", N: 42}},
		{"/channels/arxiv/changelist/42.xml", Path{Doc: DocChangeListFile, Channel: "arxiv", N: 42}}, // legacy name
		{ChangeListIndexPath("arxiv"), Path{Doc: DocChangeListIndex, Channel: "arxiv"}},
		{ChangeListArchivePath("arxiv"), Path{Doc: DocChangeListArchive, Channel: "arxiv"}},
		{ChangeListArchivePagePath("arxiv", 3), Path{Doc: DocChangeListArchivePage, Channel: "arxiv", N: 3}},
		{TopicPath("demo"), Path{Doc: DocTopic, Channel: "demo"}},
		{PathWebSocket, Path{Doc: DocWebSocket}},
		{"/base" + CapabilityListPath("topics"), Path{Doc: DocCapabilityList, Channel: "topics"}},
	}
	for _, tt := range tests {
		got, ok := ParsePath(tt.path)
		if !ok || got != tt.want {
			t.Errorf("ParsePath(%q) = %+v, %v; want %+v", tt.path, got, ok, tt.want)
		}
	}
	golden := map[string]string{
		CapabilityListPath("a"):           "/channels/a/capabilitylist.xml",
		ChangeListPath("a"):               "/channels/a/changelist.xml",
		ChangeListFilePath("a", 7):        "/channels/a/changelist/00000000000000000007.xml",
		ChangeListIndexPath("a"):          "/channels/a/changelist-index.xml",
		ChangeListArchivePath("a"):        "/channels/a/changelist-archive.xml",
		ChangeListArchivePagePath("a", 2): "/channels/a/changelist-archive/00000000000000000002.xml",
		TopicPath("a"):                    "/topics/a",
		PatternRobots:                     "/robots.txt",
	}
	for got, want := range golden {
		if got != want {
			t.Errorf("path %s, want %s", got, want)
		}
	}
	for _, p := range []string{"/", "/channels/a/other.xml", "/channels//capabilitylist.xml", "/channels/a/changelist/07.xml", "/channels/a/changelist/0000000000000000007.xml",
		"/channels/a/changelist/x.xml", "/channels/a/elsewhere/1.xml", "/topics/", "/capabilitylist.xml"} {
		if got, ok := ParsePath(p); ok {
			t.Errorf("ParsePath(%q) = %+v, want no match", p, got)
		}
	}
}

func TestParseListFile_ZeroPaddedOnly(t *testing.T) {
	for file, want := range map[string]bool{"00000000000000000001.xml": true, "18446744073709551615.xml": true, "1.xml": false,
		"0000000000000000001.xml": false, "000000000000000000001.xml": false, "+0000000000000000001.xml": false,
		"99999999999999999999.xml": false, "00000000000000000001": false, ".xml": false, "00000000000000000001.XML": false} {
		if _, ok := ParseListFile(file); ok != want {
			t.Errorf("ParseListFile(%q) ok %v, want %v", file, ok, want)
		}
	}
}

func TestParseLegacyListFile_CanonicalDecimalOnly(t *testing.T) {
	for file, want := range map[string]bool{"1.xml": true, "18446744073709551615.xml": true, "01.xml": false, "1": false, "+1.xml": false, ".xml": false, "1.XML": false} {
		if _, ok := ParseLegacyListFile(file); ok != want {
			t.Errorf("ParseLegacyListFile(%q) ok %v, want %v", file, ok, want)
		}
	}
}

func TestListFile_NamesSortChronologically(t *testing.T) {
	nums := []uint64{1, 2, 9, 10, 11, 99, 100, 1 << 40, 18446744073709551615}
	for i := 1; i < len(nums); i++ {
		a, b := ChangeListFilePath("c", nums[i-1]), ChangeListFilePath("c", nums[i])
		if a >= b {
			t.Errorf("%s sorts after %s", a, b)
		}
		if n, ok := ParseListFile(ListFile(nums[i])); !ok || n != nums[i] {
			t.Errorf("ParseListFile(ListFile(%d)) = %d, %v", nums[i], n, ok)
		}
	}
}

func TestSubject_SchemeAndChannelBack(t *testing.T) {
	if Subject("", "arxiv") != "rshub.notify.arxiv" || Subject("p", "") != "p.>" || Subject("", "") != "rshub.notify.>" {
		t.Fatal("Subject")
	}
	if SubjectChannel(Subject("x.y", "arxiv")) != "arxiv" || SubjectChannel("plain") != "plain" {
		t.Fatal("SubjectChannel")
	}
}

func TestWebSocketURL_QueryOfTheSession(t *testing.T) {
	tests := []struct {
		hub  string
		s    Session
		want string
	}{
		{"http://h:8080/hub?x=1#f", Session{Channels: []string{"a"}, Raw: true, HasSince: true}, "ws://h:8080/ws?channels=a&raw=1&since=0"},
		{"https://h/", Session{Channels: []string{"a", "b"}, HasSince: true, Since: 12, Token: "t"}, "wss://h/ws?channels=a%2Cb&since=12&token=t"},
		{"http://h/", Session{SinceTime: time.Date(2024, 1, 1, 1, 0, 0, 0, time.FixedZone("X", 3600))}, "ws://h/ws?channels=%2A&since_time=2024-01-01T00%3A00%3A00Z"},
		{"http://h/", Session{Channels: []string{"a"}}, "ws://h/ws?channels=a"},
	}
	for _, tt := range tests {
		got, err := WebSocketURL(tt.hub, tt.s)
		if err != nil || got != tt.want {
			t.Errorf("WebSocketURL(%s, %+v) = %s, %v; want %s", tt.hub, tt.s, got, err, tt.want)
		}
	}
	if _, err := WebSocketURL("http://h/%zz", Session{}); err == nil {
		t.Error("bad hub URL accepted")
	}
	q, _ := url.ParseQuery("channels=a")
	if (Session{Channels: []string{"a"}}).Query().Encode() != q.Encode() {
		t.Error("Query")
	}
}
