package changefeed

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzSniff checks that Sniff never misses what Parse recognises: every
// document Parse accepts is sniffed as ResourceSync, and every DTD Parse
// refuses is sniffed as a DTD, so the hub cannot pass either on as foreign
// content.
func FuzzSniff(f *testing.F) {
	for _, file := range specFixtures(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(xmlDecl + "<!DOCTYPE urlset>" + rootOpen + notifMD + "</urlset>"))
	f.Add([]byte(`<feed xmlns="http://www.w3.org/2005/Atom"><rs:md xmlns:rs="http://www.openarchives.org/rs/terms/"/></feed>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := Sniff(body)
		_, err := Parse(bytes.NewReader(body), Options{Mode: Lenient})
		if err == nil && !s.ResourceSync {
			t.Fatalf("Parse accepts the body but Sniff says it is not ResourceSync: %+v", s)
		}
		if errors.Is(err, RuleDTD) && !s.DTD {
			t.Fatalf("Parse refuses a DTD but Sniff did not see it: %+v", s)
		}
	})
}
