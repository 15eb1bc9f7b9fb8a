package stderr

// deque is a growable ring of lines: push at the back, pop at the front.
// Index 0 is the oldest line.
type deque struct {
	buf  []line
	head int
	n    int
}

func (d *deque) len() int { return d.n }

func (d *deque) at(i int) *line { return &d.buf[(d.head+i)%len(d.buf)] }

func (d *deque) push(l line) {
	if d.n == len(d.buf) {
		buf := make([]line, max(2*len(d.buf), 64))
		for i := range d.n {
			buf[i] = *d.at(i)
		}
		d.buf, d.head = buf, 0
	}
	d.buf[(d.head+d.n)%len(d.buf)] = l
	d.n++
}

func (d *deque) pop() line {
	l := d.buf[d.head]
	d.buf[d.head] = line{}
	d.head = (d.head + 1) % len(d.buf)
	d.n--
	return l
}
