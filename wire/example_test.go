package wire_test

import (
	"errors"
	"fmt"

	"github.com/rshub/rshub/wire"
)

func ExampleSign() {
	body := []byte("The quick brown fox jumps over the lazy dog")
	sig, _ := wire.Sign("sha256", "key", body)
	fmt.Println(sig)
	fmt.Println(wire.Verify(sig, "key", body))
	fmt.Println(errors.Is(wire.Verify(sig, "other key", body), wire.ErrSignatureMismatch))
	fmt.Println(errors.Is(wire.Verify("", "key", body), wire.ErrNotSigned))
	// Output:
	// sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8
	// <nil>
	// true
	// true
}

func ExampleParsePath() {
	p, ok := wire.ParsePath(wire.ChangeListFilePath("arxiv", 1201))
	fmt.Println(p.Doc == wire.DocChangeListFile, p.Channel, p.N, ok)
	// Output:
	// true arxiv 1201 true
}
