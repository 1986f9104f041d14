package npmtest

import "testing"

func TestName_DropsTheVersionOnly(t *testing.T) {
	for spec, want := range map[string]string{
		"eventsource@4": "eventsource", "eventsource": "eventsource",
		"@playwright/test@1.60.0": "@playwright/test", "@playwright/test": "@playwright/test",
	} {
		if got := name(spec); got != want {
			t.Errorf("name(%q) = %q, want %q", spec, got, want)
		}
	}
}
