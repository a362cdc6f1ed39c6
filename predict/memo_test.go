package predict

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/kneebench/knee/simulator/sched"
)

// TestMemoKeepsWhatWasSaid: what a memo keeps compact is said again field
// for field, in any page and at any index; what it cannot keep so (ids
// not turned into a chain, a figure past int32) is said afresh instead of
// kept wrong.
func TestMemoKeepsWhatWasSaid(t *testing.T) {
	full := said{tag: 3, maxTokens: 128, class: 2, share: 0.25, prompt: 640, output: 128, thinking: 7, length: true, reported: true,
		tool: "get_weather", inputs: 0, err: errors.New("refused"), routeKey: 0xfeed,
		sr: sched.Request{PromptLen: 512, OutputLen: 128, Chain: []uint64{1, 2, 3}, ChainBlock: 16, EncoderFLOPs: 1.5e9, Priority: -1, Adapter: 4}}
	m := &Memo{}
	for _, i := range []int{0, 1, memoPageSize - 1, memoPageSize, 5*memoPageSize + 17} {
		s := full
		s.tag = i
		m.put(i, &s)
		got, ok := m.get(i)
		if !ok || !reflect.DeepEqual(got, s) {
			t.Errorf("index %d: kept %+v (found %v), said %+v", i, got, ok, s)
		}
	}
	if _, ok := m.get(2); ok {
		t.Error("an index never said is found")
	}
	if _, ok := m.get(-1); ok {
		t.Error("a negative index is found")
	}
	withIDs := full
	withIDs.sr.IDs = []uint64{9, 9}
	huge := full
	huge.prompt = math.MaxInt32 + 1
	for i, s := range []said{withIDs, huge} {
		m.put(100+i, &s)
		if _, ok := m.get(100 + i); ok {
			t.Errorf("case %d kept though it cannot be kept compact", i)
		}
	}
}
