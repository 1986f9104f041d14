package access

import "testing"

// FuzzParseJWKS feeds hostile key sets to the parser: nothing panics and
// every key kept verifies at least one algorithm.
func FuzzParseJWKS(f *testing.F) {
	f.Add(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"a","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`)
	f.Add(`{"keys":[{"kty":"EC","crv":"P-256","kid":"b","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","alg":"ES256"}]}`)
	f.Add(`{"keys":[{"kty":"RSA","kid":"c","n":"AQAB","e":"AQAB","use":"enc"}]}`)
	f.Add(`{"keys":"none"}`)
	f.Fuzz(func(t *testing.T, body string) {
		keys, err := parseJWKS([]byte(body))
		if err != nil {
			return
		}
		for kid, k := range keys {
			if len(k.algs) == 0 {
				t.Fatalf("key %q verifies no algorithm", kid)
			}
		}
	})
}
