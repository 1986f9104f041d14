package pull

import (
	"io"
	"net/http"
	"strings"

	"github.com/rshub/rshub/hub"
)

// serveRobots serves robots.txt at the hub's root: every crawler is welcome,
// and a Sitemap line names the Source Description and each channel's
// Capability List, one of the entry points a Destination may start from
// (ResourceSync §12.2).
func (p *Pull) serveRobots(w http.ResponseWriter, r *http.Request) {
	chans, err := p.channels(r.Context(), false)
	if err != nil { // logged by the health, once per outage
		p.unavailable(w, "channels cannot be listed right now")
		return
	}
	chans = p.visible(w, r, chans)
	parts := []any{"robots", p.cfgTag()}
	for _, ch := range chans {
		parts = append(parts, ch.Name)
	}
	p.serve(w, r, doc{
		etag:  tag(parts...),
		cache: shortLived,
		ctype: "text/plain; charset=utf-8",
		write: func(out io.Writer) error {
			_, err := io.WriteString(out, p.robots(chans))
			return err
		},
	})
}

// robots returns the text of robots.txt for chans.
func (p *Pull) robots(chans []hub.Channel) string {
	var b strings.Builder
	b.WriteString("# rshub: ResourceSync documents (Source Description, one Capability List per channel)\n")
	b.WriteString("User-agent: *\nDisallow:\n\n")
	b.WriteString("Sitemap: " + p.descriptionURL() + "\n")
	for _, ch := range chans {
		b.WriteString("Sitemap: " + p.capabilityURL(ch.Name) + "\n")
	}
	return b.String()
}
