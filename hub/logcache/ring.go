package logcache

// deque is a growable ring buffer: push at the back, pop at the front,
// random access by position from the front. It shrinks when mostly empty so
// that its memory follows its length.
type deque[T any] struct {
	buf  []T
	head int
	n    int
}

const minDeque = 8

func (d *deque[T]) len() int { return d.n }

// at returns a pointer to the i-th element from the front.
func (d *deque[T]) at(i int) *T { return &d.buf[(d.head+i)%len(d.buf)] }

func (d *deque[T]) front() *T { return d.at(0) }

func (d *deque[T]) push(v T) {
	if d.n == len(d.buf) {
		d.resize(max(minDeque, 2*len(d.buf)))
	}
	d.buf[(d.head+d.n)%len(d.buf)] = v
	d.n++
}

func (d *deque[T]) pop() T {
	var zero T
	v := d.buf[d.head]
	d.buf[d.head] = zero // release what the element references
	d.head = (d.head + 1) % len(d.buf)
	d.n--
	if len(d.buf) > minDeque && d.n <= len(d.buf)/4 {
		d.resize(len(d.buf) / 2)
	}
	return v
}

func (d *deque[T]) resize(size int) {
	buf := make([]T, size)
	for i := range d.n {
		buf[i] = *d.at(i)
	}
	d.buf, d.head = buf, 0
}

// search returns the smallest position i in [0, len) for which f(at(i)) is
// true, assuming f is false then true along the deque; len when none.
func (d *deque[T]) search(f func(*T) bool) int {
	lo, hi := 0, d.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !f(d.at(m)) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
