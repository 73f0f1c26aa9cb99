package feedback

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecode: any body is either a batch of 1..MaxBatch valid events that
// encodes back to itself, or an ErrEvent with no events; never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"events":[{"kind":"impression","surface":"search","query":"sky","item":"a","rank":1,"rerank":"poly","session":"s","client_time":"2026-01-02T03:04:05Z"}]}`))
	f.Add([]byte(`{"events":[{"kind":"click","surface":"groups","user":"u","item":"g","rank":2,"model_version":"v","session":"s","client_time":"2026-01-02T03:04:05.123+01:00"}]}`))
	f.Add([]byte(`{"events":[{"kind":"click","rank":NaN}]}`))
	f.Add([]byte(`{"events":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := Decode(bytes.NewReader(body), t0)
		if err != nil {
			if !errors.Is(err, ErrEvent) || got != nil {
				t.Fatalf("error %v (events %v): want an ErrEvent and no events", err, got)
			}
			return
		}
		if len(got) == 0 || len(got) > MaxBatch {
			t.Fatalf("%d events decoded", len(got))
		}
		for i := range got {
			if err := got[i].Validate(); err != nil || !got[i].ServerTime.Equal(t0) {
				t.Fatalf("event %d %+v: %v", i, got[i], err)
			}
			got[i].ServerTime = got[i].ServerTime.UTC()
		}
		// What the log stores reads back as the same events.
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var back []Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		for i := range back {
			if !back[i].ClientTime.Equal(got[i].ClientTime) {
				t.Fatalf("event %d: client time %v read back as %v", i, got[i].ClientTime, back[i].ClientTime)
			}
			back[i].ClientTime = got[i].ClientTime
		}
		if !reflect.DeepEqual(back, got) {
			t.Fatalf("stored %+v, read back %+v", got, back)
		}
	})
}
