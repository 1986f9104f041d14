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

func TestList_FindSearchesTheVersionHeldInPlace(t *testing.T) {
	var l List[int]
	by := func(want int) func(int) int { return func(x int) int { return x - want } }
	if _, ok := l.Find("", by(1)); ok {
		t.Fatal("an empty List found an item")
	}
	l.Put("7", []int{2, 4, 6, 8})
	for _, want := range []int{2, 4, 6, 8} {
		if got, ok := l.Find("7", by(want)); !ok || got != want {
			t.Fatalf("Find(%d) = %d, %v", want, got, ok)
		}
	}
	if _, ok := l.Find("7", by(5)); ok {
		t.Fatal("Find answered an item the listing does not hold")
	}
	if _, ok := l.Find("8", by(4)); ok {
		t.Fatal("Find answered for another version")
	}
	var empty List[int]
	empty.Put("", []int{1})
	if _, ok := empty.Find("", by(1)); ok {
		t.Fatal("Find answered for the empty version")
	}
}
