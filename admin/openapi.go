package admin

import (
	_ "embed"
	"io"
	"net/http"
)

// openapiDoc is the contract of the admin API and of the hub endpoints an
// integrator calls (OpenAPI 3.1): served at GET /admin/openapi.json, with
// no token (it holds no secret), and checked against real answers of every
// admin route by the package's tests.
//
//go:embed openapi.json
var openapiDoc string

// serveOpenAPI answers the contract.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = io.WriteString(w, openapiDoc)
}
