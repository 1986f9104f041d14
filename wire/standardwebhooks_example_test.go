package wire_test

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rshub/rshub/wire"
)

// A hub signs a delivery under the Standard Webhooks scheme; the
// destination verifies the three header values, with its own clock.
func ExampleSignStandard() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	id, at := "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0)
	sig, _ := wire.SignStandard(secret, id, at, body)
	fmt.Println(sig)

	now := at.Add(time.Minute) // the receiver's clock
	_, err := wire.VerifyStandard(secret, id, strconv.FormatInt(at.Unix(), 10), sig, body, now, wire.DefaultTolerance)
	fmt.Println(err)
	// Output:
	// v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
	// <nil>
}
