package testenv

import (
	"fmt"
	"testing"
	"time"
)

// Eventually polls cond until it returns true and fails the test when
// timeout passes first. msgAndArgs, when given, is a format string and its
// arguments describing what was awaited.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, msgAndArgs ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("testenv: condition not met within %s%s", timeout, describe(msgAndArgs))
		}
		time.Sleep(wait) // poll interval, not synchronisation
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
}

func describe(msgAndArgs []any) string {
	if len(msgAndArgs) == 0 {
		return ""
	}
	if f, ok := msgAndArgs[0].(string); ok {
		return ": " + fmt.Sprintf(f, msgAndArgs[1:]...)
	}
	return ": " + fmt.Sprint(msgAndArgs...)
}
