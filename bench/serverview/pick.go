package serverview

import "bytes"

// pickFamilies keeps the lines of a Prometheus text exposition that
// belong to the named families (their HELP and TYPE comments and their
// samples, a histogram's or summary's suffixed ones included), so the
// gauges read every second do not parse every histogram's buckets: knee
// sim's page is about 100 KB, nearly all of it buckets. A line whose name
// it cannot read (a quoted UTF-8 name) is kept for the parser to judge.
func pickFamilies(b []byte, names map[string]bool) []byte {
	out := make([]byte, 0, 4096)
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i+1], b[i+1:]
		} else {
			b = nil
		}
		if name, ok := lineFamily(line); !ok || names[string(name)] || names[string(trimSuffixes(name))] {
			out = append(out, line...)
		}
	}
	return out
}

// lineFamily is the metric name a line is about: a sample's name, or
// the name a HELP or TYPE comment describes, quoted UTF-8 names read
// too. ok is false for a line whose name it cannot read (a quoted name
// with escapes); other comments and blank lines give none (dropped).
func lineFamily(line []byte) ([]byte, bool) {
	line = bytes.TrimLeft(line, " \t")
	if len(line) == 0 || line[0] == '\n' || line[0] == '\r' {
		return nil, true
	}
	if line[0] == '#' {
		rest := bytes.TrimLeft(line[1:], " \t")
		if !bytes.HasPrefix(rest, []byte("HELP")) && !bytes.HasPrefix(rest, []byte("TYPE")) {
			return nil, true
		}
		line = bytes.TrimLeft(rest[4:], " \t")
	} else if line[0] == '{' {
		line = bytes.TrimLeft(line[1:], " \t")
	}
	if len(line) > 0 && line[0] == '"' {
		end := bytes.IndexByte(line[1:], '"')
		if end < 0 || bytes.IndexByte(line[1:1+end], '\\') >= 0 {
			return nil, false
		}
		return line[1 : 1+end], true
	}
	end := bytes.IndexAny(line, "{ \t\r\n")
	if end < 0 {
		end = len(line)
	}
	return line[:end], true
}

// familySuffixes are the sample names a histogram or summary family's
// series carry.
var familySuffixes = [][]byte{[]byte("_bucket"), []byte("_sum"), []byte("_count"), []byte("_created"), []byte("_total")}

func trimSuffixes(name []byte) []byte {
	for _, s := range familySuffixes {
		if len(name) > len(s) && bytes.HasSuffix(name, s) {
			return name[:len(name)-len(s)]
		}
	}
	return name
}
