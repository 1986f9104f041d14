package snapshot

import "testing"

func TestList_GetAnswersOnlyTheVersionHeldAndCopies(t *testing.T) {
	var l List[int]
	if _, ok := l.Get(""); ok {
		t.Fatal("an empty List answered")
	}
	l.Put("7", []int{1, 2})
	if _, ok := l.Get("8"); ok {
		t.Fatal("a List answered for another version")
	}
	got, ok := l.Get("7")
	if !ok || len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("Get = %v, %v", got, ok)
	}
	got[0] = 99
	if again, _ := l.Get("7"); again[0] != 1 {
		t.Fatal("a caller changed the listing held through its copy")
	}
}
