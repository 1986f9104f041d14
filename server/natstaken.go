package server

import "strings"

// takenListener names the embedded NATS server's listener that err (an
// embednats.ErrPortInUse, which names the address) says is taken, as its
// flag and address: the one whose address err names, else every listener
// that is on. A listener that is off is never named.
func (s Config) takenListener(err error) string {
	var on, named []string
	for _, l := range []struct{ flag, addr string }{{"--nats-listen", s.NATSListen}, {"--leaf-listen", s.LeafListen}} {
		if l.addr == "" || l.addr == "off" {
			continue
		}
		on = append(on, l.flag+" "+l.addr)
		if err != nil && strings.Contains(err.Error(), l.addr) {
			named = append(named, l.flag+" "+l.addr)
		}
	}
	if len(named) == 0 {
		named = on
	}
	return strings.Join(named, " or ")
}
