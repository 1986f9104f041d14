package testproc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildTool builds a program that tests run but the module does not import
// (a trace collector, for instance): pkg, a main package required by the
// separate tool module in tools/<tool> (a go.mod with a tool directive,
// kept out of the main go.mod). The binary is built once into the user's
// cache directory (RSHUB_TOOLS_CACHE overrides it), keyed by the tool
// module's go.sum, so later runs, and other packages' tests, reuse it; a
// changed go.sum builds anew. It returns the binary's path.
func BuildTool(tool, pkg string) (string, error) {
	modDir := filepath.Join(moduleRoot(), "tools", tool)
	sum, err := os.ReadFile(filepath.Join(modDir, "go.sum"))
	if err != nil {
		return "", fmt.Errorf("tool %s: %w", tool, err)
	}
	root := os.Getenv("RSHUB_TOOLS_CACHE")
	if root == "" {
		if root, err = os.UserCacheDir(); err != nil {
			root = os.TempDir()
		}
		root = filepath.Join(root, "rshub-tools")
	}
	key := sha256.Sum256(sum)
	bin := filepath.Join(root, tool+"-"+hex.EncodeToString(key[:6]), filepath.Base(pkg))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid()) // renamed when complete: a build cut short leaves no binary
	cmd := exec.Command("go", "build", "-o", tmp, pkg)
	cmd.Dir = modDir
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("go build %s (in tools/%s): %v\n%s", pkg, tool, err, out)
	}
	return bin, os.Rename(tmp, bin)
}
