// Command hostile-exporters serves GPU exporters that misbehave, one mode
// a path, for `knee run --gpu-metrics-url` to read (issue 56): a run must
// end on time and write its result whatever they do.
//
//	hostile-exporters ADDR
//
// Paths: /hang (never answers), /trickle (a byte a second), /inf (1e308 W
// and an energy counter past float64), /nan, /negative, /many (200,000
// series), /zero (an endless body), /garbage, /flip (the counter jumping
// back and forth), /ok (one plausible GPU).
package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

func gpu(power, energy string) string {
	return fmt.Sprintf("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\",modelName=\"H100\",Hostname=\"n\"} %s\n"+
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-1\",modelName=\"H100\",Hostname=\"n\"} %s\n", power, energy)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hostile-exporters ADDR")
		os.Exit(2)
	}
	var tick atomic.Int64
	modes := map[string]func(w http.ResponseWriter){
		"/hang": func(http.ResponseWriter) { time.Sleep(time.Hour) },
		"/trickle": func(w http.ResponseWriter) {
			for _, b := range []byte(gpu("300", "1000")) {
				w.Write([]byte{b})
				w.(http.Flusher).Flush()
				time.Sleep(time.Second)
			}
		},
		"/inf":      func(w http.ResponseWriter) { fmt.Fprint(w, gpu("1e308", fmt.Sprint(1e308*float64(1+tick.Add(1))))) },
		"/nan":      func(w http.ResponseWriter) { fmt.Fprint(w, gpu("NaN", "NaN")) },
		"/negative": func(w http.ResponseWriter) { fmt.Fprint(w, gpu("-500", fmt.Sprint(-1000*tick.Add(1)))) },
		"/many": func(w http.ResponseWriter) {
			var b strings.Builder
			for i := range 200_000 {
				fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\"} 300\n", i, i)
			}
			fmt.Fprint(w, b.String())
		},
		"/zero": func(w http.ResponseWriter) {
			buf := make([]byte, 64<<10)
			for {
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		},
		"/garbage": func(w http.ResponseWriter) {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = byte(rand.IntN(256))
			}
			w.Write(b)
		},
		"/flip": func(w http.ResponseWriter) {
			e := 1e6
			if tick.Add(1)%2 == 0 {
				e = 1e12
			}
			fmt.Fprint(w, gpu("300", fmt.Sprint(e)))
		},
		"/ok": func(w http.ResponseWriter) { fmt.Fprint(w, gpu("300", fmt.Sprint(1e6+3e5*float64(tick.Add(1))))) },
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f, ok := modes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		f(w)
	})
	fmt.Println(http.ListenAndServe(os.Args[1], nil))
}
