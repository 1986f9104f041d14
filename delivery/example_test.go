package delivery_test

import (
	"fmt"

	"github.com/rshub/rshub/delivery"
)

func ExampleParseSchedule() {
	s, _ := delivery.ParseSchedule("1s,x2,max=1h,attempts=15,jitter=0")
	for _, n := range []int{1, 2, 3, 12, 13, 14, 15} {
		d, ok := s.Delay(n, 0.5)
		fmt.Println(n, d, ok)
	}
	// Output:
	// 1 1s true
	// 2 2s true
	// 3 4s true
	// 12 34m8s true
	// 13 1h0m0s true
	// 14 1h0m0s true
	// 15 0s false
}
