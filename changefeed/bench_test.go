package changefeed

import (
	"bytes"
	"io"
	"strconv"
	"testing"
	"time"
)

// changeList builds an in-memory Change List of n entries with the
// attributes a typical Source sends.
func changeList(n int) *Document {
	base := time.Date(2013, 1, 3, 0, 0, 0, 0, time.UTC)
	d := &Document{Header: Header{MD: MD{Capability: CapChangeList, From: NewDateTime(base), Until: NewDateTime(base.Add(time.Duration(n+1) * time.Second)), Length: -1},
		Links: []Link{{Rel: "up", Href: "http://example.com/dataset1/capabilitylist.xml", Length: -1, Pri: -1}}}}
	changes := [...]Change{Created, Updated, Deleted}
	d.Entries = make([]Entry, n)
	for i := range d.Entries {
		t := base.Add(time.Duration(i+1) * time.Second)
		d.Entries[i] = Entry{
			Loc:     "http://example.com/dataset1/resources/res" + strconv.Itoa(i) + ".html",
			LastMod: NewDateTime(t),
			MD: &MD{Change: changes[i%3], DateTime: NewDateTime(t), Hash: "md5:1584abdf8ebdc9802ac0c6a7402c03b6",
				Length: int64(1000 + i), Type: "text/html"},
		}
	}
	return d
}

func encodeDoc(tb testing.TB, d *Document) []byte {
	var buf bytes.Buffer
	if err := Encode(&buf, d); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func BenchmarkParseChangeList50k(b *testing.B) {
	data := encodeDoc(b, changeList(50000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		doc, err := Parse(bytes.NewReader(data), Options{})
		if err != nil || len(doc.Entries) != 50000 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*50000/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkDecodeStream50k streams with Next, as a destination would.
func BenchmarkDecodeStream50k(b *testing.B) {
	data := encodeDoc(b, changeList(50000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := NewDecoder(bytes.NewReader(data), Options{})
		n := 0
		for {
			_, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 50000 {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(b.N)*50000/b.Elapsed().Seconds(), "entries/s")
}

func BenchmarkEncodeChangeList50k(b *testing.B) {
	doc := changeList(50000)
	size := len(encodeDoc(b, doc))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Encode(io.Discard, doc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)/50000, "bytes/entry")
	b.ReportMetric(float64(b.N)*50000/b.Elapsed().Seconds(), "entries/s")
}

func BenchmarkValidateChangeList50k(b *testing.B) {
	doc := changeList(50000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := Validate(doc, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncoder_AllocsDoNotGrowWithEntries encodes 1,000 and 50,000 entries
// and requires the same number of allocations: the encoder's memory does
// not depend on the number of entries.
func TestEncoder_AllocsDoNotGrowWithEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 50k-entry document")
	}
	small, large := changeList(1000), changeList(50000)
	run := func(d *Document) float64 {
		return testing.AllocsPerRun(3, func() {
			if err := Encode(io.Discard, d); err != nil {
				t.Fatal(err)
			}
		})
	}
	a1, a50 := run(small), run(large)
	if a50 > a1 {
		t.Fatalf("allocations grow with entries: %.0f for 1k, %.0f for 50k", a1, a50)
	}
	// And per entry, streaming through one Encoder allocates nothing.
	e := NewEncoder(io.Discard)
	if err := e.WriteHeader(&large.Header); err != nil {
		t.Fatal(err)
	}
	i := 0
	per := testing.AllocsPerRun(1000, func() {
		if err := e.WriteEntry(&large.Entries[i%len(large.Entries)]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if per != 0 {
		t.Fatalf("WriteEntry allocates %.2f times per entry", per)
	}
}
