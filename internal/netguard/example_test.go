package netguard_test

import (
	"fmt"
	"net/netip"

	"github.com/rshub/rshub/internal/netguard"
)

func ExamplePolicy_Check() {
	p, _ := netguard.ParsePolicy([]string{"10.20.0.0/16"})
	for _, s := range []string{"::ffff:169.254.169.254", "10.20.0.5", "10.30.0.5", "8.8.8.8"} {
		fmt.Println(s, p.Check(netip.MustParseAddr(s)))
	}
	// Output:
	// ::ffff:169.254.169.254 netguard: refusing ::ffff:169.254.169.254: cloud metadata address
	// 10.20.0.5 <nil>
	// 10.30.0.5 netguard: refusing 10.30.0.5: private address
	// 8.8.8.8 <nil>
}
