package tap

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"strings"
)

// decodable reports whether the HTTP tap decodes a copy of a body with
// Content-Encoding ce for observation: gzip (x-gzip) and deflate (zlib, or
// the raw deflate some servers send under that name), one coding only.
func decodable(ce string) bool {
	switch strings.ToLower(strings.TrimSpace(ce)) {
	case "gzip", "x-gzip", "deflate":
		return true
	}
	return false
}

// inflateOut is the most a decoder hands the observer at once.
const inflateOut = 32 << 10

// inflater decodes the copy of one compressed body, pushed a chunk at a
// time by the observer goroutine, in a goroutine of its own (the
// decompressors of the standard library pull from a reader). The two
// take turns: while the observer is in feed, the decoder runs; while the
// decoder waits for input, only the observer runs. What it decodes comes
// back inflateOut bytes at a time and is not kept, so a small body that
// decodes into a huge one (a decompression bomb) costs no memory: the
// observer stops the decoder once the body is too long.
type inflater struct {
	in   chan []byte    // the next chunk of the compressed body; closed at its end
	out  chan inflation // from the decoder
	ack  chan struct{}  // the observer is done with the last inflation's data
	stop chan struct{}  // closed to make the decoder return
	done chan struct{}  // closed when it has
	cur  []byte         // what the decoder has not read yet of its chunk
	eof  bool           // in is closed (the decoder's)
	over bool           // the decoder has finished (the observer's)
	shut bool           // stop is closed (the observer's)
}

// inflation is what a decoder says: data decoded (wait for ack), it
// wants more input, or it has finished (err: nil at the body's end, else
// why it could not decode).
type inflation struct {
	data     []byte
	wantMore bool
	final    bool
	err      error
}

// newInflater starts a decoder for Content-Encoding ce (decodable).
func newInflater(ce string) *inflater {
	f := &inflater{in: make(chan []byte), out: make(chan inflation), ack: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	go f.run(strings.ToLower(strings.TrimSpace(ce)))
	f.await(nil) // until it asks for the first chunk
	return f
}

// errStopped ends a decoder the observer stopped.
var errStopped = errors.New("stopped")

// run is the decoder goroutine.
func (f *inflater) run(ce string) {
	defer close(f.done)
	var zr io.Reader
	var err error
	switch ce {
	case "deflate":
		// RFC 9110's deflate is the zlib format; some servers send raw
		// deflate under its name. A zlib header says which.
		br := bufio.NewReaderSize(f, 16)
		if h, perr := br.Peek(2); perr == nil && h[0]&0x0f == 8 && (uint(h[0])<<8|uint(h[1]))%31 == 0 {
			zr, err = zlib.NewReader(br)
		} else {
			zr = flate.NewReader(br)
		}
	default:
		zr, err = gzip.NewReader(f)
	}
	buf := make([]byte, inflateOut)
	for err == nil {
		var n int
		n, err = zr.Read(buf)
		if n > 0 && !f.send(inflation{data: buf[:n]}) {
			return
		}
	}
	if errors.Is(err, errStopped) {
		return
	}
	if err == io.EOF {
		err = nil
	}
	f.send(inflation{final: true, err: err})
}

// send hands x to the observer (and, for data, waits until it is done
// with it); false when the observer stopped the decoder.
func (f *inflater) send(x inflation) bool {
	select {
	case f.out <- x:
	case <-f.stop:
		return false
	}
	if x.data == nil {
		return true
	}
	select {
	case <-f.ack:
		return true
	case <-f.stop:
		return false
	}
}

// Read gives the decompressor the compressed bytes, asking the observer
// for the next chunk when they run out.
func (f *inflater) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		if f.eof {
			return 0, io.EOF
		}
		if !f.send(inflation{wantMore: true}) {
			return 0, errStopped
		}
		select {
		case c, ok := <-f.in:
			if !ok {
				f.eof = true
				return 0, io.EOF // (the decompressor says when that is too soon)
			}
			f.cur = c
		case <-f.stop:
			return 0, errStopped
		}
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

// ReadByte makes f an io.ByteReader, so that the decompressors read no
// further ahead than they need.
func (f *inflater) ReadByte() (byte, error) {
	var b [1]byte
	if _, err := f.Read(b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

// feed gives the decoder the next chunk of the compressed body (end: the
// body ended; chunk is then empty) and passes what it decodes of it to
// use, until it wants more or has finished; use returns false to stop it
// (the body is already too long). It returns the decoder's error when it
// finished on one, and whether it has finished.
func (f *inflater) feed(chunk []byte, end bool, use func([]byte) bool) (finished bool, err error) {
	if f.over {
		return true, nil
	}
	if end {
		close(f.in)
	} else {
		select {
		case f.in <- chunk:
		case <-f.done:
			f.over = true
			return true, nil
		}
	}
	return f.await(use)
}

// await passes on what the decoder decodes until it wants more input or
// has finished.
func (f *inflater) await(use func([]byte) bool) (bool, error) {
	for {
		var x inflation
		select {
		case x = <-f.out:
		case <-f.done:
			f.over = true
			return true, nil
		}
		switch {
		case x.wantMore:
			return false, nil
		case x.final:
			f.over = true
			<-f.done
			return true, x.err
		}
		keep := use == nil || use(x.data)
		if !keep {
			f.close()
			return true, nil
		}
		f.ack <- struct{}{}
	}
}

// close stops the decoder and waits for it to return.
func (f *inflater) close() {
	if f.shut {
		return
	}
	f.shut = true
	close(f.stop)
	<-f.done
	f.over = true
}
