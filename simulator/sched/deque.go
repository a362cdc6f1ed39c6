package sched

// seqDeque is the waiting queue: arrivals join the back, preempted
// sequences go to the front, admission pops the front. A slice would copy
// the whole queue on every preemption.
type seqDeque struct {
	buf        []*Seq
	head, size int
}

func (d *seqDeque) len() int { return d.size }

func (d *seqDeque) at(i int) *Seq { return d.buf[(d.head+i)%len(d.buf)] }

func (d *seqDeque) set(i int, s *Seq) { d.buf[(d.head+i)%len(d.buf)] = s }

func (d *seqDeque) grow() {
	if d.size < len(d.buf) {
		return
	}
	nb := make([]*Seq, max(16, 2*len(d.buf)))
	for i := 0; i < d.size; i++ {
		nb[i] = d.at(i)
	}
	d.buf, d.head = nb, 0
}

func (d *seqDeque) pushBack(s *Seq) {
	d.grow()
	d.buf[(d.head+d.size)%len(d.buf)] = s
	d.size++
}

func (d *seqDeque) pushFront(s *Seq) {
	d.grow()
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = s
	d.size++
}

func (d *seqDeque) front() *Seq { return d.buf[d.head] }

func (d *seqDeque) popFront() *Seq {
	s := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	return s
}

// removeDone deletes the sequences marked done (aborted by their
// clients), keeping the order of the rest, in one pass.
func (d *seqDeque) removeDone() {
	kept := 0
	for i := 0; i < d.size; i++ {
		if s := d.at(i); !s.done {
			d.buf[(d.head+kept)%len(d.buf)] = s
			kept++
		}
	}
	for i := kept; i < d.size; i++ {
		d.buf[(d.head+i)%len(d.buf)] = nil
	}
	d.size = kept
}

// insertOrdered puts s after every sequence not after it by less, in a
// queue kept in less's order (the priority policy's).
func (d *seqDeque) insertOrdered(s *Seq, less func(a, b *Seq) bool) {
	d.grow()
	// Find the place: the first sequence s goes before.
	lo, hi := 0, d.size
	for lo < hi {
		mid := (lo + hi) / 2
		if less(s, d.at(mid)) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	d.size++
	for i := d.size - 1; i > lo; i-- {
		d.buf[(d.head+i)%len(d.buf)] = d.at(i - 1)
	}
	d.buf[(d.head+lo)%len(d.buf)] = s
}

// removeAt takes out the sequence at i, keeping the order of the rest.
func (d *seqDeque) removeAt(i int) *Seq {
	s := d.at(i)
	for j := i; j < d.size-1; j++ {
		d.buf[(d.head+j)%len(d.buf)] = d.at(j + 1)
	}
	d.buf[(d.head+d.size-1)%len(d.buf)] = nil
	d.size--
	return s
}
